import { closeSync, fsyncSync, readdirSync, rmSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { AgentmailError } from "../core/errors.ts";
import { findReadFlag, parseMessage, READ_MARK, serializeMessage, UNREAD_MARK, type Message } from "../core/message.ts";
import { decodeName, encodeName } from "../core/names.ts";
import { openForAppend, openForRead, openForUpdate, openForWrite, readRange, replaceFile, syncDirectory, writeFully } from "./files.ts";
import { withLock } from "./lock.ts";

const NEWLINE = 0x0a;
const decoder = new TextDecoder();
const MAILBOX_SUFFIX = ".jsonl";

export function mailboxPath(root: string, agent: string): string {
  return join(root, encodeName(agent) + MAILBOX_SUFFIX);
}

export const lockPathOf = (mailbox: string) => `${mailbox}.lock`;
const cursorPathOf = (mailbox: string) => `${mailbox}.cursor`;

/** Called for each line a reader passes over because it is not a message it can deliver. */
export type SkipReporter = (mailbox: string, byteOffset: number, reason: string) => void;

/**
 * Appends one message as one whole line with one write, under the mailbox lock, then fsyncs: when send prints
 * an id, the message is on disk. A torn last line (a writer SIGKILLed mid-append) is terminated first so the new
 * line is never glued onto it.
 */
export async function appendMessage(root: string, message: Message): Promise<void> {
  const path = mailboxPath(root, message.to);
  const line = Buffer.from(serializeMessage(message), "utf8");
  await withLock(lockPathOf(path), async () => {
    const { fd, stat } = openForAppend(path);
    try {
      const torn = stat.size > 0 && readRange(fd, stat.size - 1, stat.size)[0] !== NEWLINE;
      writeFully(fd, torn ? Buffer.concat([Buffer.from("\n"), line]) : line);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (stat.size === 0) syncDirectory(root);
  });
}

/**
 * The cursor is a hint kept beside each mailbox: where the unread part starts. It names the mailbox's inode, the
 * last line it passed (its start and its message id) and the offset just after it; every line before that offset
 * is read or not a message. Receive starts there, so its cost does not grow with the read history. It is trusted
 * only when the inode is the same (cleanup's rewrite makes a new one) and that last line is still where it was,
 * with the same id and still read, so a mailbox truncated, replaced or rewritten in place, or its last received
 * message marked unread again by hand, is scanned from the start instead.
 */
interface Cursor {
  ino: number;
  lineStart: number;
  offset: number;
  id: string;
}

const CURSOR_WIDTH = 64;
const CURSOR_FORMAT = /^(\d+) (\d+) (\d+) ([A-Za-z0-9]+)\s*$/;

function readCursor(path: string): Cursor | null {
  try {
    const file = openForRead(cursorPathOf(path));
    if (!file) return null;
    try {
      const match = CURSOR_FORMAT.exec(decoder.decode(readRange(file.fd, 0, CURSOR_WIDTH)));
      return match ? { ino: Number(match[1]), lineStart: Number(match[2]), offset: Number(match[3]), id: match[4]! } : null;
    } finally {
      closeSync(file.fd);
    }
  } catch {
    return null;
  }
}

/**
 * Fixed width and written in place with one pwrite, so a reader sees the old or the new value. A cursor that
 * cannot be written (a symlink or FIFO planted at its path, a full disk) only costs the next receive a full scan.
 */
function writeCursor(path: string, cursor: Cursor | null): void {
  try {
    if (cursor === null) return void rmSync(cursorPathOf(path), { force: true });
    const { fd } = openForWrite(cursorPathOf(path));
    try {
      const text = `${cursor.ino} ${cursor.lineStart} ${cursor.offset} ${cursor.id}`;
      writeFully(fd, Buffer.from(text.padEnd(CURSOR_WIDTH - 1) + "\n"), 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    // The cursor is only a hint.
  }
}

/** The bytes from where unread mail can start to the end of the file, and the file offset they start at. */
function unreadRegion(path: string, fd: number, ino: number, size: number): { base: number; bytes: Uint8Array } {
  const cursor = readCursor(path);
  if (cursor && cursor.ino === ino && cursor.lineStart < cursor.offset && cursor.offset <= size) {
    const bytes = readRange(fd, cursor.lineStart, size);
    const lastLineEnd = cursor.offset - cursor.lineStart - 1;
    const anchor = bytes[lastLineEnd] === NEWLINE ? parseMessage(decoder.decode(bytes.subarray(0, lastLineEnd))) : null;
    if (anchor?.id === cursor.id && anchor.read_flag) {
      return { base: cursor.offset, bytes: bytes.subarray(lastLineEnd + 1) };
    }
  }
  return { base: 0, bytes: readRange(fd, 0, size) };
}

interface Line {
  start: number;
  end: number;
}

/** Complete lines of bytes[from, ...): a trailing part with no newline is a line still being written, or torn. */
function* lines(bytes: Uint8Array, from: number): Generator<Line> {
  let start = from;
  while (start < bytes.length) {
    const end = bytes.indexOf(NEWLINE, start);
    if (end === -1) return;
    yield { start, end };
    start = end + 1;
  }
}

/**
 * Whether anything was appended after the cursor, looked at without the lock: a reader sees whole lines or an
 * incomplete tail, never a torn line in the middle. With nothing new, which is what a hook finds on most turns,
 * a receive ends here without creating, writing and removing a lock file.
 */
function hasLinesPastCursor(path: string): boolean {
  const file = openForRead(path);
  if (!file) return false;
  try {
    return unreadRegion(path, file.fd, file.stat.ino, file.stat.size).bytes.includes(NEWLINE);
  } finally {
    closeSync(file.fd);
  }
}

/**
 * Takes the oldest unread message of `agent`'s mailbox and marks it read in place (five bytes, `false` becomes
 * `true `), under the mailbox lock: concurrent receivers never get the same message. The mailbox is never
 * rewritten. Lines that are not messages are reported and skipped, never deleted.
 */
export async function takeOldestUnread(root: string, agent: string, onSkip: SkipReporter): Promise<Message | null> {
  const path = mailboxPath(root, agent);
  if (!hasLinesPastCursor(path)) return null;
  return withLock(lockPathOf(path), async () => {
    const file = openForUpdate(path);
    if (!file) return null;
    try {
      const { fd, stat } = file;
      const { base, bytes } = unreadRegion(path, fd, stat.ino, stat.size);
      let lastRead: Line | null = null;
      for (const line of lines(bytes, 0)) {
        const flag = findReadFlag(bytes, line.start, line.end);
        if (flag?.read) {
          lastRead = line;
          continue;
        }
        const message = parseMessage(decoder.decode(bytes.subarray(line.start, line.end)));
        if (!flag || !message) {
          onSkip(path, base + line.start, "it is not a message (unparseable, or missing id, from, message or read_flag)");
          continue;
        }
        // Not fsynced: a SIGKILL cannot lose a write that is in the page cache, and after a power cut the worst
        // case is this message shown again, never lost (a send is fsynced before its id is printed).
        writeFully(fd, READ_MARK, base + flag.offset);
        writeCursor(path, { ino: stat.ino, lineStart: base + line.start, offset: base + line.end + 1, id: message.id });
        message.read_flag = true;
        return message;
      }
      // Nothing unread: move the cursor past the read history anyway, or every empty receive would scan it again.
      const anchor = lastRead && parseMessage(decoder.decode(bytes.subarray(lastRead.start, lastRead.end)));
      if (lastRead && anchor) writeCursor(path, { ino: stat.ino, lineStart: base + lastRead.start, offset: base + lastRead.end + 1, id: anchor.id });
      return null;
    } finally {
      closeSync(file.fd);
    }
  });
}

/**
 * Undoes a delivery whose message could not be shown (stdout closed), so the message stays unread. The cursor
 * is dropped, since the message now sits before it.
 */
export async function restoreUnread(root: string, agent: string, id: string): Promise<void> {
  const path = mailboxPath(root, agent);
  await withLock(lockPathOf(path), async () => {
    const file = openForUpdate(path);
    if (!file) throw new AgentmailError("io", `${path} vanished while message ${id} was being delivered`);
    try {
      const bytes = readRange(file.fd, 0, file.stat.size);
      for (const line of lines(bytes, 0)) {
        const flag = findReadFlag(bytes, line.start, line.end);
        if (!flag?.read) continue;
        const message = parseMessage(decoder.decode(bytes.subarray(line.start, line.end)));
        if (message?.id !== id) continue;
        writeFully(file.fd, UNREAD_MARK, flag.offset);
        fsyncSync(file.fd);
        writeCursor(path, null);
        return;
      }
    } finally {
      closeSync(file.fd);
    }
  });
}

/** The agents that have a mailbox in the store (files that are not mailboxes are ignored). */
export function listMailboxes(root: string): string[] {
  let files: string[];
  try {
    files = readdirSync(root);
  } catch {
    return [];
  }
  const agents: string[] = [];
  for (const file of files) {
    if (!file.endsWith(MAILBOX_SUFFIX)) continue;
    const agent = decodeName(file.slice(0, -MAILBOX_SUFFIX.length));
    if (agent !== null) agents.push(agent);
  }
  return agents.sort();
}

/**
 * Unread messages in a mailbox, counted without the lock (a reader only; a line being appended is not complete
 * yet and is not counted). Starts at the cursor like receive, so it is cheap however long the history is.
 */
export function countUnread(root: string, agent: string): number {
  const path = mailboxPath(root, agent);
  const file = openForRead(path);
  if (!file) return 0;
  try {
    const { bytes } = unreadRegion(path, file.fd, file.stat.ino, file.stat.size);
    let unread = 0;
    for (const line of lines(bytes, 0)) if (findReadFlag(bytes, line.start, line.end)?.read === false) unread++;
    return unread;
  } finally {
    closeSync(file.fd);
  }
}

export interface Compaction {
  dropped: number;
  /** The mailbox had (or would have) no line left and was (or would be) removed. */
  removed: boolean;
}

/**
 * The only rewrite a mailbox ever gets: drop the messages `drop` picks, under the mailbox lock (so no append or
 * receive runs meanwhile), by writing a new file and renaming it over the old one (a reader sees the old or the new
 * file, never a torn one). Unread messages and lines that are not messages are always kept. A mailbox left with no
 * line is removed. With `dryRun`, only counts.
 */
export async function compactMailbox(root: string, agent: string, drop: (message: Message) => boolean, dryRun: boolean): Promise<Compaction> {
  const path = mailboxPath(root, agent);
  return withLock(lockPathOf(path), async () => {
    const file = openForRead(path);
    if (!file) return { dropped: 0, removed: false };
    let bytes: Uint8Array;
    try {
      bytes = readRange(file.fd, 0, file.stat.size);
    } finally {
      closeSync(file.fd);
    }
    const kept: Uint8Array[] = [];
    let dropped = 0;
    let end = 0;
    for (const line of lines(bytes, 0)) {
      end = line.end + 1;
      const flag = findReadFlag(bytes, line.start, line.end);
      const message = flag?.read ? parseMessage(decoder.decode(bytes.subarray(line.start, line.end))) : null;
      if (message && drop(message)) dropped++;
      else kept.push(bytes.subarray(line.start, line.end + 1));
    }
    if (end < bytes.length) kept.push(bytes.subarray(end));
    const removed = kept.length === 0;
    if (dryRun || (dropped === 0 && !removed)) return { dropped, removed };
    if (removed) unlinkSync(path);
    else replaceFile(path, Buffer.concat(kept));
    writeCursor(path, null);
    syncDirectory(root);
    return { dropped, removed };
  });
}

/**
 * The oldest unread message of a mailbox, looked at without the lock and without taking it (a role's queue is
 * picked by its oldest message before one is taken from it); null when none.
 */
export function peekOldestUnread(root: string, agent: string): Message | null {
  const path = mailboxPath(root, agent);
  const file = openForRead(path);
  if (!file) return null;
  try {
    const { bytes } = unreadRegion(path, file.fd, file.stat.ino, file.stat.size);
    for (const line of lines(bytes, 0)) {
      if (findReadFlag(bytes, line.start, line.end)?.read !== false) continue;
      const message = parseMessage(decoder.decode(bytes.subarray(line.start, line.end)));
      if (message) return message;
    }
    return null;
  } finally {
    closeSync(file.fd);
  }
}

/**
 * Why a mailbox's cursor would not be used (see Cursor), or null when it would: for `doctor`, which removes such a
 * cursor (it is only a hint; without it the next receive scans the mailbox once).
 */
export function cursorProblem(root: string, agent: string): string | null {
  const path = mailboxPath(root, agent);
  const cursor = readCursor(path);
  if (!cursor) return "it is not a cursor agentmail wrote";
  const file = openForRead(path);
  if (!file) return "its mailbox is gone";
  try {
    if (file.stat.ino !== cursor.ino) return "it belongs to an earlier file of that mailbox";
    const { base } = unreadRegion(path, file.fd, file.stat.ino, file.stat.size);
    return base === cursor.offset ? null : "the line it points at is no longer there, or no longer read";
  } finally {
    closeSync(file.fd);
  }
}
