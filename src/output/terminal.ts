/** The width to fit list lines to: stdout's columns when it is a terminal, else undefined (cut by length instead). */
export function terminalWidth(): number | undefined {
  const stdout = process.stdout as { isTTY?: boolean; columns?: number };
  return stdout.isTTY && typeof stdout.columns === "number" && stdout.columns > 20 ? stdout.columns : undefined;
}
