import { toAgentmailError, type ErrorCode } from "../mail/errors.ts";
import type { Message } from "../mail/message.ts";
import { roleAddress } from "../mail/addresses.ts";
import { storeAt } from "../identity/caller.ts";
import { boundaryOf } from "../identity/projects.ts";
import type { Invocation } from "../identity/invocation.ts";
import { PERSON_PANE } from "../store/store.ts";

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export interface CleanupOptions {
  staleHours: number;
  readHours: number;
  /** Delete archived mail older than this many days; null keeps the archive whole. */
  purgeDays: number | null;
  /** Return the mail of agents gone this many hours (dead-letters/dead-letters.ts); null: AGENTMAIL_GONE_AFTER, else 24. */
  goneHours?: number | null;
  dryRun: boolean;
  /** Hears how far it is: the mailboxes and archives to go through, each one done, the bytes read (output/progress.ts). */
  progress?: CleanupProgress;
}

export interface CleanupProgress {
  total(mailboxes: number): void;
  add(mailboxes: number, bytes?: number): void;
}

export interface CleanupReport {
  dry_run: boolean;
  /** Whether tmux could be asked which windows exist; without it, only --stale-hours forgets statuses. */
  windows_checked: boolean;
  forgotten: { name: string; reason: string }[];
  /** Read mail moved into each mailbox's archive. */
  archived: { name: string; count: number }[];
  /** Archived mail deleted by --purge-days. */
  purged: { name: string; count: number }[];
  removed: string[];
  /**
   * Unread mail returned to its senders as bounces: expired, or its recipient gone too long. `kept`: why its bounce
   * waits in this store (its sender's store, in another project, cannot take it now), else null.
   */
  bounced: { id: string; name: string; to: string; reason: string; kept: string | null }[];
  /** Bounces kept here for another project's sender (`name`, its address) that went on to its store now. */
  forwarded: { id: string; name: string }[];
  /** Bounces kept here that still wait for their sender's store, and why. */
  waiting: { id: string; name: string; why: string }[];
  /** Claims on paths that ended (run out, holder gone) and were removed; their waiters were told. */
  claims: { path: string; holder: string; why: string }[];
  /** Why the claims could not be cleaned (an unreadable claims document), or null. */
  claims_failed: { code: ErrorCode; message: string } | null;
  /** Mailboxes that could not be cleaned (say, a symlink or FIFO at the path), each with why and what to do. */
  failed: { name: string; code: ErrorCode; message: string }[];
}

/**
 * Returns dead letters to their senders (expired mail, mail of agents gone longer than `goneHours`), forgets
 * statuses of agents whose windows are gone or that have not updated them for `staleHours`, archives read
 * messages older than `readHours`, removes mailboxes left empty, and with `purgeDays` deletes archived mail older
 * than that, and removes claims on paths that ended (their waiters are told). A dry run decides exactly the same way.
 */
