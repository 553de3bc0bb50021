/**
 * A role's queue is an ordinary mailbox, kept apart from the agents' ones: in `<root>/.roles/` (a name starting
 * with a dot, which no agent's mailbox can have), under the mailbox name `role:<role>` (the address that reaches
 * it; its messages carry it in `to`). So a window named like a role never shares its queue, and every mailbox
 * function (append under the lock, take the oldest unread under the lock, count, cursor) works on it unchanged:
 * the per-mailbox lock is what lets exactly one member take each message.
 */
import { join } from "node:path";
import { isRoleAddress, roleAddress, roleOfAddress } from "../../mail/addresses.ts";
import { ROLES_DIR } from "../local/layout.ts";
import { listMailboxes } from "./mailbox.ts";

export const roleRoot = (root: string): string => join(root, ROLES_DIR);

/** Where a role's queue is: a mailbox root and the mailbox name in it. */
export interface RoleQueue {
  role: string;
  root: string;
  mailbox: string;
}

export function roleQueue(root: string, role: string): RoleQueue {
  return { role, root: roleRoot(root), mailbox: roleAddress(role) };
}

/** The roles that have a queue (mail was sent to them), sorted. */
export function rolesWithQueues(root: string): string[] {
  return listMailboxes(roleRoot(root))
    .filter(isRoleAddress)
    .map((mailbox) => roleOfAddress(mailbox)!);
}
