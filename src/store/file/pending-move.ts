/**
 * The record of a move into the archive under way, `<mailbox>.moving`, and the new mailbox it writes,
 * `.<mailbox>.new` beside it. The record is written (and made durable) once the new mailbox exists and before the
 * first record is appended to the archive; the move commits by renaming the new mailbox over the old one, and then
 * removes the record. So the next move, under the same archive lock, tells what one killed half-way left behind:
 *   - the new mailbox is still there: the rename did not happen and the live mailbox still holds every message,
 *     so the archive is cut back to its size before the move (removed, if the move created it) and the new
 *     mailbox is removed;
 *   - it is not: the move committed, and only its record is left to remove.
 * Not inodes: a mailbox removed when emptied and created again by a send may get its old inode back.
 * Meanwhile a message may be both live and in the archive; readers show such a message once, as live.
 */
import { closeSync, ftruncateSync, lstatSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { openForRead, openForUpdate, readRange, replaceFile, syncDirectory } from "../durable/files.ts";

export interface PendingMove {
  /** The archive before the move: its inode and size, or null when there was none. */
  archiveIno: number | null;
  archiveSize: number;
}

export const pendingMovePathOf = (mailbox: string) => `${mailbox}.moving`;

/** Where a move writes the new mailbox: a dot file, never taken for a mailbox; one at a time under the archive lock. */
export const newMailboxPathOf = (mailbox: string) => join(dirname(mailbox), `.${basename(mailbox)}.new`);

export function recordPendingMove(mailbox: string, move: PendingMove): void {
  replaceFile(pendingMovePathOf(mailbox), JSON.stringify(move) + "\n");
  syncDirectory(dirname(mailbox));
}

export function clearPendingMove(mailbox: string): void {
  rmSync(pendingMovePathOf(mailbox), { force: true });
}

const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

function readPendingMove(mailbox: string): PendingMove | null {
  const file = openForRead(pendingMovePathOf(mailbox));
  if (!file) return null;
  let value: Partial<PendingMove>;
  try {
    value = JSON.parse(new TextDecoder().decode(readRange(file.fd, 0, Math.min(file.stat.size, 4096))));
  } catch {
    value = {};
  } finally {
    closeSync(file.fd);
  }
  const { archiveIno, archiveSize } = value;
  return (archiveIno === null || isCount(archiveIno)) && isCount(archiveSize) ? { archiveIno, archiveSize } : null;
}

const exists = (path: string) => {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
};

/** Puts the archive back as it was before a move that did not happen (see the top of this file). */
function undoArchiveAppend(archive: string, move: PendingMove): void {
  if (move.archiveIno === null) {
    rmSync(archive, { force: true });
    return;
  }
  const file = openForUpdate(archive);
  if (!file) return;
  try {
    if (file.stat.ino === move.archiveIno && file.stat.size > move.archiveSize) ftruncateSync(file.fd, move.archiveSize);
  } finally {
    closeSync(file.fd);
  }
}

/**
 * Settles a move that was cut short (a process killed, a failure): undone if it did not commit, else finished (see
 * the top of this file). Call holding the mailbox's archive lock, before anything else touches the archive. A new
 * mailbox with no record is one whose move was killed before it appended anything: removed. With a record that is
 * not agentmail's the archive cannot be cut back; what it holds twice is shown once, as live.
 */
export function settlePendingMove(mailbox: string, archive: string, move: PendingMove | null = readPendingMove(mailbox)): void {
  const uncommitted = newMailboxPathOf(mailbox);
  if (exists(uncommitted)) {
    if (move) undoArchiveAppend(archive, move);
    rmSync(uncommitted, { force: true });
  }
  clearPendingMove(mailbox);
}
