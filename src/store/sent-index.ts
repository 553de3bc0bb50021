/**
 * What an agent sent, without parsing every mailbox and archive of the store on each call.
 *
 * Mail lives in the recipients' files, so `sent` would have to read them all. Instead each sender has an index,
 * `<root>/.sent/<encoded name>.json`, kept by `sent` itself (send never touches it, so the hot path pays nothing):
 * for every mailbox and archive it has looked at, the file's inode, how far it was read, the last line read there
 * (offset and id), and where that sender's records are (offset, end, id). A call reads only what was appended since,
 * then the sender's own lines, which it must read anyway for their current read state.
 *
 * The index is a hint, checked on every use, and never the truth: a file with another inode (a rewrite by archive,
 * cleanup or purge), shorter than it was, or whose last line read or any listed line no longer holds the id it
 * held, is read again from the start. It is replaced atomically (temp file and rename), so a crash leaves the old
 * index or the new one; a lost or damaged index only costs one full read. Concurrent calls each write a valid one.
 */
import { closeSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Message } from "../core/message.ts";
import { encodeName } from "../core/names.ts";
import { archivePath } from "./archive.ts";
import { openForRead, readRange, replaceFile } from "./files.ts";
import { mailboxPath } from "./mailbox.ts";
import { agentsWithMail, type MailRecord } from "./mail-view.ts";
import { readTimes, withReadTime } from "./read-times.ts";
import { parseLine, recordsIn } from "./records.ts";

const INDEX_DIR = ".sent";
const VERSION = 1;
/** Lines closer than this are read with one pread rather than two. */
const COALESCE_BYTES = 64 * 1024;

type Span = [start: number, end: number, id: string];

interface FileIndex {
  ino: number;
  /** Bytes [0, size) have been looked at; size is the end of a complete line. */
  size: number;
  /** The last complete line before size: its start and its id ("" when it is not a message). */
  anchor: [start: number, id: string] | null;
  lines: Span[];
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

function saveIndex(root: string, index: SentIndex): void {
  try {
    mkdirSync(join(root, INDEX_DIR), { recursive: true, mode: 0o700 });
    replaceFile(sentIndexPath(root, index.sender), JSON.stringify(index));
  } catch {
    // Only a hint: the next call reads more.
  }
}

/** Reads the given line spans of an open file, nearby ones in one pread; null when a span no longer holds its id. */
function readSpans(fd: number, spans: Span[]): Message[] | null {
  const out: Message[] = [];
  let i = 0;
  while (i < spans.length) {
    let j = i;
    while (j + 1 < spans.length && spans[j + 1]![0] - spans[j]![1] <= COALESCE_BYTES) j++;
    const base = spans[i]![0];
    const bytes = readRange(fd, base, spans[j]![1]);
    for (let k = i; k <= j; k++) {
      const [start, end, id] = spans[k]!;
      const message = end - base <= bytes.length ? parseLine(bytes, start - base, end - base) : null;
      if (message?.id !== id) return null;
      out.push(message);
    }
    i = j + 1;
  }
  return out;
}

function anchorHolds(fd: number, index: FileIndex): boolean {
  if (!index.anchor) return index.size === 0;
  const [start, id] = index.anchor;
  const bytes = readRange(fd, start, index.size);
  if (bytes.length !== index.size - start || bytes[bytes.length - 1] !== 0x0a) return false;
  return (parseLine(bytes, 0, bytes.length - 1)?.id ?? "") === id;
}

/** The last complete line of bytes (offset `base` in the file) as an anchor, and the end of it. */
function lastLine(bytes: Uint8Array, base: number): { anchor: [number, string]; size: number } | null {
  const end = bytes.lastIndexOf(0x0a);
  if (end === -1) return null;
  const start = bytes.lastIndexOf(0x0a, end - 1) + 1;
  return { anchor: [base + start, parseLine(bytes, start, end)?.id ?? ""], size: base + end + 1 };
}

/** Brings one file's entry up to date and returns the sender's records in it; null when there is no such file. */
function scanFile(path: string, previous: FileIndex | undefined, sender: string, needle: Uint8Array): { index: FileIndex; messages: Message[] } | null {
  const file = openForRead(path);
  if (!file) return null;
  try {
    const { fd, stat } = file;
    const mine = (message: Message) => message.from === sender;
    let index: FileIndex = { ino: stat.ino, size: 0, anchor: null, lines: [] };
    let messages: Message[] = [];
    if (previous && previous.ino === stat.ino && previous.size <= stat.size && anchorHolds(fd, previous)) {
      const kept = readSpans(fd, previous.lines);
      if (kept) {
        index = { ...previous, lines: [...previous.lines] };
        messages = kept;
      }
    }
    const tail = readRange(fd, index.size, stat.size);
    const known = new Set(index.lines.map((span) => span[2]));
    for (const record of recordsIn(tail, needle)) {
      if (!mine(record.message) || known.has(record.message.id)) continue;
      index.lines.push([index.size + record.start, index.size + record.end, record.message.id]);
      messages.push(record.message);
    }
    const last = lastLine(tail, index.size);
    if (last) Object.assign(index, last);
    return { index, messages };
  } finally {
    closeSync(file.fd);
  }
}

/**
 * Every message `sender` sent that is still in the store, live or archived, with `read_at` merged; a message both
 * live and archived (a crash mid-archive) once, as live. Updates the sender's index as a side effect.
 */
export function sentBy(root: string, sender: string): MailRecord[] {
  const index = loadIndex(root, sender);
  const next: SentIndex = { version: VERSION, sender, files: {} };
  const needle = new TextEncoder().encode(JSON.stringify(sender));
  const live: MailRecord[] = [];
  const archived: MailRecord[] = [];
  for (const agent of agentsWithMail(root)) {
    const livePath = mailboxPath(root, agent);
    const liveKey = livePath.slice(root.length + 1);
    const liveScan = scanFile(livePath, index.files[liveKey], sender, needle);
    const liveIds = new Set<string>();
    if (liveScan) {
      next.files[liveKey] = liveScan.index;
      const times = liveScan.messages.some((message) => message.read_flag) ? readTimes(livePath) : new Map<string, string>();
      for (const message of liveScan.messages) {
        liveIds.add(message.id);
        live.push({ message: withReadTime(message, times), archived: false });
      }
    }
    const archiveFile = archivePath(root, agent);
    const archiveKey = archiveFile.slice(root.length + 1);
    const archiveScan = scanFile(archiveFile, index.files[archiveKey], sender, needle);
    if (archiveScan) {
      next.files[archiveKey] = archiveScan.index;
      for (const message of archiveScan.messages) if (!liveIds.has(message.id)) archived.push({ message, archived: true });
    }
  }
  if (JSON.stringify(next.files) !== JSON.stringify(index.files)) saveIndex(root, next);
  return [...live, ...archived];
}
