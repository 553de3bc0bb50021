import { roleAddress } from "../mail/addresses.ts";
import type { MembershipKind, Memberships } from "../store/store.ts";
import { agentsElsewhere, recipientsOf, type CallerContext, type Recipient, type RemoteAgent } from "./context.ts";

/** A group or a role as `recipients` and `list-recipients` show it: its address and its members. */
interface ListEntry {
  name: string;
  members: string[];
}

export type AddressEntry = Recipient | RemoteAgent | ListEntry;

/** The lists of one kind, or none when they cannot be read (doctor says why; listing must not fail on it). */
async function listsOf(agent: CallerContext, kind: MembershipKind): Promise<Memberships> {
  try {
    return await agent.store.memberships(kind);
  } catch {
    return new Map();
  }
}

/**
 * Everything the caller can address: the windows of its session (its own marked, names tmux chose marked auto), the
 * agents registered from other hosts (with their host and when last seen), then each group as `@NAME` and each
 * role as `role:ROLE`, with their members.
 */
export async function addressBook(agent: CallerContext): Promise<AddressEntry[]> {
  const entries: AddressEntry[] = [...recipientsOf(agent), ...(await agentsElsewhere(agent))];
  for (const [name, members] of await listsOf(agent, "groups")) entries.push({ name: `@${name}`, members });
  for (const [role, members] of await listsOf(agent, "roles")) entries.push({ name: roleAddress(role), members });
  return entries;
}
