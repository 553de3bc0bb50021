/**
 * Dead letters: mail nobody will read is taken out of its mailbox and returned to its sender as a bounce
 * (mail/bounce.ts), so nothing is dropped without its sender hearing of it. Two rules:
 *
 *   expired  its time to live (`send --ttl`) ran out before it was read
 *   gone     its recipient has been gone longer than the limit (AGENTMAIL_GONE_AFTER, default 24h): no window of that
 *            name on the tmux server, its registered pane not alive, and no registration seen since (measured from
 *            when it was last seen, or when the message was sent, whichever is later)
 *
 * Who applies them: a receive (an expired message it takes is bounced, never shown), the mailman on every sweep,
 * and `cleanup`. Exactly once, whoever does it: a message is bounced only through a take (Store.take), which holds
 * it (the file store's receive lock, Redis's lease) from finding it to marking it taken, so of an expiry and a
 * receive of one message exactly one gets it. The bounce is stored while the original is held, with an id made from
 * the original's (mail/bounce.ts); a taker killed after storing it leaves the original to the next taker, whose
 * bounce has the same id and is not stored again. The copy's delivery record says bounced (with why) before the take
 * marks it taken; then the copy moves to the archive: out of the mailbox, still found by `read`, `thread` and `sent`.
 */
import { isRoleAddress } from "../mail/addresses.ts";
import type { DeliveryEvent } from "../mail/arrival.ts";
import { bounceOf, isBounce, keptFor } from "../mail/bounce.ts";
import { AgentmailError } from "../mail/errors.ts";
import { isExpired } from "../mail/fields.ts";
import type { Message } from "../mail/message.ts";
import { displayName } from "../mail/names.ts";
import type { Preference } from "../mail/order.ts";
import { parseDuration } from "../mail/durations.ts";
import { agentHost } from "../identity/invocation.ts";
import { worksHere, type ProjectBoundary } from "../identity/projects.ts";
import { PERSON_PANE } from "../store/store.ts";
import { listAllPanes } from "../tmux/windows.ts";
import type { AgentEntry, Store } from "../store/store.ts";
import { forwardKeptBounces, returnBounce, type KeptBounce, type Returned } from "./return-path.ts";

/** Why a message is to be bounced, or null when it is not. */
export type Judge = (message: Message) => string | null;

/** How long a recipient may be gone before its mail is returned, unless AGENTMAIL_GONE_AFTER says otherwise. */
export const DEFAULT_GONE_MS = 24 * 3_600_000;

const shownTime = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

/** The expiry rule: why an expired message goes back (its time to live ran out at `now`), or null. */
export function expiryReason(message: Message, now: number): string | null {
  if (!isExpired(message, now)) return null;
  return `its time to live ran out at ${displayName(String(message.expires_at))}, unread`;
}

export interface Bounced {
  id: string;
  mailbox: string;
  /** Who gets the bounce. */
  to: string;
  reason: string;
  /** Why the bounce is kept in this store for now (its sender's store cannot take it: return-path.ts), or null. */
  kept: string | null;
}

/**
 * Returns `message` (held by a take of `store`) to its sender: the bounce is stored in the sender's mailbox (in the
 * store it wrote from when it wrote from another project, or kept here when that store cannot take it:
 * return-path.ts). A bounce is never bounced: it just goes. Returns whom it went to, and why it is kept (or null).
 */
async function returnToSender(store: Store, message: Message, reason: string, now: Date): Promise<Returned> {
  if (isBounce(message)) return { to: "", kept: null };
  return returnBounce(store, message, (mailbox) => bounceOf(message, mailbox, reason, now));
}

/** What the copy's record says of a bounce kept here: its sender's `sent` shows it. */
const keptNote = (store: Store, why: string) =>
  `; its bounce waits in ${store.location} until the store it was sent from takes it (${why}), then goes on by itself`;

