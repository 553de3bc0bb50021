/**
 * The sent index's scan (sent-index.ts): the sender's lines of one mailbox or archive read from where the index
 * left off, as numbers (where each line is, when its message was created, its id as a number), one record per id.
 * Lines are told apart by a byte scan where they are plain (line-fields.ts PlainLines: no escape, no nested object,
 * no move: almost every line); any other line is parsed. A file whose last line read no longer holds its id, or with
 * another inode, or shorter, is read again from the start.
 */
import { closeSync } from "node:fs";
import { movesOf, standsForId, type Message } from "../../mail/message.ts";
import { openForRead, readRange } from "../durable/files.ts";
import { eachChunk } from "../durable/line-chunks.ts";
import {
  ABSENT,
  CLOSE_BRACE,
  ID_KEY,
  idNumber,
  idNumberOfBytes,
  KeyReader,
  lastStringEnd,
  NEWLINE,
  Next,
  PlainLines,
  UNSURE,
} from "./line-fields.ts";
import { parseLine } from "./records.ts";
import type { IndexedFile, MovedCopy } from "./sent-index.ts";

/** When a record was created, as byCreation orders it. */
function creationTime(createdAt: unknown): number {
  const time = Date.parse(String(createdAt));
  return Number.isFinite(time) ? time : 0;
}

function anchorHolds(fd: number, index: IndexedFile): boolean {
  if (!index.anchor) return index.size === 0;
  const [start, id] = index.anchor;
  const bytes = readRange(fd, start, index.size);
  if (bytes.length !== index.size - start || bytes[bytes.length - 1] !== NEWLINE) return false;
  return (parseLine(bytes, 0, bytes.length - 1)?.id ?? "") === id;
}

/**
 * A file's entries as columns that grow. The index's columns are taken as they are (a call that finds nothing new
 * copies nothing); the first growth of those adds an eighth (a tail is usually short), later ones double.
 */
class Columns {
  count: number;
  starts: Float64Array;
  ends: Float64Array;
  times: Float64Array;
  ids: Float64Array;
  /** Grown once already: doubles from now on. */
  #grown: boolean;

  constructor(from: IndexedFile | null) {
    this.count = from?.count ?? 0;
    this.starts = from?.starts ?? new Float64Array(1024);
    this.ends = from?.ends ?? new Float64Array(1024);
    this.times = from?.times ?? new Float64Array(1024);
    this.ids = from?.ids ?? new Float64Array(1024);
    this.#grown = from === null;
  }

  push(start: number, end: number, time: number, id: number): void {
    if (this.count === this.starts.length) {
      const capacity = this.#grown ? this.count * 2 : this.count + Math.max(1024, this.count >>> 3);
      this.#grown = true;
      this.starts = grown(this.starts, capacity);
      this.ends = grown(this.ends, capacity);
      this.times = grown(this.times, capacity);
      this.ids = grown(this.ids, capacity);
    }
    const at = this.count++;
    this.starts[at] = start;
    this.ends[at] = end;
    this.times[at] = time;
    this.ids[at] = id;
  }

  /** Keeps only the entries `keep` says. */
  filter(keep: (at: number) => boolean): void {
    let to = 0;
    for (let at = 0; at < this.count; at++) {
      if (!keep(at)) continue;
      this.starts[to] = this.starts[at]!;
      this.ends[to] = this.ends[at]!;
      this.times[to] = this.times[at]!;
      this.ids[to] = this.ids[at]!;
      to++;
    }
    this.count = to;
  }
}

function grown(values: Float64Array, capacity: number): Float64Array {
  const next = new Float64Array(capacity);
  next.set(values);
  return next;
}

const FROM_KEY = Buffer.from('"from"');
/** How long an id agentmail makes is, and a time as toISOString writes it. */
const ID_LENGTH = 8;
const ISO_LENGTH = 24;
const CREATED_KEY = Buffer.from('"created_at"');
const COMMA = 0x2c;

/** What a scan finds of one of the sender's lines, given to its visitor; `moved` only for a moved copy. */
type Visit = (start: number, end: number, time: number, id: number, moved: MovedCopy | null) => void;

/**
 * Each line of bytes [from, to) of an open file that is `sender`'s record, in order, as `visit` gets it; returns the
 * end of the last complete line and that line's start. A line that does not hold the sender's name as JSON text is
 * not the sender's (as before: `from` is written canonically). A plain line (it starts and ends an object, holds no
 * escape and no `moves`) is read by its bytes: there every quote delimits a string, so `"from":` is a key, and once
 * it holds the sender's name, a line without a nested object holds it at the top level; any other line is parsed.
 */
