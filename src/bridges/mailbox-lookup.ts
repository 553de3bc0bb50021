/**
 * Looking messages up by id in a mailbox, for the rare moments a bridge needs it: the file a reply answers, and
 * whether imports cut short by a crash were already appended.
 */
import type { Message } from "../mail/message.ts";
import type { Store } from "../store/store.ts";

export async function findMessage(store: Store, agent: string, id: string): Promise<Message | null> {
  return (await store.find(agent, id))?.message ?? null;
}

/** The ids in a mailbox, live or archived: read once for all the imports a crash left to check, whatever their number. */
export async function mailboxIds(store: Store, agent: string): Promise<Set<string>> {
  return new Set((await store.mail(agent)).map((record) => record.message.id));
}
