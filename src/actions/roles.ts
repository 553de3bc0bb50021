import { roleAddress, validateName } from "../mail/addresses.ts";
import { autoNameWarning } from "../mail/copy-plan.ts";
import { storeAt, whoIsCalling } from "../identity/caller.ts";
import type { Invocation } from "../identity/invocation.ts";

export interface Role {
  role: string;
  members: string[];
  /** Messages in the role's queue that no member has taken yet. */
  unread: number;
}

export interface Membership {
  role: string;
  members: string[];
  /** Whether this call changed the membership (false: the caller already was, or was not, a member). */
  changed: boolean;
  /** What the caller should hear (its name was chosen by tmux), or null. */
  warning: string | null;
}

async function changeMembership(invocation: Invocation, role: string, join: boolean): Promise<Membership> {
  validateName("role", role);
  const { store, caller } = await whoIsCalling(invocation, "mail");
  const me = caller.name;
  const own = caller.windows.find((window) => window.id === caller.windowId);
  const result = await store.updateMemberships("roles", (roles) => {
    const members = roles.get(role) ?? [];
    const changed = join !== members.includes(me);
    const next = !changed ? members : join ? [...members, me] : members.filter((member) => member !== me);
    roles.set(role, next);
    return { role, members: [...next], changed };
  });
  return { ...result, warning: join && own?.auto ? autoNameWarning(me) : null };
}

/** The caller joins a role: from now on its receive also takes the role's mail (its own first). */
export const joinRole = (invocation: Invocation, role: string) => changeMembership(invocation, role, true);

/** The caller leaves a role; mail already in the role's queue stays for the other members. */
export const leaveRole = (invocation: Invocation, role: string) => changeMembership(invocation, role, false);

/** Every role with members or mail waiting, sorted. */
export async function listRoles(invocation: Invocation): Promise<Role[]> {
  const store = await storeAt(invocation);
  const memberships = await store.memberships("roles");
  const names = [...new Set([...memberships.keys(), ...(await store.roleQueues())])].sort();
  const roles: Role[] = [];
  for (const role of names) roles.push({ role, members: memberships.get(role) ?? [], unread: await store.countUnread(roleAddress(role)) });
  return roles;
}