function scanLines(fd: number, from: number, to: number, sender: string, visit: Visit): { end: number; lastStart: number | null } {
  const name = Buffer.from(JSON.stringify(sender));
  const keys = { from: new KeyReader(FROM_KEY), id: new KeyReader(ID_KEY), created: new KeyReader(CREATED_KEY) };
  // Flat: a line with a nested object could hold the name under another object's `from`.
  const plainLines = new PlainLines({ flat: true });
  let lastStart: number | null = null;
  const end = eachChunk(fd, from, to, (chunk, offset) => {
    const names = new Next(chunk, name);
    for (let start = 0; start < chunk.length; ) {
      const stop = chunk.indexOf(NEWLINE, start);
      lastStart = offset + start;
      if (names.within(start, stop)) {
        const plain = plainLines.isPlain(chunk, start, stop);
        if (!(plain && plainLine(chunk, start, stop, name, keys, offset, visit))) parsedLine(chunk, start, stop, sender, offset, visit);
      }
      start = stop + 1;
    }
  });
  return { end, lastStart };
}

/** Whether the name's text (its JSON without the quotes) is at `at` (a loop: cheaper than a native call for a name). */
function holdsAt(chunk: Buffer, at: number, name: Buffer): boolean {
  for (let i = 1; i < name.length - 1; i++) if (chunk[at + i - 1] !== name[i]) return false;
  return true;
}

/**
 * A plain line with no nested object (see scanLines), read by its bytes: visited when it is the sender's; false when
 * the bytes do not tell, so it must be parsed.
 */
function plainLine(
  chunk: Buffer,
  start: number,
  end: number,
  name: Buffer,
  keys: Record<"from" | "id" | "created", KeyReader>,
  offset: number,
  visit: Visit,
): boolean {
  // The name's length first: a line of another sender's is passed without a search for the end of its name.
  const from = keys.from.value(chunk, start, end, name.length - 2);
  // No `from`: no message. Another name in the only `from`: another sender's.
  if (from === ABSENT) return true;
  if (from === UNSURE) return false;
  if (lastStringEnd() - from !== name.length - 2 || !holdsAt(chunk, from, name)) return true;
  const after = chunk[lastStringEnd() + 1];
  if (after !== COMMA && after !== CLOSE_BRACE) return false;
  const id = keys.id.value(chunk, start, end, ID_LENGTH);
  if (id === ABSENT) return true;
  if (id === UNSURE) return false;
  const idEnd = lastStringEnd();
  const created = keys.created.value(chunk, start, end, ISO_LENGTH);
  if (created === UNSURE) return false;
  const time = created === ABSENT ? 0 : isoTime(chunk, created, lastStringEnd());
  visit(offset + start, offset + end, time, idNumberOfBytes(chunk, id, idEnd), null);
  return true;
}

/**
 * creationTime of the text bytes[start, end): read from its digits when it is a time as toISOString writes it (one
 * tenth of the time of a string and Date.parse, a tenth of a scan), else parsed.
 */
export function isoTime(bytes: Buffer, start: number, end: number): number {
  if (
    end - start === 24 &&
    bytes[start + 4] === DASH &&
    bytes[start + 7] === DASH &&
    bytes[start + 10] === 0x54 &&
    bytes[start + 23] === 0x5a
  ) {
    const year = digitsAt(bytes, start, 4);
    const month = digitsAt(bytes, start + 5, 2);
    const day = digitsAt(bytes, start + 8, 2);
    const hour = digitsAt(bytes, start + 11, 2);
    const minute = digitsAt(bytes, start + 14, 2);
    const second = digitsAt(bytes, start + 17, 2);
    const ms = digitsAt(bytes, start + 20, 3);
    const separators = bytes[start + 13] === 0x3a && bytes[start + 16] === 0x3a && bytes[start + 19] === 0x2e;
    // Days past the 28th are left to Date.parse, which knows the length of each month.
    // Years below 100 are left to it too, as they always were.
    const inRange = year >= 100 && month >= 1 && month <= 12 && day >= 1 && day <= 28 && hour >= 0 && hour <= 23;
    if (separators && inRange && minute >= 0 && minute <= 59 && second >= 0 && second <= 59 && ms >= 0) {
      return daysSinceEpoch(year, month, day) * 86_400_000 + ((hour * 60 + minute) * 60 + second) * 1000 + ms;
    }
  }
  return creationTime(bytes.toString("utf8", start, end));
}

