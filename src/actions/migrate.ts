/**
 * `agentmail migrate`: copies one store's mail into another (this repository's file store to the Redis store at a
 * URL, or back), through the Store interface on both sides: every mailbox and role queue with its read state and
 * read times, archived mail (archived again on the other side), the group and role lists, and the agents' statuses.
 *
 * Exactly once, and resumable: each mailbox of the target is read first, and only the messages it lacks are
 * appended (and Store.append never stores an id twice in a mailbox); archived messages are appended, then archived.
 * A run killed anywhere leaves a target that a second run completes without a duplicate. The source is only read.
 */
import { roleAddress } from "../core/addresses.ts";
import { byCreation } from "../core/creation-order.ts";
import { AgentmailError } from "../core/errors.ts";
import type { MailRecord, MembershipKind, Store } from "../store/store.ts";
import { storeAt, type Invocation } from "./context.ts";

export interface MigrationReport {
  from: string;
  to: string;
  dry_run: boolean;
  /** Mailboxes (agents' and role queues) that had mail to copy. */
  mailboxes: number;
  /** Messages copied (or that a dry run would copy). */
  messages: number;
  /** Of those, messages archived on the target as they were on the source. */
  archived: number;
  /** Messages the target already held (an earlier, interrupted run). */
  already: number;
  /** Group and role lists the target lacked or lacked members of, and statuses it had none for. */
  groups: number;
  roles: number;
  statuses: number;
}

/** The source's mailboxes: agents' live ones, role queues, and those with only an archive left. */
async function mailboxesOf(store: Store): Promise<string[]> {
  const roles = (await store.roleQueues()).map(roleAddress);
  return [...new Set([...(await store.mailboxes()), ...roles, ...(await store.archives())])].sort();
}

/** Copies one mailbox's messages the target lacks, oldest first, then archives those archived on the source. */
async function copyMailbox(source: Store, target: Store, mailbox: string, dryRun: boolean, report: MigrationReport): Promise<void> {
  const records: MailRecord[] = byCreation(await source.mail(mailbox, { live: true, archived: true }));
  if (records.length === 0) return;
  const held = new Map((await target.mail(mailbox, { live: true, archived: true })).map((record) => [record.message.id, record.archived]));
  const toArchive: string[] = [];
  let copied = 0;
  for (const { message, archived } of records) {
    const there = held.get(message.id);
    if (there === undefined) {
      if (!dryRun) await target.append({ ...message, to: mailbox });
      copied++;
      if (archived) report.archived++;
    } else report.already++;
    if (archived && there !== true) toArchive.push(message.id);
  }
  if (toArchive.length > 0 && !dryRun) await target.archive(mailbox, { ids: toArchive }, false);
  report.messages += copied;
  if (copied > 0) report.mailboxes++;
}

/** Adds the source's lists and members the target lacks; returns how many lists changed. */
async function copyLists(source: Store, target: Store, kind: MembershipKind, dryRun: boolean): Promise<number> {
  const lists = await source.memberships(kind);
  const merge = (into: Map<string, string[]>) => {
    let changed = 0;
    for (const [name, members] of lists) {
      const there = into.get(name) ?? [];
      const missing = members.filter((member) => !there.includes(member));
      if (missing.length === 0) continue;
      into.set(name, [...there, ...missing]);
      changed++;
    }
    return changed;
  };
  if (lists.size === 0) return 0;
  return dryRun ? merge(new Map(await target.memberships(kind))) : target.updateMemberships(kind, merge);
}

/** Statuses of agents the target has none for, with when they were last set (a newer one on the target wins). */
async function copyStatuses(source: Store, target: Store, dryRun: boolean): Promise<number> {
  let copied = 0;
  for (const entry of await source.statuses()) {
    if (await target.status(entry.name)) continue;
    copied++;
    if (dryRun) continue;
    const pin = entry.window && entry.server && entry.host ? { window: entry.window, server: entry.server, host: entry.host } : undefined;
    await target.writeStatus(entry.name, entry.status, entry.pane, new Date(entry.updated_at), pin);
  }
  return copied;
}

/** Copies everything `source` holds that `target` lacks (see the top of this file). */
export async function migrateMail(source: Store, target: Store, dryRun: boolean): Promise<MigrationReport> {
  const report: MigrationReport = {
    from: source.location,
    to: target.location,
    dry_run: dryRun,
    mailboxes: 0,
    messages: 0,
    archived: 0,
    already: 0,
    groups: 0,
    roles: 0,
    statuses: 0,
  };
  // Lists first: role mail copied before its role's members would have no one to remind.
  report.groups = await copyLists(source, target, "groups", dryRun);
  report.roles = await copyLists(source, target, "roles", dryRun);
  report.statuses = await copyStatuses(source, target, dryRun);
  for (const mailbox of await mailboxesOf(source)) await copyMailbox(source, target, mailbox, dryRun, report);
  return report;
}

export interface MigrateRequest {
  /** Copy this repository's file store to the Redis store at this URL… */
  to?: string;
  /** …or the Redis store at this URL to this repository's file store. */
  from?: string;
  dryRun: boolean;
}

/** The invocation with the file store (AGENTMAIL_URL unset) or with the Redis store at `url`. */
const withStore = (invocation: Invocation, url: string | undefined): Invocation => ({
  ...invocation,
  env: { ...invocation.env, AGENTMAIL_URL: url },
});

export async function migrate(invocation: Invocation, request: MigrateRequest): Promise<MigrationReport> {
  const usage = "usage: agentmail migrate --to URL | --from URL [--dry-run]";
  if ((request.to === undefined) === (request.from === undefined)) {
    throw new AgentmailError("usage", `give --to URL (file store to Redis) or --from URL (Redis to file store); ${usage}`);
  }
  const url = request.to ?? request.from!;
  if (url.trim() === "") throw new AgentmailError("usage", `the URL is empty; give the mail server's URL (redis://HOST:PORT); ${usage}`);
  const files = await storeAt(withStore(invocation, undefined));
  const server = await storeAt(withStore(invocation, url));
  return request.to !== undefined ? migrateMail(files, server, request.dryRun) : migrateMail(server, files, request.dryRun);
}
