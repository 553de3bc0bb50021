/**
 * Where an imported message goes: an agent's mailbox, a role's queue (`role:ROLE`: one member takes it), or a copy
 * in each member's mailbox for a group (`@GROUP`), all with the one id. Each target that already holds the id is
 * passed over, so finishing an import a crash cut short delivers to the rest and never twice.
 */
import { AgentmailError } from "../core/errors.ts";
import { displayName } from "../core/names.ts";
import { appendMessage } from "../store/mailbox.ts";
import { readMemberships } from "../store/memberships.ts";
import { ensureRoot } from "../store/paths.ts";
import { roleQueue } from "../store/role-mail.ts";
import type { BridgeRecord } from "./fields.ts";
import { mailboxIds } from "./mailbox-lookup.ts";

interface Target {
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

export async function deliverImported(root: string, record: BridgeRecord): Promise<void> {
  for (const target of targetsOf(root, record.to)) {
    if (mailboxIds(target.root, target.mailbox).has(record.id)) continue;
    await appendMessage(ensureRoot(target.root), { ...record, to: target.mailbox });
  }
}