/**
 * While a take holds a copy it bounced (the bounce stored): its delivery record says bounced, before the take marks
 * it taken, so a taker killed in between leaves a copy that says bounced, or one still unread that the next taker
 * bounces again (the same bounce, stored once; a second `bounced` event changes nothing). Best effort: a copy whose
 * record cannot be written still reached its sender as a bounce.
 */
async function recordBounce(store: Store, mailbox: string, message: Message, reason: string, now: Date): Promise<void> {
  const event: DeliveryEvent = { id: message.id, event: "bounced", at: now.toISOString(), reason };
  await store.recordDelivery(mailbox, [event]).catch(() => {});
}

/** After a take bounced a copy (marked taken): it moves to the archive. Best effort, as above. */
async function settle(store: Store, mailbox: string, message: Message): Promise<void> {
  await store.archive(mailbox, { ids: [message.id] }, false).catch(() => {});
}

/**
 * A show for Store.take that bounces what `judge` condemns instead of showing it, and shows the rest through `show`
 * (none: only condemned mail is taken). `bounced` then names what went back; `settle` finishes it once the take
 * has returned.
 */
export function bouncingShow(store: Store, mailbox: string, judge: Judge, show: ((message: Message) => void | Promise<void>) | null) {
  let bounced: { message: Message; reason: string; at: Date; to: string; kept: string | null } | null = null;
  return {
    async show(message: Message): Promise<void> {
      bounced = null;
      const reason = judge(message);
      if (reason === null) {
        if (show) return show(message);
        // Condemned when chosen, no longer now: left unread (a throw gives it back), never taken unshown.
        throw new AgentmailError("conflict", `message ${message.id} is no longer to be returned; it stays in the mailbox`);
      }
      const at = new Date();
      const back = await returnToSender(store, message, reason, at);
      const recorded = back.kept === null ? reason : reason + keptNote(store, back.kept);
      await recordBounce(store, mailbox, message, recorded, at);
      bounced = { message, reason: recorded, at, to: back.to, kept: back.kept };
    },
    /** What the last take bounced, settled; null when it showed a message (or took none). */
    async settle(): Promise<Bounced | null> {
      const taken = bounced as { message: Message; reason: string; at: Date; to: string; kept: string | null } | null;
      bounced = null;
      if (taken === null) return null;
      await settle(store, mailbox, taken.message);
      return { id: taken.message.id, mailbox, to: taken.to, reason: taken.reason, kept: taken.kept };
    },
  };
}

/** Takes and bounces, one at a time, every unread message of the mailbox that `judge` condemns. */
export async function bounceWhere(store: Store, mailbox: string, judge: Judge): Promise<Bounced[]> {
  const bounced: Bounced[] = [];
  const condemned: Preference = (message) => judge(message) !== null;
  const taker = bouncingShow(store, mailbox, judge, null);
  for (;;) {
    const taken = await store.take(mailbox, taker.show, { prefer: condemned, only: true });
    if (taken === null) break;
    const done = await taker.settle();
    if (done) bounced.push(done);
  }
  return bounced;
}

/** What the sweep knows of the agents: whether one is there now, and when each was last seen. */
export interface Presence {
  /**
   * The names of this project's windows on this host's tmux server and their live pane ids; null when tmux cannot be
   * asked (no gone rule then).
   */
  windows: ReadonlySet<string> | null;
  panes: ReadonlySet<string> | null;
  /** This host's name: an agent registered from another host is judged by when it was last seen only. */
  host: string;
}

/** The gone rule for one mailbox, or null while its agent is (or may be) there. */
function goneJudge(name: string, entry: AgentEntry | undefined, presence: Presence, goneMs: number, now: number): Judge | null {
  if (presence.windows === null || goneMs <= 0) return null;
  const elsewhere = entry !== undefined && (entry.pane === PERSON_PANE || (entry.host !== undefined && entry.host !== presence.host));
  if (!elsewhere && (presence.windows.has(name) || (entry !== undefined && presence.panes?.has(entry.pane)))) return null;
  if (entry?.status === "offline" && elsewhere) return null;
  const seen = entry ? Date.parse(entry.last_seen ?? entry.updated_at) : Number.NaN;
  return (message) => {
    const sent = Date.parse(String(message.created_at));
    const since = Math.max(Number.isFinite(seen) ? seen : 0, Number.isFinite(sent) ? sent : 0);
    if (now - since < goneMs) return null;
    return `${displayName(name)} has been gone since ${shownTime(since)}: no window, not seen`;
  };
}

