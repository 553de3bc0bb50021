import { closeSync, ftruncateSync, rmSync } from "node:fs";
import { openForRead, openForUpdateOrCreate, readRange, writeFully } from "./files.ts";

const NEWLINE = 0x0a;
const decoder = new TextDecoder();

/**
 * The cursor is kept beside each mailbox, in `<mailbox>.cursor`: where the unread part starts, and the id of every
 * message before that point. Receive starts there, so its cost does not grow with the read history, and looks a
 * new message's id up in the id log, so an id is delivered once however long ago its first line was read.
 *
 * The file is a fixed-width header line, then the id log: one id per line as canonical JSON text. The header names
 * the mailbox's inode, the last line passed (its start, and a hash of its bytes), the offset just after it, and how
 * many bytes of the log belong to it; every line before the offset is read, not a message, or a skipped duplicate.
 * The header is trusted only when the inode is the same (cleanup's rewrite makes a new one) and the last line passed
 * is still there byte for byte, so a mailbox truncated, replaced or rewritten in place, or its last received message
 * marked unread by hand, is scanned from the start instead, and the log is rebuilt with it.
 *
 * Only a holder of the mailbox's receive lock writes it: the log is appended first, then the header is rewritten in
 * place with one pwrite, so a process killed in between leaves the old header, which does not count the new ids.
 * A reader without the lock sees the old header or the new one.
 */
export interface Cursor {
  ino: number;
  lineStart: number;
  offset: number;
  lineHash: string;
  logBytes: number;
}

const HEADER_BYTES = 128;
const HEADER_FORMAT = /^c2 (\d+) (\d+) (\d+) ([0-9a-f]{8}) (\d+) *\n$/;

export const cursorPathOf = (mailbox: string) => `${mailbox}.cursor`;

/** FNV-1a, 32 bits: tells whether the last line passed is still the same bytes. */
export function lineHash(bytes: Uint8Array): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  return (hash >>> 0).toString(16).padStart(8, "0");
}

function readHeader(mailbox: string): Cursor | null {
  try {
    const file = openForRead(cursorPathOf(mailbox));
    if (!file) return null;
    try {
      const match = HEADER_FORMAT.exec(decoder.decode(readRange(file.fd, 0, HEADER_BYTES)));
      if (!match) return null;
      const cursor = { ino: Number(match[1]), lineStart: Number(match[2]), offset: Number(match[3]), lineHash: match[4]!, logBytes: Number(match[5]) };
      return HEADER_BYTES + cursor.logBytes <= file.stat.size ? cursor : null;
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
 * Whether an earlier line of the mailbox, before the region, carried this id (canonical JSON text). The log is read
 * once, on the first question: a receive asks only about the message it is about to deliver.
 */
export function idLogOf(mailbox: string, region: Region): (id: string) => boolean {
  let log: Buffer | null = null;
  return (id) => {
    if (!region.cursor || region.cursor.logBytes === 0) return false;
    if (log === null) {
      try {
        const file = openForRead(cursorPathOf(mailbox));
        log = file ? Buffer.from(readRange(file.fd, HEADER_BYTES - 1, HEADER_BYTES + region.cursor.logBytes)) : Buffer.alloc(0);
        if (file) closeSync(file.fd);
      } catch {
        log = Buffer.alloc(0);
      }
    }
    // Every entry sits between two newlines (the header ends with one).
    return log.includes(`\n${id}\n`);
  };
}

/** The line the cursor moves past, in file offsets, with its bytes as they now are on disk. */
export interface PassedLine {
  start: number;
  bytes: Uint8Array;
}

/**
 * Moves the cursor to just after `last`, adding the ids of the lines passed since the region's start to the log.
 * Best effort: a cursor that cannot be written (a symlink or FIFO planted at its path, a full disk) only costs the
 * next receive a scan from where the old cursor was, or from the start.
 */
export function advanceCursor(mailbox: string, region: Region, ino: number, last: PassedLine, passedIds: string[]): void {
  try {
    const { fd } = openForUpdateOrCreate(cursorPathOf(mailbox));
    try {
      const kept = region.cursor?.logBytes ?? 0;
      const added = passedIds.length > 0 ? Buffer.from(passedIds.join("\n") + "\n") : Buffer.alloc(0);
      if (region.cursor === null) ftruncateSync(fd, HEADER_BYTES);
      writeFully(fd, added, HEADER_BYTES + kept);
      const header = `c2 ${ino} ${last.start} ${last.start + last.bytes.length} ${lineHash(last.bytes)} ${kept + added.length}`;
      writeFully(fd, Buffer.from(header.padEnd(HEADER_BYTES - 1) + "\n"), 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    // The cursor is only a hint.
  }
}

export function removeCursor(mailbox: string): void {
  try {
    rmSync(cursorPathOf(mailbox), { force: true });
  } catch {
    // A directory planted there: it is ignored as a cursor anyway.
  }
}