/** Days from 1970-01-01 to a date of the proleptic Gregorian calendar (H. Hinnant's days_from_civil). */
function daysSinceEpoch(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** The decimal number in bytes[at, at + width), or -1 when they are not all digits. */
function digitsAt(bytes: Buffer, at: number, width: number): number {
  let value = 0;
  for (let i = at; i < at + width; i++) {
    const digit = bytes[i]! - 0x30;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

const DASH = 0x2d;

function parsedLine(chunk: Buffer, start: number, end: number, sender: string, offset: number, visit: Visit): void {
  const message = parseLine(chunk, start, end);
  if (!message || message.from !== sender) return;
  const moved =
    typeof message.moved_from === "string"
      ? { start: offset + start, id: message.id, moves: movesOf(message), from: message.moved_from }
      : null;
  visit(offset + start, offset + end, creationTime(message.created_at), idNumber(message.id), moved);
}

/** The message on entry `at` of a file, or null when its line is not a message. */
export function lineAt(fd: number, file: { starts: Float64Array; ends: Float64Array }, at: number): Message | null {
  const start = file.starts[at]!;
  const bytes = readRange(fd, start, file.ends[at]!);
  return parseLine(bytes, 0, bytes.length);
}

/**
 * Of entries that may share an id, one per id: the line moved most, else the first. `from`: entries before it are
 * known to hold one per id among themselves.
 */
function onePerId(fd: number, columns: Columns, moved: MovedCopy[], from: number): MovedCopy[] {
  const repeated = repeatedIds(columns.ids, columns.count, from);
  if (repeated.size === 0) return moved;
  const groups = new Map<number, number[]>();
  for (let at = 0; at < columns.count; at++) {
    const id = columns.ids[at]!;
    if (!repeated.has(id)) continue;
    let group = groups.get(id);
    if (!group) groups.set(id, (group = []));
    group.push(at);
  }
  const gone = new Set<number>();
  /** Lines no longer listed, and lines listed in an earlier place (moved copies among them stay). */
  const goneStarts = new Set<number>();
  const movedStarts = new Set<number>();
  for (const group of groups.values()) {
    // By id: the place of its first line, and the line moved most.
    const kept = new Map<string, { slot: number; best: number; moves: number }>();
    for (const at of group) {
      const message = lineAt(fd, columns, at);
      if (!message) {
        gone.add(at);
        continue;
      }
      const moves = movesOf(message);
      const seen = kept.get(message.id);
      if (!seen) kept.set(message.id, { slot: at, best: at, moves });
      else {
        gone.add(at);
        if (standsForId(message, seen.moves)) Object.assign(seen, { best: at, moves });
      }
    }
    // A record is listed where its id's first line is (records.ts), with the line moved most.
    for (const { slot, best } of kept.values()) {
      if (best === slot) continue;
      goneStarts.add(columns.starts[slot]!);
      movedStarts.add(columns.starts[best]!);
      columns.starts[slot] = columns.starts[best]!;
      columns.ends[slot] = columns.ends[best]!;
      columns.times[slot] = columns.times[best]!;
    }
  }
  for (const at of gone) goneStarts.add(columns.starts[at]!);
  columns.filter((at) => !gone.has(at));
  return moved.filter((copy) => movedStarts.has(copy.start) || !goneStarts.has(copy.start));
}

/** The ids of ids[from, count) found more than once in ids[0, count). */
function repeatedIds(ids: Float64Array, count: number, from: number): Set<number> {
  const repeated = new Set<number>();
  if (from >= count) return repeated;
  const tail = ids.slice(from, count).sort();
  for (let i = 1; i < tail.length; i++) if (tail[i] === tail[i - 1]) repeated.add(tail[i]!);
  for (let at = 0; at < from; at++) if (holds(tail, ids[at]!)) repeated.add(ids[at]!);
  return repeated;
}

/** Whether sorted values hold `value`. */
export function holds(sorted: Float64Array, value: number): boolean {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sorted[middle]! < value) low = middle + 1;
    else high = middle;
  }
  return low < sorted.length && sorted[low] === value;
}

/** One file brought up to date; null when there is no such file. `changed`: the index must be written again. */
export function scanFile(
  root: string,
  path: string,
  previous: IndexedFile | undefined,
  sender: string,
): { file: IndexedFile; fd: number; changed: boolean; scanned: number } | null {
  const opened = openForRead(path);
  if (!opened) return null;
  const { fd, stat } = opened;
  try {
    const key = path.slice(root.length + 1);
    const usable = previous !== undefined && previous.ino === stat.ino && previous.size <= stat.size && anchorHolds(fd, previous);
    const base = usable ? previous : null;
    let changed = !usable;
    let size = base?.size ?? 0;
    let anchor = base?.anchor ?? null;
    const columns = new Columns(base);
    let moved = base?.moved ?? [];
    let scanned = 0;
    if (size < stat.size) {
      const known = columns.count;
      const added: MovedCopy[] = [];
      const tail = scanLines(fd, size, stat.size, sender, (start, end, time, id, copy) => {
        columns.push(start, end, time, id);
        scanned++;
        if (copy) added.push(copy);
      });
      if (columns.count > known) {
        moved = onePerId(fd, columns, [...moved, ...added], known);
        changed = true;
      }
      if (tail.lastStart !== null) {
        const last = readRange(fd, tail.lastStart, tail.end);
        anchor = [tail.lastStart, parseLine(last, 0, last.length - 1)?.id ?? ""];
        size = tail.end;
        changed = true;
      }
    }
    const { count, starts, ends, times, ids } = columns;
    return { file: { key, ino: stat.ino, size, anchor, count, starts, ends, times, ids, moved }, fd, changed, scanned };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}
