/**
 * The cursor of a long mailbox that has none: its first receive, or one after something removed it. Without one,
 * a receive would read the whole mailbox into memory and pass every line in JavaScript, keeping each id (a
 * million-line mailbox: 10–37 s and up to 1.7 GB). Here the mailbox is read a chunk at a time and only the run of
 * lines at its start that are read messages is passed, as receive would pass them: lines whose exact scan says read,
 * and lines of the plain shape our writers give a read message (below), no `false` in them. Each such
 * line's delivery key goes into the id set as a fingerprint only (8 bytes), and the cursor is written just after
 * the last of them; the receive then starts there, as it would after any earlier receive.
 *
 * The id set may hold more than a receive passing the same lines would have put in it (the id of a line that is no
 * message), never less: a "maybe" from the set is confirmed against the history (cursor.ts), so an extra
 * fingerprint costs time, while a missing one could deliver a repeated id twice. So a line is read by the quick
 * path below only when its key is certain (no backslash, the id first, no second `"id"`, no `"moves"`, one
 * `"read_flag":true`); every other line is scanned exactly (mail/message.ts scanLine), as receive scans it. The run
 * ends at the first line that is not read: an unread message, or a line that is none, which receive reports.
 */
import { closeSync, fstatSync, readSync } from "node:fs";
import { keyBytes, scanLine } from "../../mail/message.ts";
import { cursorHolds, writeCursor } from "./cursor.ts";
import { openForRead, readRange } from "../durable/files.ts";
import { Fingerprints } from "./id-index.ts";
import { Next } from "./line-fields.ts";

const CHUNK_BYTES = 4 << 20;
const NEWLINE = 0x0a;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const FALSE = Buffer.from("false");
const ID_OPENING = Buffer.from('{"id":"');
const ID_KEY = Buffer.from('"id"');
const MOVES_KEY = Buffer.from('"moves"');
const READ_FLAG_KEY = Buffer.from('"read_flag":');
const TRUE = Buffer.from("true");

/** What a chunk is searched for. */
interface Needles {
  falses: Next;
  backslashes: Next;
  ids: Next;
  moves: Next;
  flags: Next;
}

const needlesIn = (chunk: Buffer): Needles => ({
  falses: new Next(chunk, FALSE),
  backslashes: new Next(chunk, BACKSLASH),
  ids: new Next(chunk, ID_KEY),
  moves: new Next(chunk, MOVES_KEY),
  flags: new Next(chunk, READ_FLAG_KEY),
});

/** Whether `chunk` holds `expected` at `at` (a loop: Buffer#compare's call costs more than these few bytes). */
function holdsAt(chunk: Buffer, at: number, expected: Buffer): boolean {
  for (let i = 0; i < expected.length; i++) if (chunk[at + i] !== expected[i]) return false;
  return true;
}

/**
 * Where the delivery key of a line of the plain shape our writers give a read message (see the top of this file)
 * ends (its closing quote; it starts at the id's opening quote, start + 6), or -1.
 */
function plainKeyEnd(chunk: Buffer, start: number, end: number, needles: Needles): number {
  if (needles.falses.within(start, end) || needles.backslashes.within(start, end) || needles.moves.within(start, end)) return -1;
  if (end - start < ID_OPENING.length + 2 || !holdsAt(chunk, start, ID_OPENING)) return -1;
  // No backslash, so the id's literal ends at the next quote, and no string can hold a quoted key.
  const close = chunk.indexOf(QUOTE, start + ID_OPENING.length);
  if (close === -1 || close >= end || needles.ids.within(close, end)) return -1;
  const flag = needles.flags.from(close);
  if (flag === -1 || flag >= end || !holdsAt(chunk, flag + READ_FLAG_KEY.length, TRUE)) return -1;
  if (needles.flags.within(flag + READ_FLAG_KEY.length, end)) return -1;
  return close;
}

/**
 * Writes the cursor of the mailbox at `path` (see the top of this file). Call holding its receive lock, having
 * found no cursor; does nothing when the mailbox begins with a line receive might deliver.
 */
export function buildColdCursor(path: string): void {
  const file = openForRead(path);
  if (!file) return;
  try {
    const { ino, size } = fstatSync(file.fd);
    if (cursorHolds(path, file.fd, ino, size)) return;
    const keys = new Fingerprints();
    let buffer = Buffer.alloc(Math.min(CHUNK_BYTES, size));
    let at = 0;
    let lastStart = -1;
    let lastEnd = -1;
    scan: while (at < size) {
      const length = readSync(file.fd, buffer, 0, Math.min(buffer.length, size - at), at);
      if (length === 0) break;
      const chunk = buffer.subarray(0, length);
      const whole = chunk.lastIndexOf(NEWLINE) + 1;
      if (whole === 0) {
        // A line longer than the buffer: read it whole next time, or it is the unfinished last line.
        if (at + length >= size) break;
        buffer = Buffer.alloc(buffer.length * 2);
        continue;
      }
      const needles = needlesIn(chunk);
      for (let start = 0; start < whole; ) {
        const end = chunk.indexOf(NEWLINE, start);
        const plain = plainKeyEnd(chunk, start, end, needles);
        if (plain !== -1) keys.add(chunk, start + ID_OPENING.length - 1, plain + 1);
        else {
          const scan = scanLine(chunk, start, end);
          // The first line that is not read (unread, or no message, which receive reports): receive decides it,
          // and every line after it.
          if (!scan.flag?.read) break scan;
          const key = keyBytes(chunk, scan);
          if (key !== null) keys.add(key);
        }
        lastStart = at + start;
        lastEnd = at + end + 1;
        start = end + 1;
      }
      at += whole;
    }
    if (lastStart === -1) return;
    writeCursor(path, ino, { start: lastStart, bytes: readRange(file.fd, lastStart, lastEnd) }, keys.table());
  } finally {
    closeSync(file.fd);
  }
}
