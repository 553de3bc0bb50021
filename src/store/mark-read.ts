/**
 * Marks one message read by id (for `read` and `reply`), the way receive does: `false` becomes `true ` in place
 * under the receive lock (so no receiver is showing it meanwhile), never a rewrite, and the time goes to the read
 * journal just before.
 */
import { findReadFlag, movesOf, READ_MARK } from "../core/message.ts";
import { readRange, writeFully } from "./files.ts";
import { mailboxPath, underReceiveLock } from "./mailbox.ts";
import { appendReadTime } from "./read-times.ts";
import { recordsIn } from "./records.ts";

/**
 * Returns the time it was marked, or null when the message is not live or was already read (or, with `moves`, its
 * record was moved another number of times).
 */
export async function markRead(root: string, agent: string, id: string, at: Date = new Date(), moves?: number): Promise<string | null> {
  const path = mailboxPath(root, agent);
  return underReceiveLock(path, async (file) => {
    const bytes = readRange(file.fd, 0, file.stat.size);
    const record = recordsIn(bytes, new TextEncoder().encode(JSON.stringify(id))).find((each) => each.message.id === id);
    if (record && moves !== undefined && movesOf(record.message) !== moves) return null;
    const flag = record && findReadFlag(bytes, record.start, record.end);
    if (!flag || flag.read) return null;
    // The time before the mark, as receive does (see takeOldestUnread).
    const time = appendReadTime(path, id, at) ?? at.toISOString();
    writeFully(file.fd, READ_MARK, flag.offset);
    return time;
  });
}
