/**
 * Where an imported message goes: an agent's mailbox, a role's queue (`role:ROLE`: one member takes it), or a copy
 * in each member's mailbox for a group (`@GROUP`), all with the one id. Finishing an import a crash cut short
 * passes a `holds` check and skips each target that already holds the id, so the rest get it and nobody gets it twice;
 * a fresh import has a new id, which no mailbox can hold yet, so it reads no mailbox.
 */
import { AgentmailError } from "../core/errors.ts";
import { displayName } from "../core/names.ts";
import { appendMessage } from "../store/mailbox.ts";
import { readMemberships } from "../store/memberships.ts";
import { ensureRoot } from "../store/paths.ts";
import { roleQueue } from "../store/role-mail.ts";
import type { BridgeRecord } from "./fields.ts";
import { mailboxIds } from "./mailbox-lookup.ts";

export interface Target {
  root: string;
  mailbox: string;
}

function targetsOf(root: string, to: string): Target[] {
  if (to.startsWith("role:")) {
    const queue = roleQueue(root, to.slice("role:".length));
    return [{ root: queue.root, mailbox: queue.mailbox }];
  }
  if (to.startsWith("@")) {
    const members = readMemberships(root, "groups").get(to.slice(1));
    if (!members || members.length === 0) {
      throw new AgentmailError("unknown_recipient", `there is no group ${displayName(to)}; create it with: agentmail group add`);
    }
    return members.map((member) => ({ root, mailbox: member }));
  }
  return [{ root, mailbox: to }];
}

export async function deliverImported(root: string, record: BridgeRecord, holds?: (target: Target, id: string) => boolean): Promise<void> {
  for (const target of targetsOf(root, record.to)) {
    if (holds?.(target, record.id)) continue;
    await appendMessage(ensureRoot(target.root), { ...record, to: target.mailbox });
  }
}

/** A `holds` check for finishing cut-short imports: each mailbox's ids are read once, however many imports it has. */
export function idLookup(): (target: Target, id: string) => boolean {
  const idsOf = new Map<string, Set<string>>();
  return (target, id) => {
    const key = `${target.root}\0${target.mailbox}`;
    if (!idsOf.has(key)) idsOf.set(key, mailboxIds(target.root, target.mailbox));
    return idsOf.get(key)!.has(id);
  };
}
