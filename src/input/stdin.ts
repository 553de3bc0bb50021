import { fstatSync, readSync } from "node:fs";
import { AgentmailError } from "../mail/errors.ts";

/**
 * Whether a message can come from stdin: it is open and not a terminal (a terminal would wait for typing).
 * node:tty is imported here, not at the top: loading it costs ~2.3 ms, which a send with a message never pays.
 */
export async function stdinIsPiped(fd = 0): Promise<boolean> {
  try {
    fstatSync(fd);
  } catch {
    return false;
  }
  const { isatty } = await import("node:tty");
  return !isatty(fd);
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Reads stdin to EOF, refusing more than `limit` bytes as soon as they arrive (reading 100 MiB whole costs
 * 332 MB), and refusing invalid UTF-8 instead of silently turning it into U+FFFD. A leading BOM is kept.
 */
export function readStdin(limit: number, fd = 0): string {
  const chunks: Buffer[] = [];
  let total = 0;
  const chunk = Buffer.allocUnsafe(64 * 1024);
  for (;;) {
    let n: number;
    try {
      n = readSync(fd, chunk, 0, chunk.length, null);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EAGAIN") {
        Atomics.wait(pause, 0, 0, 2);
        continue;
      }
      if (code === "EOF") break;
      throw new AgentmailError("io", `could not read the message from stdin (${code}); pass it as an argument instead`);
    }
    if (n === 0) break;
    total += n;
    if (total > limit)
      throw new AgentmailError("message_too_large", `the message on stdin is over the ${limit}-byte limit; send a path to a file instead`);
    chunks.push(Buffer.from(chunk.subarray(0, n)));
  }
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new AgentmailError("invalid_message", "the message on stdin is not valid UTF-8; send text");
  }
}
