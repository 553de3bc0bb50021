/**
 * What an agent sent, without reading every mailbox and archive of the store on each call, and without holding it.
 *
 * Mail lives in the recipients' files, so `sent` would have to read them all. Instead each sender has an index,
 * `<root>/.sent/<encoded name>.index`, kept by `sent` itself (send never touches it, so the hot path pays nothing).
 * For every mailbox and archive it has looked at, it keeps the file's inode, how far it was read, the last line read
 * there (offset and id), and, for each line that is the sender's record of a message there, only numbers: where the
 * line starts and ends, when the message was created, and its id as a number (idNumber). Moved copies (which name
 * the copy they replace) are listed with their ids. A call reads only what was appended since; the lines themselves
 * are read again, a window at a time, when they are listed (sent-reader.ts), so a record's read flag is always the
 * file's, and a million records cost 32 MB of numbers rather than a million objects.
 *
 * One record per id in a file: the line moved most, else the first (as records.ts reads a file). Lines are told
 * apart by a byte scan where they are plain (no escape, no nested object, no move: almost every line); any other
 * line is parsed.
 *
 * The index is a hint, checked on every use, and never the truth: a file with another inode (a rewrite by archive,
 * cleanup or purge), shorter than it was, or whose last line read no longer holds the id it held, is read again from
 * the start; a listed line that no longer holds its record is passed over and the index dropped, to be made again.
 * It is replaced atomically (temp file and rename), so a crash leaves the old index or the new one; a lost or
 * damaged index costs one full read. Concurrent calls each write a valid one.
 */
import { closeSync, mkdirSync, readSync, rmSync } from "node:fs";
import { join } from "node:path";
import { encodeName } from "../../mail/names.ts";
import { openForRead, readRange, replaceFile } from "../durable/files.ts";
import { SENT_DIR as INDEX_DIR } from "../local/layout.ts";

// 4: numbers only, in a binary file (3 was JSON holding every record).
const VERSION = 4;

/** A copy `agentmail name` moved here: the copy it replaces is (id, `from`, moves - 1), listed nowhere else. */
export interface MovedCopy {
  start: number;
  id: string;
  moves: number;
  from: string;
}

/** One mailbox or archive as the index knows it: entries in the order of their lines. */
export interface IndexedFile {
  /** Its path below the store's root. */
  key: string;
  ino: number;
  /** Bytes [0, size) have been looked at; size is the end of a complete line. */
  size: number;
  /** The last complete line before size: its start and its id ("" when it is not a message). */
  anchor: [start: number, id: string] | null;
  count: number;
  starts: Float64Array;
  ends: Float64Array;
  /** created_at as milliseconds, 0 when it is not a time (the order of byCreation). */
  times: Float64Array;
  ids: Float64Array;
  moved: MovedCopy[];
}

/** A file of the store as a call lists it: its index entry, the open file its lines are read from, and what is left out. */
export interface SentFile extends IndexedFile {
  path: string;
  archived: boolean;
  /** The live mailbox whose read journal holds this file's read times (archived records carry their own). */
  mailbox: string;
  /** The file open since its scan, or -1: see OpenFiles. */
  fd: number;
  /** Entries not listed: an archived record also live, or the copy a moved copy replaced. */
  excluded: Uint8Array | null;
}

export function sentIndexPath(root: string, sender: string): string {
  return join(root, INDEX_DIR, encodeName(sender) + ".index");
}

/** Where version 3 kept its JSON index: removed when a new one is written. */
const oldIndexPath = (root: string, sender: string) => join(root, INDEX_DIR, encodeName(sender) + ".json");

interface FileHeader {
  key: string;
  ino: number;
  size: number;
  anchor: [number, string] | null;
  count: number;
  moved: MovedCopy[];
}

/** The layout: a 4-byte length, the JSON header, padding to 8 bytes, then each file's four columns of doubles. */
export function loadIndex(root: string, sender: string): Map<string, IndexedFile> {
  const files = new Map<string, IndexedFile>();
  try {
    const file = openForRead(sentIndexPath(root, sender));
    if (!file) return files;
    try {
      const { fd } = file;
      const length = new DataView(readRange(fd, 0, 4).buffer).getUint32(0, true);
      const header = JSON.parse(new TextDecoder().decode(readRange(fd, 4, 4 + length))) as {
        version: number;
        sender: string;
        files: FileHeader[];
      };
      if (header.version !== VERSION || header.sender !== sender || !Array.isArray(header.files)) return files;
      let at = padded(4 + length);
      // Each column read straight into its array: the file is never held whole besides them.
      const column = (count: number) => {
        const values = new Float64Array(count);
        if (readSync(fd, new Uint8Array(values.buffer), 0, count * 8, at) !== count * 8) throw new Error("short index");
        at += count * 8;
        return values;
      };
      for (const each of header.files) {
        const starts = column(each.count);
        const ends = column(each.count);
        const times = column(each.count);
        const ids = column(each.count);
        files.set(each.key, { ...each, starts, ends, times, ids });
      }
      return at === file.stat.size ? files : new Map();
    } finally {
      closeSync(file.fd);
    }
  } catch {
    return new Map();
  }
}

const padded = (length: number) => Math.ceil(length / 8) * 8;

export function saveIndex(root: string, sender: string, files: readonly IndexedFile[]): void {
  try {
    mkdirSync(join(root, INDEX_DIR), { recursive: true, mode: 0o700 });
    const headers: FileHeader[] = [];
    for (const { key, ino, size, anchor, count, moved } of files) headers.push({ key, ino, size, anchor, count, moved });
    const header = new TextEncoder().encode(JSON.stringify({ version: VERSION, sender, files: headers }));
    const start = new Uint8Array(padded(4 + header.length));
    new DataView(start.buffer).setUint32(0, header.length, true);
    start.set(header, 4);
    const pieces: Uint8Array[] = [start];
    for (const file of files) {
      for (const column of [file.starts, file.ends, file.times, file.ids])
        pieces.push(new Uint8Array(column.buffer, column.byteOffset, file.count * 8));
    }
    replaceFile(sentIndexPath(root, sender), pieces);
    rmSync(oldIndexPath(root, sender), { force: true });
  } catch {
    // Only a hint: the next call reads more.
  }
}

/** Drops the index: a listed line no longer held its record, so the next call reads every file again. */
export function dropIndex(root: string, sender: string): void {
  try {
    rmSync(sentIndexPath(root, sender), { force: true });
  } catch {
    // The next call finds the same lines wanting and tries again.
  }
}
