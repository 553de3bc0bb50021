/**
 * Reading whole record files (a live mailbox or an archive) without the lock: complete lines only (a line being
 * appended has no newline yet), lines that are not messages skipped, and one record per id: the line moved most
 * (a copy `agentmail name` brought back, see movesOf), else the first (a later line with the same id and no more
 * moves is never shown).
 */
import { closeSync } from "node:fs";
import { movesOf, OnePerId, parseMessage, standsForId, type Message } from "../../mail/message.ts";
import { openForRead, readRange } from "../durable/files.ts";
import { eachChunk } from "../durable/line-chunks.ts";
import { idNumber, LineIds, NEWLINE, UNKNOWN_ID } from "./line-fields.ts";

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
  const kept = new OnePerId<StoredRecord>();
  const records = kept.records;
  const keep = (start: number, end: number) => {
    const message = parseLine(bytes, start, end);
    if (message) kept.add({ message, start, end });
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

/**
 * recordsIn with a needle, over bytes [0, size) of an open file read a chunk at a time: memory is a chunk and the
 * records found, and only the lines holding the needle are looked at (one native search per occurrence).
 */
export function streamHolding(fd: number, size: number, needle: Uint8Array): StoredRecord[] {
  const kept = new OnePerId<StoredRecord>();
  eachChunk(fd, 0, size, (chunk, offset) => {
    for (const { message, start, end } of recordsIn(chunk, needle)) kept.add({ message, start: offset + start, end: offset + end });
  });
  return kept.records;
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
 * takes, one per id as recordsIn keeps them among those lines, read a chunk at a time (line-chunks.ts): memory is a
 * chunk and the records found, not the file.
 */
export function streamRecords(
  fd: number,
  from: number,
  to: number,
  maybe: LineFilter,
  accept: (message: Message) => boolean = () => true,
): StoredRecord[] {
  const kept = new OnePerId<StoredRecord>();
  eachChunk(fd, from, to, (chunk, offset) => {
    for (let start = 0; start < chunk.length; ) {
      const stop = chunk.indexOf(NEWLINE, start);
      if (maybe(chunk, start, stop)) {
        const message = parseLine(chunk, start, stop);
        if (message && accept(message)) kept.add({ message, start: offset + start, end: offset + stop });
      }
      start = stop + 1;
    }
  });
  return kept.records;
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
    return streamRecords(file.fd, 0, file.stat.size, holdingFilter(needle), accept)[0] ?? null;
  } finally {
    closeSync(file.fd);
  }
}

/**
 * The records of an open file whose message `accept` takes, one per id as recordsIn keeps them, in one pass a chunk at
 * a time: memory is a chunk, four bytes a line and the records found. Only the lines `maybe` lets through are parsed,
 * and those whose id their bytes do not tell; of every other line the id is read from its bytes (LineIds) and kept as
 * a 32-bit hash. A record is its id's unless another line's hash is the same (a moved copy, a repeat, a forged line,
 * or by chance): only the chunks holding those lines are read again, for those ids (trueRecordsOf). So a search of
 * ten thousand matches costs the pass and ten thousand parses, not a look at the file per match.
 */
export function matchingRecords(fd: number, size: number, maybe: LineFilter, accept: (message: Message) => boolean): StoredRecord[] {
  const ids = new LineIds();
  const hashes = new HashColumn();
  const chunks: { from: number; to: number; firstLine: number }[] = [];
  const found: StoredRecord[] = [];
  eachChunk(fd, 0, size, (chunk, offset) => {
    chunks.push({ from: offset, to: offset + chunk.length, firstLine: hashes.count });
    for (let start = 0; start < chunk.length; ) {
      const stop = chunk.indexOf(NEWLINE, start);
      const id = maybe(chunk, start, stop) ? UNKNOWN_ID : ids.of(chunk, start, stop);
      if (!Number.isNaN(id)) hashes.push(hashOf(id));
      else {
        const message = parseLine(chunk, start, stop);
        hashes.push(message ? hashOf(idNumber(message.id)) : 0);
        if (message && accept(message)) found.push({ message, start: offset + start, end: offset + stop });
      }
      start = stop + 1;
    }
  });
  if (found.length === 0) return found;
  const counts = new Map<number, number>();
  for (const record of found) counts.set(hashOf(idNumber(record.message.id)), 0);
  const { count } = hashes;
  for (let line = 0; line < count; line++) {
    const seen = counts.get(hashes.at(line));
    if (seen !== undefined) counts.set(hashes.at(line), seen + 1);
  }
  const doubtful = new Set<string>();
  for (const record of found) if (counts.get(hashOf(idNumber(record.message.id)))! > 1) doubtful.add(record.message.id);
  if (doubtful.size === 0) return found;
  // The chunks holding a line whose hash is a doubtful id's: every line that may name one of them is there.
  const wanted = new Set<number>();
  for (const id of doubtful) wanted.add(hashOf(idNumber(id)));
  const ranges: [from: number, to: number][] = [];
  for (let k = 0; k < chunks.length; k++) {
    const end = k + 1 < chunks.length ? chunks[k + 1]!.firstLine : count;
    for (let line = chunks[k]!.firstLine; line < end; line++) {
      if (!wanted.has(hashes.at(line))) continue;
      ranges.push([chunks[k]!.from, chunks[k]!.to]);
      break;
    }
  }
  const best = trueRecordsOf(fd, ranges, doubtful);
  return found.filter((record) => !doubtful.has(record.message.id) || best.get(record.message.id)?.start === record.start);
}

/** An idNumber in 32 bits (exact numbers reach 2^48): two ids may share one, which costs only a second look. */
export function hashOf(id: number): number {
  const low = id >>> 0;
  const high = Math.floor(id / 0x1_0000_0000) >>> 0;
  return (Math.imul(high, 0x9e3779b1) ^ low) >>> 0;
}

/** 32-bit numbers, one per line, in blocks (one large typed array made the collector let 40 MB of garbage pile up). */
class HashColumn {
  readonly blocks: Uint32Array[] = [];
  #block = new Uint32Array(0);
  #at = 0;
  count = 0;

  push(value: number): void {
    if (this.#at === this.#block.length) {
      this.#block = new Uint32Array(BLOCK);
      this.blocks.push(this.#block);
      this.#at = 0;
    }
    this.#block[this.#at++] = value;
    this.count++;
  }

  at(line: number): number {
    return this.blocks[Math.floor(line / BLOCK)]![line % BLOCK]!;
  }
}

const BLOCK = 1 << 14;

/**
 * Where the record of each of these ids is in the file (its line moved most, else its first line that is a message),
 * for the ids it holds a message line of within `ranges` (whole lines, in order: every line that may name one of
 * them). One pass whatever the number of ids (looking for each id in every chunk cost a search 2 ms a match): a
 * line whose bytes name an id that is not wanted (LineIds) is passed over; any other line is parsed.
 */
export function trueRecordsOf(
  fd: number,
  ranges: readonly (readonly [from: number, to: number])[],
  wanted: Set<string>,
): Map<string, { start: number; moves: number }> {
  const numbers = new Set<number>();
  for (const id of wanted) numbers.add(idNumber(id));
  const best = new Map<string, { start: number; moves: number }>();
  const ids = new LineIds();
  for (const [from, to] of ranges) {
    eachChunk(fd, from, to, (chunk, offset) => {
      for (let start = 0; start < chunk.length; ) {
        const stop = chunk.indexOf(NEWLINE, start);
        const id = ids.of(chunk, start, stop);
        if (Number.isNaN(id) || numbers.has(id)) {
          const message = parseLine(chunk, start, stop);
          if (message && wanted.has(message.id)) {
            const known = best.get(message.id);
            if (standsForId(message, known?.moves)) best.set(message.id, { start: offset + start, moves: movesOf(message) });
          }
        }
        start = stop + 1;
      }
    });
  }
  return best;
}
