/**
 * `agentmail migrate`: copies one store's mail into another (this repository's file store to the Redis store at a
 * URL, or back), through the Store interface on both sides: every mailbox and role queue with its read state and
 * read times, archived mail (archived again on the other side), the group and role lists, and the agents' statuses.
 *
 * Exactly once, and resumable: each mailbox of the target is read first, and only the messages it lacks are
 * appended (and Store.append never stores an id twice in a mailbox); archived messages are appended, then archived,
 * and a message the target holds unread but the source has read is marked read. A run killed anywhere leaves a
 * target that a second run completes without a duplicate.
 *
 * Nothing delivered twice, nothing left behind: before copying, the source is marked as moving to the target
 * (Store.markMoved), which returns once no send or receive can change it any more; once everything is copied it is
 * marked moved. From then on every command against it fails, saying where the mail went and how to point there. A
 * target that was itself marked moved (mail moving back) is cleared first. `--keep-source` leaves the source live,
 * as it was. The source's mail is never deleted: the report gives the command that deletes it and nothing else.
 */
import { roleAddress } from "../mail/addresses.ts";
import { byCreation } from "../mail/order.ts";
import { AgentmailError } from "../mail/errors.ts";
import { movedReason, type MovedNote } from "../store/moved.ts";
import { openStoreEvenIfMoved } from "../store/open.ts";
import type { MailRecord, MembershipKind, Store } from "../store/store.ts";
import type { Invocation } from "../identity/invocation.ts";

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
  /** The source now says where its mail went, and refuses every command (not with --keep-source, nor a dry run). */
  source_moved: boolean;
  /** The shell command that deletes the source's mail and nothing else, once every agent uses the target; else null. */
  remove_source: string | null;
}

/** The source's mailboxes: agents' live ones, role queues, and those with only an archive left. */
async function mailboxesOf(store: Store): Promise<string[]> {
  const roles = (await store.roleQueues()).map(roleAddress);
  return [...new Set([...(await store.mailboxes()), ...roles, ...(await store.archives())])].sort();
}

/**
 * How many appends a copy has in flight at once: the file store writes those of one mailbox with one fsync, Redis
 * pipelines them, so a copy runs at thousands of messages a second instead of one fsync or round trip each.
 */
const APPENDS_IN_FLIGHT = 1_000;

/** Copies one mailbox's messages the target lacks, oldest first, then archives those archived on the source. */
async function copyMailbox(
  source: Store,
  target: Store,
  mailbox: string,
  dryRun: boolean,
  report: MigrationReport,
  progress: MigrationProgress,
): Promise<void> {
  const records: MailRecord[] = byCreation(await source.mail(mailbox, { live: true, archived: true }));
  if (records.length === 0) return;
  const held = new Map((await target.mail(mailbox, { live: true, archived: true })).map((record) => [record.message.id, record]));
  const toArchive: string[] = [];
  let copied = 0;
  // Appended in order, many at a time: each window's appends are issued together and all stored before the next.
  let window: Promise<void>[] = [];
  const flush = async () => {
    // Every append of the window settled before a failure ends the copy: a run started next sees what they stored.
    const outcomes = await Promise.allSettled(window);
    progress.add(0, window.length);
    window = [];
    for (const outcome of outcomes) if (outcome.status === "rejected") throw outcome.reason;
  };
  for (const { message, archived } of records) {
    const there = held.get(message.id);
    if (there === undefined) {
      if (!dryRun) {
        window.push(target.append({ ...message, to: mailbox }, { checked: true }));
        if (window.length >= APPENDS_IN_FLIGHT) await flush();
      }
      copied++;
      if (archived) report.archived++;
    } else {
      report.already++;
      // Read on the source since the target last had it (mail moving back): read there too, or it is shown again.
      const readAt = message.read_at ? new Date(String(message.read_at)) : undefined;
      if (message.read_flag && !there.archived && !there.message.read_flag && !dryRun) await target.markRead(mailbox, message.id, readAt);
    }
    if (archived && there?.archived !== true) toArchive.push(message.id);
  }
  await flush();
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

/** Statuses of agents the target has none for or an older one, with when they were last set (a newer one on the target wins). */
async function copyStatuses(source: Store, target: Store, dryRun: boolean): Promise<number> {
  let copied = 0;
  for (const entry of await source.statuses()) {
    const there = await target.status(entry.name);
    if (there && !(Date.parse(there.updated_at) < Date.parse(entry.updated_at))) continue;
    copied++;
    if (dryRun) continue;
    const pin = entry.window && entry.server && entry.host ? { window: entry.window, server: entry.server, host: entry.host } : undefined;
    await target.writeStatus({ name: entry.name, status: entry.status, pane: entry.pane, at: new Date(entry.updated_at), pin });
  }
  return copied;
}

/** Hears how far a migration is: a mailbox done, messages copied (see output/progress.ts). */
export interface MigrationProgress {
  add(mailboxes: number, messages?: number): void;
  total(mailboxes: number): void;
}

const UNHEARD: MigrationProgress = { add() {}, total() {} };

/** Copies everything `source` holds that `target` lacks (see the top of this file); the source is only read. */
export async function migrateMail(
  source: Store,
  target: Store,
  dryRun: boolean,
  progress: MigrationProgress = UNHEARD,
): Promise<MigrationReport> {
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
    source_moved: false,
    remove_source: null,
  };
  // Lists first: role mail copied before its role's members would have no one to remind.
  report.groups = await copyLists(source, target, "groups", dryRun);
  report.roles = await copyLists(source, target, "roles", dryRun);
  report.statuses = await copyStatuses(source, target, dryRun);
  const mailboxes = await mailboxesOf(source);
  progress.total(mailboxes.length);
  for (const mailbox of mailboxes) {
    await copyMailbox(source, target, mailbox, dryRun, report, progress);
    progress.add(1);
  }
  return report;
}

