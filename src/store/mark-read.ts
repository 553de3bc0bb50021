/**
 * Marks one message read by id (for `read` and `reply`), the way receive does: `false` becomes `true ` in place
 * under the receive lock (so no receiver is showing it meanwhile), never a rewrite, and the time goes to the read
 * journal.
 */
import { closeSync } from "node:fs";
import { findReadFlag, READ_MARK } from "../core/message.ts";
import { openForUpdate, readRange, writeFully } from "./files.ts";
import { withLock } from "./lock.ts";
import { mailboxPath, receiveLockPathOf } from "./mailbox.ts";
import { appendReadTime } from "./read-times.ts";
import { recordsIn } from "./records.ts";

/** Returns the time it was marked, or null when the message is not live or was already read. */
export async function markRead(root: string, agent: string, id: string, at: Date = new Date()): Promise<string | null> {
  const path = mailboxPath(root, agent);
  return withLock(
    receiveLockPathOf(path),
    async () => {
      const file = openForUpdate(path);
      if (!file) return null;
      try {
        const bytes = readRange(file.fd, 0, file.stat.size);
        const record = recordsIn(bytes, new TextEncoder().encode(JSON.stringify(id))).find((each) => each.message.id === id);
        const flag = record && findReadFlag(bytes, record.start, record.end);
        if (!flag || flag.read) return null;
        writeFully(file.fd, READ_MARK, flag.offset);
        return appendReadTime(path, id, at) ?? at.toISOString();
      } finally {
        closeSync(file.fd);
      }
    },
    { holdsWhileAlive: true },
  );
}
