/**
 * The record of a move into the archive under way, `<mailbox>.moving`: written (and made durable) before the first
 * record is appended to the archive, removed once the mailbox has been replaced. It names what a move killed
 * half-way left behind, so the next one, under the same archive lock, puts things back as they were:
 *   - the mailbox is still the file the move read (its inode): the move did not happen, so the archive is cut back to
 *     its size before it (removed, if the move created it) and the new mailbox it was writing is removed;
 *   - the mailbox is another file, or none: it was replaced (or removed, left empty), so the move is done.
 * Meanwhile a message may be both live and in the archive; readers show such a message once, as live.
 */
import { closeSync, ftruncateSync, lstatSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { openForRead, openForUpdate, readRange, replaceFile, syncDirectory } from "./files.ts";

export interface PendingMove {
  /** The inode of the mailbox the move read. */
  mailboxIno: number;
  /** The new mailbox being written: a temp file's name beside the mailbox, and its inode. */
  temp: string;
  tempIno: number;
  /** The archive before the move: its inode and size, or null when there was none. */
  archiveIno: number | null;
  archiveSize: number;
}

export const pendingMovePathOf = (mailbox: string) => `${mailbox}.moving`;

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
  const { mailboxIno, temp, tempIno, archiveIno, archiveSize } = value;
  const valid =
    isCount(mailboxIno) &&
    typeof temp === "string" &&
    temp.startsWith(".") &&
    basename(temp) === temp &&
    isCount(tempIno) &&
    (archiveIno === null || isCount(archiveIno)) &&
    isCount(archiveSize);
  return valid ? (value as PendingMove) : null;
}

function inodeOf(path: string): number | null {
  try {
    return lstatSync(path).ino;
  } catch {
    return null;
  }
}

/** Puts the archive back as it was before a move that did not happen (see the top of this file). */
function undoArchiveAppend(archive: string, move: PendingMove): void {
  if (move.archiveIno === null) {
    rmSync(archive, { force: true });
    return;
  }
  if (inodeOf(archive) !== move.archiveIno) return;
  const file = openForUpdate(archive);
  if (!file) return;
  try {
    if (file.stat.size > move.archiveSize) ftruncateSync(file.fd, move.archiveSize);
  } finally {
    closeSync(file.fd);
  }
}

/**
 * Settles a move that was cut short (a process killed or stopped for good, a failure): undone if the mailbox was not
 * replaced yet, else finished. Call holding the mailbox's archive lock, before anything else touches the archive.
 * An unreadable record (not agentmail's) is left alone.
 */
export function settlePendingMove(mailbox: string, archive: string, move: PendingMove | null = readPendingMove(mailbox)): void {
  if (!move) return;
  if (inodeOf(mailbox) === move.mailboxIno) undoArchiveAppend(archive, move);
  rmSync(join(dirname(mailbox), move.temp), { force: true });
  clearPendingMove(mailbox);
}
