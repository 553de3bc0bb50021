/**
 * Marking a message read, the one way receive, `read` and `reply` all do it: under the mailbox's receive lock (so no
 * receiver is showing it meanwhile), its time goes to the read journal, then `false` becomes `true ` in place
 * (five bytes), never a rewrite.
 */
import { closeSync } from "node:fs";
import { findReadFlag, movesOf, READ_MARK } from "../../mail/message.ts";
import { openForUpdate, readRange, writeFully, type OpenFile } from "../durable/files.ts";
import { mailboxPath, receiveLockPathOf } from "../local/layout.ts";
import { withLock } from "../durable/lock.ts";
import { appendReadTime } from "./read-times.ts";
import { recordsIn } from "./records.ts";

/** `update` on the mailbox, opened for writing in place under its receive lock; null when there is no mailbox. */
export function underReceiveLock<T>(path: string, update: (file: OpenFile) => Promise<T | null>): Promise<T | null> {
  return withLock(receiveLockPathOf(path), async () => {
    const file = openForUpdate(path);
    if (!file) return null;
    try {
      return await update(file);
    } finally {
      closeSync(file.fd);
    }
  });
}

/**
 * Marks the record of `id` whose read flag is at `flagOffset` read, the caller holding the receive lock; returns the
 * time recorded. The time first, then the mark: a record seen read then always has its time in the journal already,
 * which a rewrite reading without this lock relies on (read-times.ts); a time for a record still unread counts for
 * nothing. Not fsynced: a SIGKILL cannot lose a write that is in the page cache, and after a power cut the worst case
 * is this message shown again, never lost (a send is fsynced before its id is printed).
 */
export function markAt(path: string, fd: number, id: string, flagOffset: number, at: Date): string {
  const time = appendReadTime(path, id, at) ?? at.toISOString();
  writeFully(fd, READ_MARK, flagOffset);
  return time;
}

/**
 * Marks one message read by id (for `read` and `reply`). Returns the time it was marked, or null when the message is
 * not live or was already read (or, with `moves`, its record was moved another number of times).
 */
export async function markRead(root: string, agent: string, id: string, at: Date = new Date(), moves?: number): Promise<string | null> {
  const path = mailboxPath(root, agent);
  return underReceiveLock(path, async (file) => {
    const bytes = readRange(file.fd, 0, file.stat.size);
    const record = recordsIn(bytes, new TextEncoder().encode(JSON.stringify(id))).find((each) => each.message.id === id);
    if (record && moves !== undefined && movesOf(record.message) !== moves) return null;
    const flag = record && findReadFlag(bytes, record.start, record.end);
    if (!flag || flag.read) return null;
    return markAt(path, file.fd, id, flag.offset, at);
  });
}
