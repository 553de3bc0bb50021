/**
 * A long mailbox written directly, the way the store writes one, in about a second per million lines: old read
 * messages of 185 bytes a line (the size the cleanup targets assume), ids `Big` + 5 base-36 digits (unique up to 60
 * million). Every line is one template with its digits patched in: building strings took twenty times as long.
 */
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";

const LINES_PER_WRITE = 20_000;

const DIGITS = Buffer.from("0123456789abcdefghijklmnopqrstuvwxyz");

/** Writes `value` in `base` as `width` digits, leading zeros included, at `at`. */
function digits(into: Buffer, at: number, width: number, value: number, base: number): void {
  for (let i = width - 1, rest = value; i >= 0; i--, rest = Math.floor(rest / base)) into[at + i] = DIGITS[rest % base]!;
}

export function writeOldReadLines(path: string, to: string, count: number): void {
  const template = Buffer.from(
    `{"id":"Big#####","from":"alice","to":${JSON.stringify(to)},"message":"an old message, read long ago: number ######## of the pile","read_flag":true,"created_at":"2020-01-01T00:00:00.000Z","x":"${"-".repeat(Math.max(0, 9 - to.length))}"}\n`,
  );
  const idAt = template.indexOf("#####");
  const numberAt = template.indexOf("########");
  const block = Buffer.alloc(template.length * LINES_PER_WRITE);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const fd = openSync(path, "a", 0o600);
  try {
    for (let from = 0; from < count; from += LINES_PER_WRITE) {
      const lines = Math.min(LINES_PER_WRITE, count - from);
      for (let i = 0; i < lines; i++) {
        const at = i * template.length;
        template.copy(block, at);
        digits(block, at + idAt, 5, from + i, 36);
        digits(block, at + numberAt, 8, from + i, 10);
      }
      writeSync(fd, block, 0, lines * template.length);
    }
  } finally {
    closeSync(fd);
  }
}
