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
import { movesOf, type Message } from "../../mail/message.ts";
import { encodeName } from "../../mail/names.ts";
import { archivePath } from "./archive.ts";
import { openForRead, readRange, replaceFile } from "../durable/files.ts";
import { mailboxPath, SENT_DIR as INDEX_DIR } from "../local/layout.ts";
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
import { agentsWithMail } from "./mail-view.ts";
import { parseLine } from "./records.ts";
import { roleRoot } from "./role-mail.ts";

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

/** When a record was created, as byCreation orders it. */
export function creationTime(createdAt: unknown): number {
  const time = Date.parse(String(createdAt));
  return Number.isFinite(time) ? time : 0;
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
function loadIndex(root: string, sender: string): Map<string, IndexedFile> {
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

function saveIndex(root: string, sender: string, files: readonly IndexedFile[]): void {
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
        if (moves > seen.moves) Object.assign(seen, { best: at, moves });
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
function scanFile(
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

/**
 * Every file holding mail the sender sent, brought up to date, in the order sentBy lists them: every live mailbox
 * (agents', then role queues in `.roles/`), then every archive; each open (the caller closes them: closeAll), with
 * what it leaves out marked. Updates the sender's index as a side effect.
 */
export function sentFiles(root: string, sender: string): SentFile[] {
  const index = loadIndex(root, sender);
  const live: SentFile[] = [];
  const archived: SentFile[] = [];
  let changed = false;
  const roles = roleRoot(root);
  const mailboxes: [dir: string, name: string][] = [];
  for (const agent of agentsWithMail(root)) mailboxes.push([root, agent]);
  for (const queue of agentsWithMail(roles)) mailboxes.push([roles, queue]);
  let open = 0;
  let scanned = 0;
  try {
    for (const [dir, agent] of mailboxes) {
      const mailbox = mailboxPath(dir, agent);
      for (const [path, into] of [
        [mailbox, live],
        [archivePath(dir, agent), archived],
      ] as const) {
        const scan = scanFile(root, path, index.get(path.slice(root.length + 1)), sender);
        if (!scan) continue;
        changed ||= scan.changed;
        scanned += scan.scanned;
        // A file with nothing to list is not read again; of the others, the first KEPT_OPEN stay open (see OpenFiles).
        let fd = scan.fd;
        if (scan.file.count === 0 || open === KEPT_OPEN) {
          closeSync(fd);
          fd = -1;
        } else open++;
        into.push({ ...scan.file, path, archived: into === archived, mailbox, fd, excluded: null });
      }
    }
  } catch (error) {
    closeAll([...live, ...archived]);
    throw error;
  }
  const files = [...live, ...archived];
  if (changed || files.length !== index.size) saveIndex(root, sender, files);
  // What a long scan leaves (columns outgrown, lines parsed) is garbage before the lines are read back: a million
  // lines left 40 MB of it, which the collector would otherwise keep through the whole listing.
  if (scanned > 100_000) Bun.gc(true);
  const handles = new OpenFiles();
  excludeArchivedLive(live, archived, handles);
  excludeMovedSources(files, handles);
  return files;
}

/** Files kept open from their scan, and files opened again at once: together far below a process's 1,024. */
const KEPT_OPEN = 128;
const REOPENED = 64;

/**
 * The descriptors of the files a listing reads. Those kept open since their scan hold exactly what the index
 * describes, whatever is renamed over them meanwhile; one closed (a store of more files than KEPT_OPEN) is opened
 * again when read, and counts only if it is still the file that was scanned (its inode): otherwise its lines are
 * not read (-1), as for a line that no longer holds its record.
 */
export class OpenFiles {
  readonly #reopened: SentFile[] = [];
  /** Files found gone or replaced: not looked for again. */
  readonly #gone = new Set<SentFile>();

  fd(file: SentFile): number {
    if (file.fd !== -1) return file.fd;
    if (this.#gone.has(file)) return -1;
    const opened = openForRead(file.path);
    if (!opened || opened.stat.ino !== file.ino) {
      if (opened) closeSync(opened.fd);
      this.#gone.add(file);
      return -1;
    }
    if (this.#reopened.length === REOPENED) {
      const oldest = this.#reopened.shift()!;
      closeSync(oldest.fd);
      oldest.fd = -1;
    }
    this.#reopened.push(file);
    file.fd = opened.fd;
    return file.fd;
  }
}

export function closeAll(files: readonly SentFile[]): void {
  for (const file of files) {
    if (file.fd === -1) continue;
    try {
      closeSync(file.fd);
    } catch {
      // Closed already.
    }
    file.fd = -1;
  }
}

/** The message on a listed line, read through `handles`; null when it is not there (see OpenFiles) or no message. */
function messageAt(handles: OpenFiles, file: SentFile, at: number): Message | null {
  const fd = handles.fd(file);
  return fd === -1 ? null : lineAt(fd, file, at);
}

function exclude(file: SentFile, at: number): void {
  file.excluded ??= new Uint8Array(file.count);
  file.excluded[at] = 1;
}

/** A message both live and archived (a crash mid-archive) is listed once, as live. */
function excludeArchivedLive(live: readonly SentFile[], archived: readonly SentFile[], handles: OpenFiles): void {
  const byMailbox = new Map<string, SentFile>();
  for (const file of live) byMailbox.set(file.mailbox, file);
  for (const file of archived) {
    const twin = byMailbox.get(file.mailbox);
    if (!twin || twin.count === 0 || file.count === 0) continue;
    const liveIds = twin.ids.slice(0, twin.count).sort();
    let liveTexts: Set<string> | null = null;
    for (let at = 0; at < file.count; at++) {
      const id = file.ids[at]!;
      if (!holds(liveIds, id)) continue;
      if (id > 0) exclude(file, at);
      else {
        // A hashed id: compared as text.
        liveTexts ??= hashedIdsOf(twin, handles);
        const message = messageAt(handles, file, at);
        if (message && liveTexts.has(message.id)) exclude(file, at);
      }
    }
  }
}

function hashedIdsOf(file: SentFile, handles: OpenFiles): Set<string> {
  const texts = new Set<string>();
  for (let at = 0; at < file.count; at++) {
    if (file.ids[at]! > 0) continue;
    const message = messageAt(handles, file, at);
    if (message) texts.add(message.id);
  }
  return texts;
}

/** A copy `agentmail name` moved on gives way to the moved one, so a message is listed once, where it is now. */
function excludeMovedSources(files: readonly SentFile[], handles: OpenFiles): void {
  const sources = new Set<string>();
  const wanted = new Set<number>();
  const sourceKey = (id: string, mailbox: unknown, moves: number) => JSON.stringify([id, mailbox, moves]);
  for (const file of files) {
    for (const copy of file.moved) {
      sources.add(sourceKey(copy.id, copy.from, copy.moves - 1));
      wanted.add(idNumber(copy.id));
    }
  }
  if (sources.size === 0) return;
  for (const file of files) {
    for (let at = 0; at < file.count; at++) {
      if (!wanted.has(file.ids[at]!)) continue;
      const message = messageAt(handles, file, at);
      if (message && sources.has(sourceKey(message.id, message.to, movesOf(message)))) exclude(file, at);
    }
  }
}
