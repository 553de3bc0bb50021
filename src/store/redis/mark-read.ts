/** Marking one message read on the Redis store by id (Store.markRead), in one script call (MARK_READ). */
import type { Keyspace } from "./keyspace.ts";
import { MARK_READ } from "./scripts.ts";

export async function markRead(
  space: Keyspace,
  mailbox: string,
  id: string,
  at: Date = new Date(),
  moves?: number,
): Promise<string | null> {
  const keys = space.keys(mailbox);
  const marked = (await space.run(
    MARK_READ,
    [keys.ids, keys.read, keys.lease, space.key("unread"), keys.mail, keys.rbell],
    [id, at.toISOString(), mailbox, moves === undefined ? "" : String(moves)],
  )) as string;
  return marked ? id : null;
}
