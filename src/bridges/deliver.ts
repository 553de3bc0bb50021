/**
 * Where an imported message goes: an agent's mailbox, a role's queue (`role:ROLE`: one member takes it), or a copy
 * in each member's mailbox for a group (`@GROUP`), all with the one id. Finishing an import a crash cut short
 * passes a `holds` check and skips each target that already holds the id, so the rest get it and nobody gets it twice;
 * a fresh import has a new id, which no mailbox can hold yet, so it reads no mailbox.
 */
import { AgentmailError } from "../core/errors.ts";
import { displayName } from "../core/names.ts";
import type { Store } from "../store/store.ts";
import type { BridgeRecord } from "./fields.ts";
import { mailboxIds } from "./mailbox-lookup.ts";

/** The mailboxes (agents' names, or `role:ROLE` queues) a message addressed `to` goes into. */
async function targetsOf(store: Store, to: string): Promise<string[]> {
  if (!to.startsWith("@")) return [to];
  const members = (await store.memberships("groups")).get(to.slice(1));
  if (!members || members.length === 0) {
    throw new AgentmailError("unknown_recipient", `there is no group ${displayName(to)}; create it with: agentmail group add`);
  }
  return members;
}

export async function deliverImported(
  store: Store,
  record: BridgeRecord,
  holds?: (mailbox: string, id: string) => Promise<boolean>,
): Promise<void> {
  for (const mailbox of await targetsOf(store, record.to)) {
    if (await holds?.(mailbox, record.id)) continue;
    // Checked by `holds`, or a new id: either way the store need not look for it again.
    await store.append({ ...record, to: mailbox }, holds ? { checked: true } : { freshId: true });
  }
}

/** A `holds` check for finishing cut-short imports: each mailbox's ids are read once, however many imports it has. */
export function idLookup(store: Store): (mailbox: string, id: string) => Promise<boolean> {
  const idsOf = new Map<string, Promise<Set<string>>>();
  return async (mailbox, id) => {
    if (!idsOf.has(mailbox)) idsOf.set(mailbox, mailboxIds(store, mailbox));
    return (await idsOf.get(mailbox)!).has(id);
  };
}
