/**
 * Reading whole record files (a live mailbox or an archive) without the lock: complete lines only (a line being
 * appended has no newline yet), lines that are not messages skipped, and one record per id: the line moved most
 * (a copy `agentmail name` brought back, see movesOf), else the first (a later line with the same id and no more
 * moves is never shown).
 */
import { closeSync } from "node:fs";
import { movesOf, parseMessage, type Message } from "../mail/message.ts";
import { openForRead, readRange } from "./files.ts";
import { eachChunk } from "./line-chunks.ts";

const NEWLINE = 0x0a;
const decoder = new TextDecoder();

export interface StoredRecord {
  message: Message;
  /** Byte range of its line in the file, newline excluded. */
  start: number;
  end: number;
}

export interface RecordFile {
  ino: number;
  /** Bytes read: the file's size when it was read. */
  size: number;
  records: StoredRecord[];
}

/** The whole content of a file and its inode, or null when there is no such file. */
export function readWhole(path: string): { ino: number; bytes: Uint8Array } | null {
  const file = openForRead(path);
  if (!file) return null;
  try {
    return { ino: file.stat.ino, bytes: readRange(file.fd, 0, file.stat.size) };
  } finally {
    closeSync(file.fd);
  }
}

/** Complete lines of bytes[from, ...), as [start, end) without the newline. */
export function* completeLines(bytes: Uint8Array, from = 0): Generator<{ start: number; end: number }> {
  let start = from;
  while (start < bytes.length) {
    const end = bytes.indexOf(NEWLINE, start);
    if (end === -1) return;
    yield { start, end };
    start = end + 1;
  }
}

export function parseLine(bytes: Uint8Array, start: number, end: number): Message | null {
  return parseMessage(decoder.decode(bytes.subarray(start, end)));
}

/**
 * The records of bytes, one per id (the line moved most, else the first), in the order of each id's first line.
 * With `needle`, only lines containing those bytes are parsed: a cheap filter for a caller that knows every record
 * it wants holds them (an id, a quoted name). A message written twice holds the needle twice, so the rule still
 * holds among the lines found.
 */
export function recordsIn(bytes: Uint8Array, needle?: Uint8Array, from = 0): StoredRecord[] {
  const records: StoredRecord[] = [];
  const seen = new Map<string, number>();
  const keep = (start: number, end: number) => {
    const message = parseLine(bytes, start, end);
    if (!message) return;
    const at = seen.get(message.id);
    if (at === undefined) {
      seen.set(message.id, records.length);
      records.push({ message, start, end });
    } else if (movesOf(message) > movesOf(records[at]!.message)) records[at] = { message, start, end };
  };
  if (!needle) {
    for (const { start, end } of completeLines(bytes, from)) keep(start, end);
    return records;
  }
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = buffer.indexOf(needle, from); at !== -1; ) {
    const start = Math.max(from, bytes.lastIndexOf(NEWLINE, at) + 1);
    const end = bytes.indexOf(NEWLINE, at);
    if (end === -1) break;
    keep(start, end);
    at = buffer.indexOf(needle, end + 1);
  }
  return records;
}

/** Every record of a file, one per id (see recordsIn); an empty list when there is no file. */
export function readRecordFile(path: string, needle?: Uint8Array): RecordFile {
  const whole = readWhole(path);
  if (!whole) return { ino: 0, size: 0, records: [] };
  return { ino: whole.ino, size: whole.bytes.length, records: recordsIn(whole.bytes, needle) };
}

/**
 * The ids of the messages in a file. Every line is parsed: a torn line that a later append terminated may start
 * like a message and must not count as one.
 */
export function idsIn(bytes: Uint8Array): Set<string> {
  const ids = new Set<string>();
  for (const { start, end } of completeLines(bytes)) {
    const message = parseLine(bytes, start, end);
    if (message) ids.add(message.id);
  }
  return ids;
}

/** Whether a line of a chunk may hold a record a reader wants, by a cheap look at its bytes: a superset of them. */
export type LineFilter = (chunk: Buffer, start: number, end: number) => boolean;

/**
 * The records of bytes [from, to) of an open file among the lines `maybe` lets through and whose message `accept`
 * takes, one per id as recordsIn keeps them, read a chunk at a time (line-chunks.ts): memory is a chunk and the
 * records found, not the file. Also the end of the last complete line (where a later read goes on) and its start.
 */
