import { closeSync, fstatSync, ftruncateSync, rmSync } from "node:fs";
import { fnv1a } from "./fnv1a.ts";
import { isDecimal } from "../../mail/ids.ts";
import { openForRead, openForUpdateOrCreate, readRange, writeFully } from "../durable/files.ts";
import { buildTable, SLOT_BYTES, tableAdd, tableHas, type PassedIds } from "./id-index.ts";

const NEWLINE = 0x0a;
const decoder = new TextDecoder();

/**
 * The cursor is kept beside each mailbox, in `<mailbox>.cursor`: where the unread part starts, and the set of ids
 * used before that point. Receive starts there, so its cost does not grow with the read history, and asks the set
 * whether a new message's id was used before, so an id is delivered once however long ago its first line was read.
 *
 * The file is a fixed-width header line, then the id set (see id-index.ts). The header names the mailbox's inode,
 * the last line passed (its start, and a hash of its bytes), the offset just after it, and where the id set is,
 * its size and how many ids it holds; every line before the offset is read, not a message, or a skipped repeat.
 * The header is trusted only when the inode is the same (cleanup's rewrite makes a new one) and the last line
 * passed is still there byte for byte, so a mailbox truncated, replaced or rewritten in place, or its last
 * received message marked unread by hand, is scanned from the start instead, and the id set rebuilt with it.
 *
 * Only a holder of the mailbox's receive lock writes it: ids are added first, then the header is rewritten in place
 * with one pwrite. A process killed in between leaves the old header and a set that may hold ids of lines after
 * it: lines that were read, and are passed again without asking. A reader without the lock sees the old header
 * or the new one.
 */
export interface Cursor {
  ino: number;
  lineStart: number;
  offset: number;
  lineHash: string;
  tableAt: number;
  slots: number;
  count: number;
}

const HEADER_BYTES = 128;
const HEADER_TAG = "c3";
const HEX = "0123456789abcdef";

/** Every character is one of `digits`, and there are `length` of them (any, if not given, but at least one). */
function madeOf(text: string, digits: string, length = text.length): boolean {
  if (text.length === 0 || text.length !== length) return false;
  for (let i = 0; i < text.length; i++) if (!digits.includes(text[i]!)) return false;
  return true;
}

/**
 * `c3 <ino> <line start> <offset> <line hash> <table at> <slots> <count>`, padded with spaces, then a newline.
 */
function parseHeader(text: string): Cursor | null {
  if (!text.endsWith("\n")) return null;
  let body = text.slice(0, -1);
  while (body.endsWith(" ")) body = body.slice(0, -1);
  const fields = body.split(" ");
  if (fields.length !== 8 || fields[0] !== HEADER_TAG || !madeOf(fields[4]!, HEX, 8)) return null;
  const numbers: number[] = [];
  for (const at of [1, 2, 3, 5, 6, 7]) {
    if (!isDecimal(fields[at]!)) return null;
    numbers.push(Number(fields[at]));
  }
  const [ino, lineStart, offset, tableAt, slots, count] = numbers as [number, number, number, number, number, number];
  return { ino, lineStart, offset, lineHash: fields[4]!, tableAt, slots, count };
}

export const cursorPathOf = (mailbox: string) => `${mailbox}.cursor`;

/** FNV-1a, 32 bits: tells whether the last line passed is still the same bytes. */
export function lineHash(bytes: Uint8Array): string {
  return fnv1a(bytes).toString(16).padStart(8, "0");
}

function readHeader(mailbox: string): Cursor | null {
  try {
    const file = openForRead(cursorPathOf(mailbox));
    if (!file) return null;
    try {
      const cursor = parseHeader(decoder.decode(readRange(file.fd, 0, HEADER_BYTES)));
      if (!cursor) return null;
      const tableFits = cursor.tableAt >= HEADER_BYTES && cursor.tableAt + cursor.slots * SLOT_BYTES <= file.stat.size;
      return tableFits && cursor.slots > 0 && (cursor.slots & (cursor.slots - 1)) === 0 ? cursor : null;
    } finally {
      closeSync(file.fd);
    }
  } catch {
    return null;
  }
}

/** Where unread mail can start: `bytes` are the mailbox from file offset `base` to its end. */
export interface Region {
  base: number;
  bytes: Uint8Array;
  /** The cursor the region starts at; null when it starts at the beginning of the mailbox. */
  cursor: Cursor | null;
}

export function unreadRegion(mailbox: string, fd: number, ino: number, size: number): Region {
  const cursor = readHeader(mailbox);
  if (cursor && cursor.ino === ino && cursor.lineStart < cursor.offset && cursor.offset <= size) {
    const bytes = readRange(fd, cursor.lineStart, size);
    const lineLength = cursor.offset - cursor.lineStart;
    if (bytes[lineLength - 1] === NEWLINE && lineHash(bytes.subarray(0, lineLength)) === cursor.lineHash) {
      return { base: cursor.offset, bytes: bytes.subarray(lineLength), cursor };
    }
  }
  return { base: 0, bytes: readRange(fd, 0, size), cursor: null };
}

