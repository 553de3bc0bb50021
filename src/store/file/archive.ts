/**
 * Each mailbox's archive: `<root>/.archive/<encoded name>.jsonl`, records in the mailbox's own format. The directory
 * starts with a dot, and no mailbox name can (names.ts encodes a leading dot), so an archive is never taken for a
 * mailbox, whatever the agent is called.
 *
 * What rewrites a mailbox or its archive (moving messages there, purging it) holds the mailbox's archive lock
 * (`<mailbox>.alock`) from start to end; senders and receivers never take it, so a long rewrite holds them up only
 * for the moments it needs the mailbox's own locks (archive-move.ts). A move, in order:
 *   1. the new mailbox is created beside the old one (`.<mailbox>.new`) and the record of the move written
 *      (pending-move.ts);
 *   2. the moving records are appended to the archive (read times folded in as `read_at`) and the kept ones to the
 *      new mailbox, both fsynced;
 *   3. under the mailbox's locks, the new mailbox catches up and is renamed over the old one (the commit); the
 *      record is removed.
 * A crash before the commit leaves messages both in the archive and live; readers show such a message once, as
 * live, and the next move or purge first cuts the archive back to where the record says it was. A crash after it
 * leaves the new state. Nothing is lost and nothing shows twice.
 */
import { unlinkSync } from "node:fs";
import { join } from "node:path";
import type { Message } from "../../mail/message.ts";
import { encodeName } from "../../mail/names.ts";
import { moveMessages } from "./archive-move.ts";
import { ARCHIVE_DIR, archiveLockPathOf, MAILBOX_SUFFIX as SUFFIX, mailboxPath } from "../local/layout.ts";
import { replaceFile, syncDirectory } from "../durable/files.ts";
import { withLock } from "../durable/lock.ts";
import { agentsWithFilesIn } from "./mailbox.ts";
import { settlePendingMove } from "./pending-move.ts";
import { completeLines, parseLine, readWhole } from "./records.ts";
import type { ArchiveResult, ReadProgress, Selection } from "../store.ts";

export { notInMailbox } from "./archive-move.ts";

export function archivePath(root: string, agent: string): string {
  return join(root, ARCHIVE_DIR, encodeName(agent) + SUFFIX);
}

/** The agents that have an archive. */
export const listArchives = (root: string): string[] => agentsWithFilesIn(join(root, ARCHIVE_DIR), SUFFIX);

/**
 * Runs `rewrite` holding the mailbox's archive lock, once a move that was cut short has been settled (undone, or
 * finished: pending-move.ts), so it finds the archive as a finished move left it.
 */
function underArchiveLock<T>(root: string, agent: string, rewrite: (mailbox: string, archive: string) => Promise<T>): Promise<T> {
  const mailbox = mailboxPath(root, agent);
  const archive = archivePath(root, agent);
  return withLock(archiveLockPathOf(mailbox), () => {
    settlePendingMove(mailbox, archive);
    return rewrite(mailbox, archive);
  });
}

/**
 * Moves the selected messages of `agent`'s live mailbox into its archive (see the top of this file), and removes a
 * mailbox left with no line. With `dryRun`, only reports.
 */
export function archiveMessages(
  root: string,
  agent: string,
  selection: Selection,
  dryRun: boolean,
  onBytes?: ReadProgress,
): Promise<ArchiveResult> {
  return underArchiveLock(root, agent, (mailbox, archive) => moveMessages(mailbox, archive, selection, dryRun, onBytes));
}

/**
 * Deletes the archived records `drop` picks (temp file, fsync, rename); an archive left empty is removed. Only the
 * archive lock: the live mailbox is not touched, so its senders and receivers never wait for a purge.
 */
export function purgeArchive(root: string, agent: string, drop: (message: Message) => boolean, dryRun: boolean): Promise<Message[]> {
  return underArchiveLock(root, agent, async (_mailbox, path) => {
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
  });
}
