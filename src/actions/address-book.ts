import { readMemberships, type MembershipKind, type Memberships } from "../store/memberships.ts";
import { roleAddress } from "../core/addresses.ts";
import { recipientsOf, type CallerContext, type Recipient } from "./context.ts";

/** A group or a role as `recipients` and `list-recipients` show it: its address and its members. */
interface ListEntry {
  name: string;
  members: string[];
}

export type AddressEntry = Recipient | ListEntry;

/** The lists of one kind, or none when its file cannot be read (doctor says why; listing must not fail on it). */
function listsOf(root: string, kind: MembershipKind): Memberships {
  try {
    return readMemberships(root, kind);
  } catch {
    return new Map();
  }
}

/**
 * Everything the caller can address: the windows of its session (its own marked, names tmux chose marked auto),
 * then each group as `@NAME` and each role as `role:ROLE`, with their members.
 */
export function addressBook(agent: CallerContext): AddressEntry[] {
  const entries: AddressEntry[] = recipientsOf(agent);
  for (const [name, members] of listsOf(agent.root, "groups")) entries.push({ name: `@${name}`, members });
  for (const [role, members] of listsOf(agent.root, "roles")) entries.push({ name: roleAddress(role), members });
  return entries;
}