/**
 * Whether the id set says an id (canonical JSON text, UTF-8) may have been used before the region: a "maybe" that
 * the caller confirms against the history. False when there is no set (the region starts at the beginning).
 */
export function maybeUsedBefore(mailbox: string, region: Region, id: Uint8Array): boolean {
  if (!region.cursor || region.cursor.count === 0) return false;
  try {
    const file = openForRead(cursorPathOf(mailbox));
    if (!file) return false;
    try {
      return tableHas({ fd: file.fd, at: region.cursor.tableAt, slots: region.cursor.slots }, id);
    } finally {
      closeSync(file.fd);
    }
  } catch {
    // An unreadable set cannot say "maybe": the history would have to be searched for every message.
    return true;
  }
}

/** The line the cursor moves past, in file offsets, with its bytes as they now are on disk. */
export interface PassedLine {
  start: number;
  bytes: Uint8Array;
}

/** Adds ids to the set of `cursor` in place, or writes a new, larger set at the end of the file. */
function storeIds(fd: number, cursor: Cursor | null, ids: Uint8Array[]): { tableAt: number; slots: number; count: number } {
  if (cursor) {
    const table = { fd, at: cursor.tableAt, slots: cursor.slots };
    const count = tableAdd(table, cursor.count, ids);
    if (count !== false) return { tableAt: cursor.tableAt, slots: cursor.slots, count };
  } else ftruncateSync(fd, 0); // No header until the new set is whole: a rebuild cut short leaves no cursor.
  const old = cursor ? readRange(fd, cursor.tableAt, cursor.tableAt + cursor.slots * SLOT_BYTES) : null;
  const built = buildTable(old, ids);
  // A new set goes after everything in the file, never over the one the header still names.
  const tableAt = Math.max(HEADER_BYTES, fstatSync(fd).size);
  writeFully(fd, built.bytes, tableAt);
  return { tableAt, slots: built.slots, count: built.count };
}

/**
 * Moves the cursor to just after `last`, adding the ids of the lines passed since the region's start to the set.
 * Best effort: a cursor that cannot be written (a symlink or FIFO planted at its path, a full disk) only costs the
 * next receive a scan from where the old cursor was, or from the start.
 */
export function advanceCursor(mailbox: string, region: Region, ino: number, last: PassedLine, passed: PassedIds): void {
  try {
    const { fd } = openForUpdateOrCreate(cursorPathOf(mailbox));
    try {
      const { tableAt, slots, count } = storeIds(fd, region.cursor, passed.ids);
      const lastLine = `${last.start} ${last.start + last.bytes.length} ${lineHash(last.bytes)}`;
      const header = `${HEADER_TAG} ${ino} ${lastLine} ${tableAt} ${slots} ${count}`;
      writeFully(fd, header.padEnd(HEADER_BYTES - 1) + "\n", 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    // The cursor is only a hint.
  }
}

/**
 * Writes a new cursor just after `last`, with the id set `table` (a cold scan's: see cold-cursor.ts), replacing
 * whatever was there. Call holding the mailbox's receive lock. Best effort, as advanceCursor.
 */
export function writeCursor(
  mailbox: string,
  ino: number,
  last: PassedLine,
  table: { bytes: Uint8Array; slots: number; count: number },
): void {
  try {
    const { fd } = openForUpdateOrCreate(cursorPathOf(mailbox));
    try {
      // No header until the set is whole: a write cut short leaves no cursor.
      ftruncateSync(fd, 0);
      writeFully(fd, table.bytes, HEADER_BYTES);
      const lastLine = `${last.start} ${last.start + last.bytes.length} ${lineHash(last.bytes)}`;
      const header = `${HEADER_TAG} ${ino} ${lastLine} ${HEADER_BYTES} ${table.slots} ${table.count}`;
      writeFully(fd, header.padEnd(HEADER_BYTES - 1) + "\n", 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    // The cursor is only a hint.
  }
}

/** Whether the mailbox `fd` (of inode `ino`, `size` bytes) has a cursor that receive would use: see unreadRegion. */
export function cursorHolds(mailbox: string, fd: number, ino: number, size: number): boolean {
  const cursor = readHeader(mailbox);
  if (!cursor || cursor.ino !== ino || cursor.lineStart >= cursor.offset || cursor.offset > size) return false;
  const line = readRange(fd, cursor.lineStart, cursor.offset);
  return line[line.length - 1] === NEWLINE && lineHash(line) === cursor.lineHash;
}

export function removeCursor(mailbox: string): void {
  try {
    rmSync(cursorPathOf(mailbox), { force: true });
  } catch {
    // A directory planted there: it is ignored as a cursor anyway.
  }
}

/**
 * Why a mailbox's cursor would not be used, or null when it would: for `doctor`, which removes such a cursor (it is
 * only a hint; without it the next receive scans the mailbox once). `fd` is the open mailbox.
 */
export function cursorProblem(mailbox: string, fd: number, ino: number, size: number): string | null {
  const cursor = readHeader(mailbox);
  if (!cursor) return "it is not a cursor agentmail wrote";
  if (cursor.ino !== ino) return "it belongs to an earlier file of that mailbox";
  return unreadRegion(mailbox, fd, ino, size).cursor ? null : "the line it points at is no longer there";
}
