/**
 * Where an imported message goes: an agent's mailbox, a role's queue (`role:ROLE`: one member takes it), or a copy
 * in each member's mailbox for a group (`@GROUP`), all with the one id. Finishing an import a crash cut short
 * passes a `holds` check and skips each target that already holds the id, so the rest get it and nobody gets it twice;
 * a fresh import has a new id, which no mailbox can hold yet, so it reads no mailbox.
 */
import { AgentmailError, type ErrorCode } from "../mail/errors.ts";
import { displayName } from "../mail/names.ts";
import type { Store } from "../store/store.ts";
import type { BridgeRecord } from "./fields.ts";
import { nameProblem, parseAddress } from "../mail/addresses.ts";
import { closestNames } from "../mail/suggest.ts";
import type { Message } from "../mail/message.ts";

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

/**
 * Who a peer's file may be delivered to. A FEAT-124 mailbox directory or a Roo `to-<slug>.md` is imported only when
 * its name is an agentmail agent (a name with a mailbox or a registration in the store: `status`, `onboard` and the
 * installed hooks register) or, for FEAT-124's tag mailboxes, a role (delivered to the role's queue). Files for
 * anyone else belong to the peer's own agents and are left alone. A D-Mail endpoint's recipients (`--to`, each
 * `--route`) are held to the same test, by `bridge add` and again by every sync: a D-Mail goes only where an import
 * can be read.
 */
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

/**
 * Looking messages up by id in a mailbox, for the rare moments a bridge needs it: the file a reply answers, and
 * whether imports cut short by a crash were already appended.
 */
export async function findMessage(store: Store, agent: string, id: string): Promise<Message | null> {
  return (await store.find(agent, id))?.message ?? null;
}

/** The ids in a mailbox, live or archived: read once for all the imports a crash left to check, whatever their number. */
export async function mailboxIds(store: Store, agent: string): Promise<Set<string>> {
  return new Set((await store.mail(agent)).map((record) => record.message.id));
}
