/**
 * Who a peer's file may be delivered to. A FEAT-124 mailbox directory or a Roo `to-<slug>.md` is imported only when
 * its name is an agentmail agent (a name with a mailbox or a registration in the store: `status`, `onboard` and the
 * installed hooks register) or, for FEAT-124's tag mailboxes, a role (delivered to the role's queue). Files for
 * anyone else belong to the peer's own agents and are left alone.
 */
import { AgentmailError } from "../core/errors.ts";
import { encodeName } from "../core/names.ts";
import type { Store } from "../store/store.ts";

export async function knownAgents(store: Store): Promise<Set<string>> {
  return new Set([...(await store.mailboxes()), ...(await store.statuses()).map((status) => status.name)]);
}

/** The roles with members: a FEAT-124 mailbox of that name is the role's (when no agent has the name). */
export async function knownRoles(store: Store): Promise<Set<string>> {
  return new Set([...(await store.memberships("roles"))].filter(([, members]) => members.length > 0).map(([role]) => role));
}

/** Why a configured D-Mail recipient (an agent, `@GROUP` or `role:ROLE`) is not a name mail can go to, or null. */
export function recipientProblem(recipient: string): string | null {
  try {
    encodeName(recipient.startsWith("@") ? recipient.slice(1) : recipient.startsWith("role:") ? recipient.slice(5) : recipient);
    return null;
  } catch (error) {
    return error instanceof AgentmailError ? error.message : String(error);
  }
}
