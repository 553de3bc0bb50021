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

/**
 * Every `every`-th line (the first, then every `every` lines after it) is another message: these fields over the old
 * read one's, and its body ending in `word` instead of "pile" (a listing's many results: a word searched for, a
 * sender, unread mail, a thread).
 */
export interface Marked {
  every: number;
  word?: string;
  fields?: Record<string, unknown>;
}

/** A line's template: `#####` where its id's digits go, `########` where its number's go. */
function template(
  to: string,
  prefix: string,
  word: string,
  fields: Record<string, unknown>,
): { bytes: Buffer; idAt: number; numberAt: number } {
  const record = {
    id: `${prefix}#####`,
    from: "alice",
    to,
    message: `an old message, read long ago: number ######## of the ${word}`,
    read_flag: true,
    created_at: "2020-01-01T00:00:00.000Z",
    ...fields,
    x: "-".repeat(Math.max(0, 9 - to.length)),
  };
  const bytes = Buffer.from(`${JSON.stringify(record)}\n`);
  return { bytes, idAt: bytes.indexOf("#####"), numberAt: bytes.indexOf("########") };
}

/** `prefix`: the first three characters of every id (another mailbox's lines, told apart from these). */
export function writeOldReadLines(path: string, to: string, count: number, marked?: Marked, prefix = "Big"): void {
  const plain = template(to, prefix, "pile", {});
  const other = marked ? template(to, prefix, marked.word ?? "pile", marked.fields ?? {}) : plain;
  const block = Buffer.alloc(Math.max(plain.bytes.length, other.bytes.length) * LINES_PER_WRITE);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const fd = openSync(path, "a", 0o600);
  try {
    for (let from = 0; from < count; from += LINES_PER_WRITE) {
      const lines = Math.min(LINES_PER_WRITE, count - from);
      let at = 0;
      for (let i = 0; i < lines; i++) {
        const line = marked && (from + i) % marked.every === 0 ? other : plain;
        line.bytes.copy(block, at);
        digits(block, at + line.idAt, 5, from + i, 36);
        digits(block, at + line.numberAt, 8, from + i, 10);
        at += line.bytes.length;
      }
      writeSync(fd, block, 0, at);
    }
  } finally {
    closeSync(fd);
  }
}
