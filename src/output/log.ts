import { createConsola, type ConsolaInstance, type LogObject } from "consola/core";
import { terminalText } from "../mail/terminal-text.ts";
import { writeStderr } from "./streams.ts";

const useColour = (): boolean => process.stderr.isTTY === true && !process.env.NO_COLOR;

const LABELS: Record<string, { text: string; colour: number } | undefined> = {
  fatal: { text: "error:", colour: 31 },
  error: { text: "error:", colour: 31 },
  warn: { text: "warning:", colour: 33 },
};

function formatLine(logObj: LogObject): string {
  // Diagnostics quote paths, names and log excerpts: whatever they carry, it must not act on the terminal.
  const text = terminalText(logObj.args.map((arg) => (typeof arg === "string" ? arg : String(arg))).join(" "));
  const label = LABELS[logObj.type];
  if (!label) return text + "\n";
  const prefix = useColour() ? `\u001b[${label.colour}m${label.text}\u001b[39m` : label.text;
  return `${prefix} ${text}\n`;
}

/**
 * The one consola instance: diagnostics only, always on stderr (consola's default reporters send info to stdout
 * and pick their style from CI detection), one line per message, colour only on a terminal without NO_COLOR.
 */
export const log: ConsolaInstance = createConsola({
  level: 3,
  // consola holds back a line repeated within a second: every diagnostic we print is meant to be seen.
  throttle: 0,
  reporters: [{ log: (logObj) => writeStderr(formatLine(logObj)) }],
});