type Env = Record<string, string | undefined>;

/** The gone limit: AGENTMAIL_GONE_AFTER (a duration, or `off`), else DEFAULT_GONE_MS. */
export function goneLimitMs(env: Env): number {
  const given = env.AGENTMAIL_GONE_AFTER?.trim();
  if (!given) return DEFAULT_GONE_MS;
  if (given.toLowerCase() === "off") return 0;
  return parseDuration(given, "AGENTMAIL_GONE_AFTER", 365 * 86_400_000);
}

/**
 * What this host's tmux server says of the store's agents now: the names of the windows that work in its project
 * and their live panes. Another project's window of the same name on the same server is not this agent (the rule
 * `send` and the mailman apply, identity/projects.ts): it never keeps this agent from counting as gone.
 */
export async function presenceOnThisHost(env: Env, project: ProjectBoundary | null): Promise<Presence> {
  const panes = env.TMUX ? await listAllPanes(env) : null;
  const windows = panes === null ? null : new Set<string>();
  const ids = panes === null ? null : new Set<string>();
  for (const pane of panes ?? []) {
    if (!worksHere(project, pane.path)) continue;
    windows!.add(pane.windowName);
    ids!.add(pane.paneId);
  }
  return { windows, panes: ids, host: agentHost(env) };
}

export interface SweepOptions {
  presence: Presence;
  goneMs: number;
  now?: number;
  /** Report what would be bounced, bouncing nothing. */
  dryRun?: boolean;
}

/**
 * Applies both rules to every mailbox of the store (agents' and role queues; the gone rule to agents only). A mailbox
 * is first read without a lock, and taken from only when it holds a condemned message, so a sweep costs receivers
 * nothing when there is nothing to return. A mailbox that cannot be swept is reported and the others still are.
 */
export async function sweepDeadLetters(
  store: Store,
  options: SweepOptions,
): Promise<{ bounced: Bounced[]; failed: { mailbox: string; error: unknown }[]; forwarded: KeptBounce[]; waiting: KeptBounce[] }> {
  const now = options.now ?? Date.now();
  // Bounces kept here go on first, to the stores they wait for (a dry run moves nothing).
  const kept = options.dryRun ? { forwarded: [], waiting: [] } : await forwardKeptBounces(store);
  const entries = new Map<string, AgentEntry>();
  for (const entry of await store.statuses().catch(() => [])) entries.set(entry.name, entry);
  const queues = (await store.roleQueues()).map((role) => `role:${role}`);
  const bounced: Bounced[] = [];
  const failed: { mailbox: string; error: unknown }[] = [];
  for (const mailbox of [...(await store.mailboxes()), ...queues]) {
    const gone = isRoleAddress(mailbox) ? null : goneJudge(mailbox, entries.get(mailbox), options.presence, options.goneMs, now);
    // A bounce kept for another project's sender (return-path.ts) waits for its store, however long it is gone.
    const keeps = keptFor(mailbox) !== null;
    const judge: Judge = (message) => expiryReason(message, now) ?? (keeps && isBounce(message) ? null : (gone?.(message) ?? null));
    try {
      const condemned: Bounced[] = [];
      for (const message of await store.unread(mailbox)) {
        const reason = judge(message);
        if (reason !== null) condemned.push({ id: message.id, mailbox, to: String(message.from), reason, kept: null });
      }
      if (condemned.length === 0) continue;
      bounced.push(...(options.dryRun ? condemned : await bounceWhere(store, mailbox, judge)));
    } catch (error) {
      failed.push({ mailbox, error });
    }
  }
  return { bounced, failed, ...kept };
}
