/** What a sender sent, on the Redis store (Store.sentBy): its index of copies, each looked up where it is now. */
import { WIDEST_LINE } from "../../mail/format.ts";
import { parseMessage } from "../../mail/message.ts";
import { withoutMovedSources } from "../../mail/moves.ts";
import { byCreation, newestFirst } from "../../mail/order.ts";
import type { MailRecord } from "../store.ts";
import { type Entry, field, LIST_PAGE, withReadState } from "./entries.ts";
import type { Keyspace, MailboxKeys } from "./keyspace.ts";
import { LOOK_UP } from "./scripts.ts";

/**
 * Reads the sender's index (every copy it sent, in order) and looks each copy up where it is now, in one script;
 * copies deleted since (a purged archive) leave the index.
 */
export async function sentBy(space: Keyspace, sender: string, whole = true): Promise<MailRecord[]> {
  const index = space.sentKey(sender);
  if (!index) return [];
  const entries = (await space.command("XRANGE", [index, "-", "+"])) as Entry[];
  if (entries.length === 0) return [];
  const positions = new Map<string, number>();
  const keys: string[] = [];
  const args: string[] = [];
  const usable: Entry[] = [];
  // A copy moved back to a mailbox it left is indexed there twice: it is one copy, looked up once.
  const copies = new Set<string>();
  for (const entry of entries) {
    const mailbox = field(entry[1], "to");
    const copy = JSON.stringify([mailbox, field(entry[1], "id")]);
    if (copies.has(copy)) continue;
    copies.add(copy);
    let position = positions.get(mailbox);
    if (position === undefined) {
      let keysOf: MailboxKeys;
      try {
        keysOf = space.keys(mailbox);
      } catch {
        continue;
      }
      position = positions.size + 1;
      positions.set(mailbox, position);
      keys.push(keysOf.ids, keysOf.mail, keysOf.read, keysOf.archids, keysOf.arch);
    }
    usable.push(entry);
    args.push(String(position), field(entry[1], "id"));
  }
  // A page of copies per call: a sender of a million copies looked up in one call held the server past its timeout.
  const found: [string, string?, string?][] = [];
  for (let at = 0; at < args.length; at += 2 * LIST_PAGE) {
    const page = (await space.run(LOOK_UP, keys, args.slice(at, at + 2 * LIST_PAGE))) as [string, string?, string?][];
    for (const each of page) found.push(each);
  }
  const out: MailRecord[] = [];
  const gone: string[] = [];
  found.forEach(([state, record, readAt], i) => {
    const message = state ? parseMessage(record!) : null;
    if (!message) {
      if (!state) gone.push(usable[i]![0]);
      return;
    }
    if (!whole && message.message.length > WIDEST_LINE) message.message = message.message.slice(0, WIDEST_LINE);
    out.push({ message: withReadState(message, readAt), archived: state === "archived" });
  });
  if (gone.length > 0) await space.command("XDEL", [index, ...gone]);
  // The index is in the order the copies were stored, which a migration (mailbox by mailbox) does not keep.
  return byCreation(withoutMovedSources(out));
}

/** sentBy's list reversed, in one batch: the Redis index holds whole copies, so the list is in memory anyway. */
export async function* sentNewestFirst(space: Keyspace, sender: string, whole = true): AsyncGenerator<MailRecord[]> {
  const records = newestFirst(await sentBy(space, sender, whole));
  if (records.length > 0) yield records;
}