export function streamRecords(
  fd: number,
  from: number,
  to: number,
  maybe: LineFilter,
  accept: (message: Message) => boolean = () => true,
): { records: StoredRecord[]; end: number; lastStart: number | null } {
  const records: StoredRecord[] = [];
  const seen = new Map<string, number>();
  let lastStart: number | null = null;
  const end = eachChunk(fd, from, to, (chunk, offset) => {
    for (let start = 0; start < chunk.length; ) {
      const stop = chunk.indexOf(NEWLINE, start);
      lastStart = offset + start;
      if (maybe(chunk, start, stop)) {
        const message = parseLine(chunk, start, stop);
        if (message && accept(message)) {
          const record = { message, start: offset + start, end: offset + stop };
          const at = seen.get(message.id);
          if (at === undefined) {
            seen.set(message.id, records.length);
            records.push(record);
          } else if (movesOf(message) > movesOf(records[at]!.message)) records[at] = record;
        }
      }
      start = stop + 1;
    }
  });
  return { records, end, lastStart };
}

/** Lets through the lines that hold `needle`: one native search per occurrence, not one per line. */
export function holdingFilter(needle: Uint8Array): LineFilter {
  const wanted = Buffer.from(needle.buffer, needle.byteOffset, needle.byteLength);
  let chunkSeen: Buffer | null = null;
  let next = -1;
  return (chunk, start, end) => {
    if (chunk !== chunkSeen || (next !== -1 && next < start)) {
      chunkSeen = chunk;
      next = chunk.indexOf(wanted, start);
    }
    return next !== -1 && next < end;
  };
}

/** The record of the first message in the file that `accept` takes among the lines holding `needle` (see recordsIn). */
export function findRecord(path: string, needle: Uint8Array, accept: (message: Message) => boolean): StoredRecord | null {
  const file = openForRead(path);
  if (!file) return null;
  try {
    return streamRecords(file.fd, 0, file.stat.size, holdingFilter(needle), accept).records[0] ?? null;
  } finally {
    closeSync(file.fd);
  }
}

/**
 * Of the records found among some lines only (streamRecords with a filter that a repeat of a message may not pass:
 * a line that differs from its first, a forged one), those that are the record of their id in the whole file: its
 * line moved most, else its first line that is a message. One more streaming pass, parsing only the lines that hold
 * one of these ids.
 */
export function trueRecords(fd: number, size: number, found: StoredRecord[]): StoredRecord[] {
  if (found.length === 0) return found;
  const best = trueRecordsOf(fd, size, new Set(found.map((record) => record.message.id)));
  return found.filter((record) => best.get(record.message.id)?.start === record.start);
}

/** Where the record of each of these ids is in the file (see trueRecords), for the ids it holds a message line of. */
export function trueRecordsOf(fd: number, size: number, wanted: Set<string>): Map<string, { start: number; moves: number }> {
  const needles = [...wanted].map((id) => Buffer.from(JSON.stringify(id)));
  const best = new Map<string, { start: number; moves: number }>();
  eachChunk(fd, 0, size, (chunk, offset) => {
    // Lines holding a wanted id as it is written (an escaped spelling is parsed below like any line that holds one).
    const lines = new Set<number>();
    for (const needle of needles) {
      for (let at = chunk.indexOf(needle); at !== -1; at = chunk.indexOf(needle, at + 1)) lines.add(chunk.lastIndexOf(NEWLINE, at) + 1);
    }
    for (let at = chunk.indexOf(BACKSLASH); at !== -1; ) {
      const start = chunk.lastIndexOf(NEWLINE, at) + 1;
      lines.add(start);
      const stop = chunk.indexOf(NEWLINE, at);
      at = stop === -1 ? -1 : chunk.indexOf(BACKSLASH, stop);
    }
    for (const start of [...lines].sort((a, b) => a - b)) {
      const message = parseLine(chunk, start, chunk.indexOf(NEWLINE, start));
      if (!message || !wanted.has(message.id)) continue;
      const known = best.get(message.id);
      if (!known || movesOf(message) > known.moves) best.set(message.id, { start: offset + start, moves: movesOf(message) });
    }
  });
  return best;
}

const BACKSLASH = 0x5c;
