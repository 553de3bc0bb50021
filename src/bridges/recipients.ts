/**
 * Who a peer's file may be delivered to. A FEAT-124 mailbox directory or a Roo `to-<slug>.md` is imported only when
 * its name is an agentmail agent: a name with a mailbox or a registration in the store (`status`, `onboard` and
 * the installed hooks register). Files for anyone else belong to the peer's own agents and are left alone.
 */
import { AgentmailError } from "../core/errors.ts";
import { displayName, encodeName } from "../core/names.ts";
import { listMailboxes } from "../store/mailbox.ts";
import { listStatuses } from "../store/status.ts";

export function knownAgents(root: string): Set<string> {
  return new Set([...listMailboxes(root), ...listStatuses(root).map((status) => status.name)]);
}

/** Why a configured D-Mail recipient cannot get mail yet (groups and roles come with the addressing work), or null. */
export function recipientProblem(recipient: string): string | null {
  if (recipient.startsWith("@") || recipient.startsWith("role:")) {
    return `recipient '${displayName(recipient)}' is a group or role, which this build cannot deliver to yet; route the kind to an agent`;
  }
  try {
    encodeName(recipient);
    return null;
  } catch (error) {
    return error instanceof AgentmailError ? error.message : String(error);
  }
}