export async function cleanup(invocation: Invocation, options: CleanupOptions, now = Date.now()): Promise<CleanupReport> {
  const store = await storeAt(invocation);
  const report: CleanupReport = {
    dry_run: options.dryRun,
    windows_checked: false,
    forgotten: [],
    bounced: [],
    forwarded: [],
    waiting: [],
    archived: [],
    purged: [],
    removed: [],
    claims: [],
    claims_failed: null,
    failed: [],
  };
  // Dead letters first, while the registrations they are judged by are still there.
  const letters = await import("../dead-letters/dead-letters.ts");
  // This project's windows only (identity/projects.ts): another project's window of the same name keeps no agent here.
  const presence = await letters.presenceOnThisHost(invocation.env, await boundaryOf(invocation));
  const goneMs = options.goneHours == null ? letters.goneLimitMs(invocation.env) : options.goneHours * HOUR_MS;
  const swept = await letters.sweepDeadLetters(store, { presence, goneMs, now, dryRun: options.dryRun });
  for (const each of swept.bounced)
    report.bounced.push({ id: each.id, name: each.mailbox, to: each.to, reason: each.reason, kept: each.kept });
  for (const each of swept.forwarded) report.forwarded.push({ id: each.id, name: each.mailbox });
  for (const each of swept.waiting) report.waiting.push({ id: each.id, name: each.mailbox, why: each.why ?? "" });
  for (const { mailbox, error } of swept.failed) {
    const failure = toAgentmailError(error);
    report.failed.push({ name: mailbox, code: failure.code, message: failure.message });
  }
  const windowNames = presence.windows;
  report.windows_checked = windowNames !== null;
  for (const status of await store.statuses()) {
    const idleHours = Math.max(0, (now - Date.parse(status.updated_at)) / HOUR_MS);
    // A person (PERSON_PANE, store/file/status.ts) has no window: only staleness forgets them.
    const reason =
      windowNames !== null && status.pane !== PERSON_PANE && !windowNames.has(status.name)
        ? "window gone"
        : options.staleHours === 0 || idleHours >= options.staleHours
          ? `not updated for ${idleHours.toFixed(1)} h`
          : null;
    if (!reason) continue;
    report.forgotten.push({ name: status.name, reason });
    if (!options.dryRun) await store.removeStatus(status.name);
  }
  // Times come from the clocks that stamped them (a sender's, another host's, a bridged peer's), which may run ahead
  // of this one: 0 means every one, whatever time it carries, so --read-hours 0 right after a receive does not
  // depend on whose clock stamped the message (archive --read --older-than 0 means the same).
  const olderThan = (ms: number) => (message: Message) => {
    if (ms === 0) return true;
    const created = Date.parse(String(message.created_at));
    return Number.isFinite(created) && now - created >= ms;
  };
  // Each mailbox (and archive) on its own: one that cannot be cleaned is reported and the others are still cleaned.
  const eachOnItsOwn = async (name: string, work: () => Promise<void>) => {
    try {
      await work();
    } catch (thrown) {
      const error = toAgentmailError(thrown);
      // A mailbox the dead-letter sweep could not read fails here the same way: it is reported once.
      if (report.failed.some((failed) => failed.name === name && failed.message === error.message)) return;
      report.failed.push({ name, code: error.code, message: error.message });
    }
  };
  // Purge before archiving, so mail archived by this run is never purged by it too, and a dry run (which archives
  // nothing) reports exactly what the real run does.
  const progress = options.progress;
  const archives = options.purgeDays === null ? [] : await store.archives();
  // Role queues are mailboxes too, under their address (role:<role>).
  const queues = (await store.roleQueues()).map(roleAddress);
  const mailboxes = [...(await store.mailboxes()), ...queues];
  progress?.total(archives.length + mailboxes.length);
  if (options.purgeDays !== null) {
    const purgeable = olderThan(options.purgeDays * DAY_MS);
    for (const name of archives) {
      progress?.add(1);
      await eachOnItsOwn(name, async () => {
        const purged = await store.purgeArchive(name, purgeable, options.dryRun);
        if (purged.length > 0) report.purged.push({ name, count: purged.length });
      });
    }
  }
  try {
    const { sweepClaims } = await import("./claims.ts");
    const { swept } = await sweepClaims(store, options.dryRun);
    for (const { claim, why } of swept) report.claims.push({ path: claim.path, holder: claim.holder, why });
  } catch (thrown) {
    const error = toAgentmailError(thrown);
    report.claims_failed = { code: error.code, message: error.message };
  }
  const readAndOld = olderThan(options.readHours * HOUR_MS);
  const read = (bytes: number) => progress?.add(0, bytes);
  for (const name of mailboxes) {
    const pick = (message: Message) => message.read_flag === true && readAndOld(message);
    await eachOnItsOwn(name, async () => {
      const { archived, removed } = await store.archive(name, { pick }, options.dryRun, read);
      if (archived > 0) report.archived.push({ name, count: archived });
      if (removed) report.removed.push(name);
    });
    progress?.add(1);
  }
  return report;
}
