/**
 * Each mailbox's archive: `<root>/.archive/<encoded name>.jsonl`, records in the mailbox's own format. The directory
 * starts with a dot, and no mailbox name can (names.ts encodes a leading dot), so an archive is never taken for a
 * mailbox, whatever the agent is called.
 *
 * Moving messages there is the one rewrite a mailbox gets, under the mailbox's lock (which guards its archive too):
 *   1. the moving records are appended to the archive in one write and fsynced (read times folded in as `read_at`);
 *   2. the live mailbox is rewritten without them (temp file, fsync, rename), read times folded into the read
 *      records it keeps, and its cursor and read journal are removed.
 * A crash after 1 and before 2 leaves a message both in the archive and live; readers show such a message once, as
 * live, and the next pass drops the live copy (every pass drops live records whose id the archive already holds).
 * A crash at any other point leaves the old or the new state. Nothing is lost and nothing shows twice.
 */
import { closeSync, fsyncSync, mkdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { AgentmailError } from "../core/errors.ts";
import { serializeMessage, type Message } from "../core/message.ts";
import { encodeName } from "../core/names.ts";
import { openForAppend, readRange, replaceFile, syncDirectory, writeFully } from "./files.ts";
import { removeCursor } from "./cursor.ts";
import { ARCHIVE_DIR, MAILBOX_SUFFIX as SUFFIX } from "./layout.ts";
import { withBothLocks } from "./lock.ts";
import { agentsWithFilesIn, lockPathOf, mailboxPath, receiveLockPathOf } from "./mailbox.ts";
import { readTimes, removeReadTimes, withReadTime } from "./read-times.ts";
import { completeLines, idsIn, parseLine, readWhole, recordsIn } from "./records.ts";

const NEWLINE = 0x0a;

export function archivePath(root: string, agent: string): string {
  return join(root, ARCHIVE_DIR, encodeName(agent) + SUFFIX);
}

/** The agents that have an archive. */
export const listArchives = (root: string): string[] => agentsWithFilesIn(join(root, ARCHIVE_DIR), SUFFIX);

/** Ids asked to be archived that are not live in the mailbox. */
export function notInMailbox(ids: readonly string[]): AgentmailError {
  return new AgentmailError(
    "not_found",
    `no message ${ids.join(", ")} in your mailbox; run 'agentmail inbox --all' to see the ids you can archive`,
  );
}

/** Which live messages to move: these ids (all must be live, or nothing moves), or those a rule picks. */
export type Selection = { ids: readonly string[] } | { pick: (message: Message) => boolean };

export interface ArchiveResult {
  /** The records moved (or that a dry run would move), as archived. */
  archived: Message[];
  /** The mailbox had (or would have) no line left and was (or would be) removed. */
  removed: boolean;
}

interface Plan {
  moving: Message[];
  kept: Uint8Array[];
  /** Live lines dropped because the archive already holds their id, or a moving id's later duplicates. */
  dropped: number;
  rewritten: boolean;
}

const encoder = new TextEncoder();

/** Decides, line by line, what moves, what stays (byte for byte unless a read time is folded in) and what goes. */
function plan(bytes: Uint8Array, selection: Selection, inArchive: (message: Message) => boolean, times: ReadonlyMap<string, string>): Plan {
  const wanted = "ids" in selection ? new Set(selection.ids) : null;
  const picks = (message: Message) => (wanted ? wanted.has(message.id) : "pick" in selection && selection.pick(message));
  const result: Plan = { moving: [], kept: [], dropped: 0, rewritten: false };
  const seen = new Set<string>();
  const moved = new Set<string>();
  const found = new Set<string>();
  let end = 0;
  for (const line of completeLines(bytes)) {
    end = line.end + 1;
    const raw = bytes.subarray(line.start, line.end + 1);
    const message = parseLine(bytes, line.start, line.end);
    if (!message) {
      result.kept.push(raw);
      continue;
    }
    const first = !seen.has(message.id);
    seen.add(message.id);
    if (moved.has(message.id) || inArchive(message)) {
      // Already archived (a crashed pass, or a later duplicate line): asking for it again is not an error.
      result.dropped++;
      found.add(message.id);
      continue;
    }
    if (first && picks(message)) {
      result.moving.push(withReadTime(message, times));
      moved.add(message.id);
      found.add(message.id);
      continue;
    }
    const folded = first ? withReadTime(message, times) : message;
    result.kept.push(folded === message ? raw : encoder.encode(serializeMessage(folded)));
    if (folded !== message) result.rewritten = true;
  }
  // A torn last line (its writer was killed) is kept as it is, like any line that is not a message.
  if (end < bytes.length) result.kept.push(bytes.subarray(end));
  if (wanted) {
    const missing = [...wanted].filter((id) => !found.has(id));
    if (missing.length > 0) throw notInMailbox(missing);
  }
  return result;
}

/**
 * Whether a live record is already in the archive: a copy a crashed pass left behind. The ids are read once; a
 * record with an archived id counts only if it is the same message (sender, time and body), so a new message that
 * happens to reuse an archived id (about one chance in 10^14 per pair) is never taken for a copy and dropped.
 */
function archivedCopy(bytes: Uint8Array | undefined): (message: Message) => boolean {
  if (!bytes) return () => false;
  const ids = idsIn(bytes);
  return (message) => {
    if (!ids.has(message.id)) return false;
    const copy = recordsIn(bytes, encoder.encode(JSON.stringify(message.id))).find((record) => record.message.id === message.id)?.message;
    return copy !== undefined && copy.from === message.from && copy.created_at === message.created_at && copy.message === message.message;
  };
}

/** Appends records to an archive with one write and fsyncs it; a torn last line is terminated first. */
function appendToArchive(root: string, path: string, records: Message[]): void {
  mkdirSync(join(root, ARCHIVE_DIR), { recursive: true, mode: 0o700 });
  const { fd, stat } = openForAppend(path);
  try {
    const torn = stat.size > 0 && readRange(fd, stat.size - 1, stat.size)[0] !== NEWLINE;
    writeFully(fd, Buffer.from((torn ? "\n" : "") + records.map(serializeMessage).join(""), "utf8"));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  if (stat.size === 0) {
    syncDirectory(join(root, ARCHIVE_DIR));
    syncDirectory(root);
  }
}

/**
 * Moves the selected messages of `agent`'s live mailbox into its archive (see the top of this file for the order
 * that makes a crash harmless), and removes a mailbox left with no line. With `dryRun`, only reports.
 */
export async function archiveMessages(root: string, agent: string, selection: Selection, dryRun: boolean): Promise<ArchiveResult> {
  const path = mailboxPath(root, agent);
  // Both locks, as for any rewrite: no append and no receive (which holds its lock while it shows) runs meanwhile.
  return withBothLocks(
    lockPathOf(path),
    receiveLockPathOf(path),
    async () => {
      const live = readWhole(path);
      if (!live) {
        if ("ids" in selection && selection.ids.length > 0) plan(new Uint8Array(), selection, () => false, new Map());
        return { archived: [], removed: false };
      }
      const archive = archivePath(root, agent);
      const { moving, kept, dropped, rewritten } = plan(live.bytes, selection, archivedCopy(readWhole(archive)?.bytes), readTimes(path));
      const removed = kept.length === 0;
      if (dryRun || (moving.length === 0 && dropped === 0 && !rewritten && !removed)) return { archived: moving, removed };
      if (moving.length > 0) appendToArchive(root, archive, moving);
      if (removed) unlinkSync(path);
      else replaceFile(path, Buffer.concat(kept));
      syncDirectory(root);
      removeCursor(path);
      removeReadTimes(path);
      return { archived: moving, removed };
    },
    { holdsWhileAlive: true },
  );
}

/** Deletes the archived records `drop` picks, under the mailbox's lock; an archive left empty is removed. */
export async function purgeArchive(root: string, agent: string, drop: (message: Message) => boolean, dryRun: boolean): Promise<Message[]> {
  const path = archivePath(root, agent);
  const mailbox = mailboxPath(root, agent);
  return withBothLocks(
    lockPathOf(mailbox),
    receiveLockPathOf(mailbox),
    async () => {
      const archive = readWhole(path);
      if (!archive) return [];
      const purged: Message[] = [];
      const kept: Uint8Array[] = [];
      let end = 0;
      for (const line of completeLines(archive.bytes)) {
        end = line.end + 1;
        const message = parseLine(archive.bytes, line.start, line.end);
        if (message && drop(message)) purged.push(message);
        else kept.push(archive.bytes.subarray(line.start, line.end + 1));
      }
      if (end < archive.bytes.length) kept.push(archive.bytes.subarray(end));
      if (dryRun || purged.length === 0) return purged;
      if (kept.length === 0) unlinkSync(path);
      else replaceFile(path, Buffer.concat(kept));
      syncDirectory(join(root, ARCHIVE_DIR));
      return purged;
    },
    { holdsWhileAlive: true },
  );
}
