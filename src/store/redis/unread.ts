/** What is unread in a mailbox on the Redis store: how many (one HGET), and which, a page of entries at a time. */
import { parseMessage, type Message } from "../../mail/message.ts";
import { encodeName } from "../../mail/names.ts";
import { LIST_PAGE } from "./entries.ts";
import type { Keyspace } from "./keyspace.ts";
import { UNREAD } from "./scripts.ts";

export async function countUnread(space: Keyspace, mailbox: string): Promise<number> {
  encodeName(mailbox);
  const count = Number(await space.command("HGET", [space.key("unread"), mailbox]));
  return Number.isFinite(count) && count > 0 ? count : 0;
}

export async function unreadIds(space: Keyspace, mailbox: string): Promise<string[]> {
  const ids: string[] = [];
  for (const message of await unread(space, mailbox)) ids.push(message.id);
  return ids;
}

/** A page of entries at a time (UNREAD): a mailbox of a million read messages never holds the server for long. */
export async function unread(space: Keyspace, mailbox: string): Promise<Message[]> {
  const keys = space.keys(mailbox);
  const unread: Message[] = [];
  for (let from = ""; ; ) {
    const [last, found] = (await space.run(UNREAD, [keys.mail, keys.read, keys.cursor], [from, String(LIST_PAGE)])) as [
      string,
      [string, string][],
    ];
    for (const [, record] of found) {
      const message = parseMessage(record);
      if (message) unread.push(message);
    }
    if (last === "") return unread;
    from = last;
  }
}
