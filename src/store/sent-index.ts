/**
 * What an agent sent, without reading every mailbox and archive of the store on each call.
 *
 * Mail lives in the recipients' files, so `sent` would have to read them all. Instead each sender has an index,
 * `<root>/.sent/<encoded name>.json`, kept by `sent` itself (send never touches it, so the hot path pays nothing).
 * For every mailbox and archive it has looked at, it keeps the file's inode, how far it was read, the last line read
 * there (offset and id), and the sender's records in it as last seen (bodies cut to their first 1,000 characters,
 * all a list line shows), each with where its line is. A call then reads only what was appended since, and the lines
 * of the sender's messages that were still unread last time (a record's content never changes; only its read flag
 * goes from false to true, in place); a caller that needs whole bodies (--json, search) also rereads the lines of
 * the bodies that were cut. Read times come from the mailbox's read journal the first time a record is seen read,
 * and are kept.
 *
 * The index is a hint, checked on every use, and never the truth: a file with another inode (a rewrite by archive,
 * cleanup or purge), shorter than it was, whose last line read no longer holds the id it held, or whose unread lines
 * listed no longer hold their ids, is read again from the start. It is replaced atomically (temp file and rename),
 * so a crash leaves the old index or the new one; a lost or damaged index costs one full read. Concurrent calls each
 * write a valid one. What it cannot see, like the receive cursor: a read message marked unread again by hand.
 */
import { closeSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { deliveryKey, type Message } from "../mail/message.ts";
import { withoutMovedSources } from "../mail/moves.ts";
import { encodeName } from "../mail/names.ts";
import { archivePath } from "./archive.ts";
import { openForRead, readRange, replaceFile } from "./files.ts";
import { mailboxPath, SENT_DIR as INDEX_DIR } from "./layout.ts";
import { agentsWithMail } from "./mail-view.ts";
import type { MailRecord } from "./store.ts";
import { readTimes, withReadTime } from "./read-times.ts";
import { roleRoot } from "./role-mail.ts";
import { parseLine, streamRecords, type LineFilter } from "./records.ts";

// 3: entries are kept per delivery key (a moved copy that came back is one of its own), not per id.
const VERSION = 3;
/** Bodies longer than this are kept cut in the index: a list line never shows more. */
const BODY_KEPT = 1000;
/** Lines closer than this are read with one pread rather than two. */
const COALESCE_BYTES = 64 * 1024;

interface Entry {
  start: number;
  end: number;
  message: Message;
  /** The body in `message` is only its first BODY_KEPT characters. */
  cut?: true;
}

interface FileIndex {
  ino: number;
  /** Bytes [0, size) have been looked at; size is the end of a complete line. */
  size: number;
  /** The last complete line before size: its start and its id ("" when it is not a message). */
  anchor: [start: number, id: string] | null;
  entries: Entry[];
}

interface SentIndex {
  version: number;
  sender: string;
  files: Record<string, FileIndex>;
}

export function sentIndexPath(root: string, sender: string): string {
  return join(root, INDEX_DIR, encodeName(sender) + ".json");
}

function loadIndex(root: string, sender: string): SentIndex {
  const empty: SentIndex = { version: VERSION, sender, files: {} };
  try {
    const file = openForRead(sentIndexPath(root, sender));
    if (!file) return empty;
    try {
      const value = JSON.parse(new TextDecoder().decode(readRange(file.fd, 0, file.stat.size))) as SentIndex;
      return value.version === VERSION && value.sender === sender && typeof value.files === "object" && value.files ? value : empty;
    } finally {
      closeSync(file.fd);
    }
  } catch {
    return empty;
  }
}

/** An entry as the index keeps it: a long body cut. */
function compact(entry: Entry): Entry {
  const body = String(entry.message.message);
  if (entry.cut || body.length <= BODY_KEPT) return entry;
  return { ...entry, message: { ...entry.message, message: body.slice(0, BODY_KEPT) }, cut: true };
}

function saveIndex(root: string, index: SentIndex): void {
  try {
    mkdirSync(join(root, INDEX_DIR), { recursive: true, mode: 0o700 });
    const files = Object.fromEntries(
      Object.entries(index.files).map(([name, file]) => [name, { ...file, entries: file.entries.map(compact) }]),
    );
    replaceFile(sentIndexPath(root, index.sender), JSON.stringify({ ...index, files }));
  } catch {
    // Only a hint: the next call reads more.
  }
}

/** Reads these entries' lines again, nearby ones in one pread; false when a line no longer holds its id. */
function refresh(fd: number, entries: Entry[]): boolean {
  let i = 0;
  while (i < entries.length) {
    let j = i;
    while (j + 1 < entries.length && entries[j + 1]!.start - entries[j]!.end <= COALESCE_BYTES) j++;
    const base = entries[i]!.start;
    const bytes = readRange(fd, base, entries[j]!.end);
    for (let k = i; k <= j; k++) {
      const entry = entries[k]!;
      const message = entry.end - base <= bytes.length ? parseLine(bytes, entry.start - base, entry.end - base) : null;
      if (message?.id !== entry.message.id) return false;
      entry.message = message;
      delete entry.cut;
    }
    i = j + 1;
  }
  return true;
}

function anchorHolds(fd: number, index: FileIndex): boolean {
  if (!index.anchor) return index.size === 0;
  const [start, id] = index.anchor;
  const bytes = readRange(fd, start, index.size);
  if (bytes.length !== index.size - start || bytes[bytes.length - 1] !== 0x0a) return false;
  return (parseLine(bytes, 0, bytes.length - 1)?.id ?? "") === id;
}

/**
 * The lines that may be `sender`'s (`needle` is the name as JSON text): those holding the needle, and of them, when
 * a line holds no escape, only those where it is the value of a key `from` (whitespace allowed around the colon).
 * A mailbox holds the name of its own agent on every line (`to`): this keeps `sent` from parsing them all.
 */
function senderFilter(needle: Uint8Array): LineFilter {
  const name = Buffer.from(needle);
  let chunkSeen: Buffer | null = null;
  let next = -1;
  let backslash = -1;
  return (chunk, start, end) => {
    if (chunk !== chunkSeen) {
      chunkSeen = chunk;
      next = chunk.indexOf(name, start);
      backslash = chunk.indexOf(BACKSLASH, start);
    }
    if (next !== -1 && next < start) next = chunk.indexOf(name, start);
    if (backslash !== -1 && backslash < start) backslash = chunk.indexOf(BACKSLASH, start);
    if (next === -1 || next >= end) return false;
    if (backslash !== -1 && backslash < end) return true;
    for (let at = chunk.indexOf(FROM_KEY, start); at !== -1 && at < end; at = chunk.indexOf(FROM_KEY, at + 1)) {
      let i = at + FROM_KEY.length;
      while (isBlank(chunk[i])) i++;
      if (chunk[i] !== COLON) continue;
      i++;
      while (isBlank(chunk[i])) i++;
      if (i + name.length <= end && holdsAt(chunk, i, name)) return true;
    }
    return false;
  };
}

function holdsAt(chunk: Buffer, at: number, expected: Buffer): boolean {
  for (let i = 0; i < expected.length; i++) if (chunk[at + i] !== expected[i]) return false;
  return true;
}

const BACKSLASH = 0x5c;
const COLON = 0x3a;
const FROM_KEY = Buffer.from('"from"');
const isBlank = (byte: number | undefined) => byte === 0x20 || byte === 0x09 || byte === 0x0d;

interface Scan {
  index: FileIndex;
  /** Entries first seen read in this call: their read times are still to be looked up. */
  newlyRead: Entry[];
  changed: boolean;
}

/**
 * Brings one file's entry up to date; null when there is no such file. In an archive (`frozen`) nothing changes in
 * place, so no line is read again for its flag; with `whole`, lines whose bodies the index cut are.
 */
function scanFile(
  path: string,
  previous: FileIndex | undefined,
  sender: string,
  needle: Uint8Array,
  frozen: boolean,
  whole: boolean,
): Scan | null {
  const file = openForRead(path);
  if (!file) return null;
  try {
    const { fd, stat } = file;
    let index: FileIndex = { ino: stat.ino, size: 0, anchor: null, entries: [] };
    const newlyRead: Entry[] = [];
    let changed = previous === undefined;
    if (previous && previous.ino === stat.ino && previous.size <= stat.size && anchorHolds(fd, previous)) {
      const unread = frozen ? [] : previous.entries.filter((entry) => entry.message.read_flag !== true);
      const reread = previous.entries.filter((entry) => (!frozen && entry.message.read_flag !== true) || (whole && entry.cut));
      if (refresh(fd, reread)) {
        index = previous;
        for (const entry of unread) if (entry.message.read_flag === true) newlyRead.push(entry);
        changed = newlyRead.length > 0;
      } else changed = true;
    } else changed = true;
    if (index.size < stat.size) {
      // Read a chunk at a time, parsing only lines whose sender may be this one: a long mailbox costs a chunk.
      const tail = streamRecords(fd, index.size, stat.size, senderFilter(needle));
      // By delivery key: a copy `agentmail name` brought back is a record of its own (sentBy keeps the newest).
      const known = new Set(index.entries.map((entry) => deliveryKey(entry.message)));
      for (const record of tail.records) {
        if (record.message.from !== sender || known.has(deliveryKey(record.message))) continue;
        const entry = { start: record.start, end: record.end, message: record.message };
        index.entries.push(entry);
        if (!frozen && record.message.read_flag === true) newlyRead.push(entry);
        changed = true;
      }
      if (tail.lastStart !== null) {
        const last = readRange(fd, tail.lastStart, tail.end);
        Object.assign(index, { anchor: [tail.lastStart, parseLine(last, 0, last.length - 1)?.id ?? ""], size: tail.end });
        changed = true;
      }
    }
    return { index, newlyRead, changed };
  } finally {
    closeSync(file.fd);
  }
}

/**
 * Every message `sender` sent that is still in the store (agents' mailboxes and role queues), live or archived, with
 * `read_at` merged; a message both live and archived (a crash mid-archive) once, as live; a message `agentmail name`
 * moved once, where it is now. Bodies over 1,000 characters may be cut unless `whole`. Updates the sender's index as
 * a side effect.
 */
export function sentBy(root: string, sender: string, whole = true): MailRecord[] {
  const index = loadIndex(root, sender);
  const next: SentIndex = { version: VERSION, sender, files: {} };
  const needle = new TextEncoder().encode(JSON.stringify(sender));
  const live: MailRecord[] = [];
  const archived: MailRecord[] = [];
  let changed = false;
  // Agents' mailboxes, and role queues (in `.roles/`, each with its own archive there).
  const roles = roleRoot(root);
  const mailboxes: [dir: string, name: string][] = [
    ...agentsWithMail(root).map((agent): [string, string] => [root, agent]),
    ...agentsWithMail(roles).map((queue): [string, string] => [roles, queue]),
  ];
  for (const [dir, agent] of mailboxes) {
    const livePath = mailboxPath(dir, agent);
    const liveKey = livePath.slice(root.length + 1);
    const liveScan = scanFile(livePath, index.files[liveKey], sender, needle, false, whole);
    const liveIds = new Set<string>();
    if (liveScan) {
      next.files[liveKey] = liveScan.index;
      changed ||= liveScan.changed;
      if (liveScan.newlyRead.length > 0) {
        const times = readTimes(livePath);
        for (const entry of liveScan.newlyRead) entry.message = withReadTime(entry.message, times);
      }
      for (const entry of liveScan.index.entries) {
        liveIds.add(entry.message.id);
        live.push({ message: entry.message, archived: false });
      }
    }
    const archiveFile = archivePath(dir, agent);
    const archiveKey = archiveFile.slice(root.length + 1);
    const archiveScan = scanFile(archiveFile, index.files[archiveKey], sender, needle, true, whole);
    if (archiveScan) {
      next.files[archiveKey] = archiveScan.index;
      changed ||= archiveScan.changed;
      for (const entry of archiveScan.index.entries)
        if (!liveIds.has(entry.message.id)) archived.push({ message: entry.message, archived: true });
    }
  }
  if (changed || Object.keys(next.files).length !== Object.keys(index.files).length) saveIndex(root, next);
  return withoutMovedSources([...live, ...archived]);
}
