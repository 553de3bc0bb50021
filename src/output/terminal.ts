import { fstatSync } from "node:fs";

interface Columns {
  isTTY?: boolean;
  columns?: number;
}

/** The usable width of a terminal stream, or undefined when it is not one (or too narrow to fit a line to). */
export function widthOf(stream: Columns): number | undefined {
  return stream.isTTY && typeof stream.columns === "number" && stream.columns > 20 ? stream.columns : undefined;
}

/** Whether fd is a character device (a terminal, or /dev/null): the only case worth asking for columns. */
export function mayBeTerminal(fd: number): boolean {
  try {
    return fstatSync(fd).isCharacterDevice();
  } catch {
    return false;
  }
}

/**
 * The width to fit list lines to: stdout's columns when it is a terminal, else undefined (cut by length instead).
 * A cheap fstat comes first: touching process.stdout builds Bun's stream objects, which a pipe, what agents read
 * through, never needs.
 */
export function terminalWidth(): number | undefined {
  return mayBeTerminal(1) ? widthOf(process.stdout) : undefined;
}

/**
 * Whether a person reads stderr: it is a terminal, not a pipe a hook captures. The cheap fstat comes first, so
 * node:tty loads only for a character device.
 */
export async function stderrIsTerminal(): Promise<boolean> {
  return mayBeTerminal(2) && (await import("node:tty")).isatty(2);
}
