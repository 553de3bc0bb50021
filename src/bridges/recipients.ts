/**
 * Who a peer's file may be delivered to. A FEAT-124 mailbox directory or a Roo `to-<slug>.md` is imported only when
 * its name is an agentmail agent (a name with a mailbox or a registration in the store: `status`, `onboard` and the
 * installed hooks register) or, for FEAT-124's tag mailboxes, a role (delivered to the role's queue). Files for
 * anyone else belong to the peer's own agents and are left alone. A D-Mail endpoint's recipients (`--to`, each
 * `--route`) are held to the same test, by `bridge add` and again by every sync: a D-Mail goes only where an import
 * can be read.
 */
import { nameProblem, parseAddress } from "../core/addresses.ts";
import { AgentmailError, type ErrorCode } from "../core/errors.ts";
import { displayName } from "../core/names.ts";
import { closestNames } from "../core/suggest.ts";
import type { Store } from "../store/store.ts";

/** What an import can be delivered to now. */
export interface Deliverable {
  /** Names with a mailbox or a registration. */
  agents: Set<string>;
  /** Roles with members: a FEAT-124 mailbox of that name is the role's (when no agent has the name). */
  roles: Set<string>;
  /** Groups with members. */
  groups: Set<string>;
}

const withMembers = (lists: ReadonlyMap<string, readonly string[]>) =>
  new Set([...lists].filter(([, members]) => members.length > 0).map(([name]) => name));

export async function deliverable(store: Store): Promise<Deliverable> {
  return {
    agents: new Set([...(await store.mailboxes()), ...(await store.statuses()).map((status) => status.name)]),
    roles: withMembers(await store.memberships("roles")),
    groups: withMembers(await store.memberships("groups")),
  };
}

export interface RecipientProblem {
  code: ErrorCode;
  /** What is wrong, as a clause: "no agent of this store is named 'bob2'". */
  reason: string;
  /** What to do about it. */
  fix: string;
}

const quoted = (name: string) => `'${displayName(name)}'`;
const ONE = "an agent's name, @GROUP or role:ROLE";

/**
 * Why a D-Mail recipient cannot take an import, or null: it must be one agent that has a mailbox or registered, a
 * group with members (`@GROUP`, a copy each) or a role with members (`role:ROLE`, one of them takes it). Not a list,
 * not @all (an import has no tmux session), not a bridge address, not a name agentmail would refuse.
 */
export function recipientProblem(recipient: string, known: Deliverable): RecipientProblem | null {
  if (recipient.includes(",")) {
    return { code: "usage", reason: `${quoted(recipient)} is a list`, fix: `give one recipient: ${ONE} (a group reaches several)` };
  }
  let address: ReturnType<typeof parseAddress>;
  try {
    address = parseAddress(recipient);
  } catch (error) {
    const reason = error instanceof AgentmailError ? error.message : String(error);
    return { code: "invalid_name", reason, fix: `give ${ONE}` };
  }
  switch (address.kind) {
    case "all":
      return {
        code: "usage",
        reason: "@all means the windows of one tmux session, and an import has none",
        fix: "make a group (agentmail group add NAME AGENT…) and give @NAME",
      };
    case "bridge":
      return {
        code: "usage",
        reason: `${quoted(recipient)} is a bridge address`,
        fix: `a D-Mail is delivered into agentmail: give ${ONE}`,
      };
    case "group":
      if (known.groups.has(address.name)) return null;
      return {
        code: "unknown_recipient",
        reason: `no group ${quoted(address.name)} with members`,
        fix: `create it: agentmail group add ${address.name} AGENT…`,
      };
    case "role":
      if (known.roles.has(address.role)) return null;
      return {
        code: "unknown_recipient",
        reason: `role ${quoted(address.role)} has no members`,
        fix: `an agent joins it with: agentmail join ${address.role}`,
      };
    case "agent": {
      const problem = nameProblem(address.name);
      if (problem)
        return { code: "invalid_name", reason: `${quoted(address.name)} cannot be an agent's name: ${problem}`, fix: `give ${ONE}` };
      if (known.agents.has(address.name)) return null;
      const closest = closestNames(address.name, [...known.agents]);
      const hint = closest.length > 0 ? ` (did you mean ${closest.map(quoted).join(", ")}?)` : "";
      return {
        code: "unknown_recipient",
        reason: `no agent of this store is named ${quoted(address.name)}${hint}`,
        fix: "an agent is known once it has mail or has registered ('agentmail status' in its window, or its hooks)",
      };
    }
  }
}
