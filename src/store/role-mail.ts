/**
 * A role's queue is an ordinary mailbox, kept apart from the agents' ones: in `<root>/.roles/` (a name starting
 * with a dot, which no agent's mailbox can have), under the mailbox name `role:<role>` (the address that reaches
 * it; its messages carry it in `to`). So a window named like a role never shares its queue, and every mailbox
 * function (append under the lock, take the oldest unread under the lock, count, cursor) works on it unchanged:
 * the per-mailbox lock is what lets exactly one member take each message.
 */
import { join } from "node:path";
import { roleAddress } from "../core/addresses.ts";
import { countUnread, listMailboxes, peekOldestUnread } from "./mailbox.ts";
import { rolesOf } from "./memberships.ts";

export const roleRoot = (root: string): string => join(root, ".roles");

/** Where a role's queue is: a mailbox root and the mailbox name in it. */
export interface RoleQueue {
  role: string;
  root: string;
  mailbox: string;
}

export function roleQueue(root: string, role: string): RoleQueue {
  return { role, root: roleRoot(root), mailbox: roleAddress(role) };
}

export function countRoleUnread(root: string, role: string): number {
  const queue = roleQueue(root, role);
  return countUnread(queue.root, queue.mailbox);
}

/** The roles that have a queue (mail was sent to them), sorted. */
export function rolesWithQueues(root: string): string[] {
  const prefix = roleAddress("");
  return listMailboxes(roleRoot(root))
    .filter((mailbox) => mailbox.startsWith(prefix))
    .map((mailbox) => mailbox.slice(prefix.length));
}

/**
 * The queues of `roles` that hold unread mail, the one whose oldest unread message is oldest first (ties keep the
 * order given). Looked at without locks: another member may take a message meanwhile, which only means the take
 * finds the next one, or none.
 */
export function queuesByAge(root: string, roles: readonly string[]): RoleQueue[] {
  const waiting: { queue: RoleQueue; at: string }[] = [];
  for (const role of roles) {
    const queue = roleQueue(root, role);
    try {
      const oldest = peekOldestUnread(queue.root, queue.mailbox);
      if (oldest) waiting.push({ queue, at: String(oldest.created_at ?? "") });
    } catch {
      // An unreadable queue goes last: the healthy ones are served first, then taking from it reports why.
      waiting.push({ queue, at: "\uffff" });
    }
  }
  return waiting.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0)).map((entry) => entry.queue);
}

/**
 * The role queues `agent` takes mail from besides its own mailbox, by role name: what `inbox` lists with the
 * mail marked by its role (each message's `to` is the queue's address, `role:<role>`).
 */
export function queuesOf(root: string, agent: string): RoleQueue[] {
  return rolesOf(root, agent).map((role) => roleQueue(root, role));
}