export interface MigrateRequest {
  /** Copy this repository's file store to the Redis store at this URL… */
  to?: string;
  /** …or the Redis store at this URL to this repository's file store. */
  from?: string;
  dryRun: boolean;
  /** Leave the source live (not marked moved): agents may go on using it, and a later run copies what they add. */
  keepSource?: boolean;
}

/** The invocation with the file store (AGENTMAIL_URL unset) or with the Redis store at `url`. */
const withStore = (invocation: Invocation, url: string | undefined): Invocation => ({
  ...invocation,
  env: { ...invocation.env, AGENTMAIL_URL: url },
});

/** A source already marked moved elsewhere holds stale mail: the live mail is where it went. */
function movedElsewhere(source: Store, note: MovedNote): AgentmailError {
  return new AgentmailError(
    "moved",
    `${movedReason(source.label, note)}, not to the store given; migrate to that one (or take its mail back: migrate from it)`,
  );
}

/** Marks the source moving, copies, marks it moved (see the top of this file); a dry run only counts. */
export async function moveMail(
  source: Store,
  target: Store,
  dryRun: boolean,
  keepSource: boolean,
  progress?: MigrationProgress,
): Promise<MigrationReport> {
  const note = await source.moved();
  if (note && note.to !== target.label) throw movedElsewhere(source, note);
  const step = (state: MovedNote["state"]): MovedNote => ({ state, to: target.label, use: target.pointer, at: new Date().toISOString() });
  if (!dryRun) {
    if (await target.moved()) await target.markMoved(null);
    if (!keepSource && note?.state !== "moved") await source.markMoved(step("moving"));
  }
  const report = await migrateMail(source, target, dryRun, progress);
  if (dryRun || keepSource) return report;
  if (note?.state !== "moved") await source.markMoved(step("moved"));
  return { ...report, source_moved: true, remove_source: await source.mailRemoval() };
}

export async function migrate(invocation: Invocation, request: MigrateRequest, progress?: MigrationProgress): Promise<MigrationReport> {
  const usage = "usage: agentmail migrate --to URL | --from URL [--dry-run] [--keep-source]";
  if ((request.to === undefined) === (request.from === undefined)) {
    throw new AgentmailError("usage", `give --to URL (file store to Redis) or --from URL (Redis to file store); ${usage}`);
  }
  const url = request.to ?? request.from!;
  if (url.trim() === "") throw new AgentmailError("usage", `the URL is empty; give the mail server's URL (redis://HOST:PORT); ${usage}`);
  const files = await openStoreEvenIfMoved(withStore(invocation, undefined));
  try {
    const server = await openStoreEvenIfMoved(withStore(invocation, url));
    try {
      const [source, target] = request.to !== undefined ? [files, server] : [server, files];
      return await moveMail(source, target, request.dryRun, request.keepSource === true, progress);
    } finally {
      server.close();
    }
  } finally {
    files.close();
  }
}
