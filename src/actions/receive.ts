/**
 * Receive: the agent's oldest unread message, taken once. The contract both interfaces (the CLI's `receive`, the MCP
 * receive and wait tools) and the hooks rely on:
 *
 *   order     the agent's own mailbox first, oldest first (`prefer` may put some first: the hooks take urgent mail
 *             first); then its roles' queues, the one whose oldest message waited longest first (mail/order.ts)
 *   once      a message is marked read only after `show` has returned (the store's take: store/file/mark-read.ts on the
 *             file store, the mark script on Redis), under the mailbox's receive lock; `show` throwing, or the
 *             process killed before the mark, leaves it unread. Of several members receiving a role's queue at once,
 *             exactly one gets each message
 *   expired   a message whose time to live ran out is returned to its sender instead of shown, under the same take
 *             (dead-letters/dead-letters.ts), and `onReturned` hears of it
 *   identity  `confirm` runs under the lock before a message is shown: a caller that lost its name shows nothing
 *   waiting   with `waitMs`, the watch is set before the first look, so a message landing in between wakes it;
 *             polling every POLL_MS bounds a missed event; `signal` ends the wait with null
 *
 * It throws what the store throws (a mailbox it cannot read, a lock it cannot take) and what `confirm` or `show`
 * throws, each leaving the message unread; lines it cannot parse are skipped and reported to `onSkip`. What is shown,
 * and how, is the interface's: this module decides what is taken.
 */
import { addressProblem, roleAddress } from "../mail/addresses.ts";
import { movesOf, type Message } from "../mail/message.ts";
import { isExpired } from "../mail/fields.ts";
import { byOldestWaiting, type Preference } from "../mail/order.ts";
import type { Bounced } from "../dead-letters/dead-letters.ts";
import type { Show, SkipReporter, Store } from "../store/store.ts";

/** How often a waiting receive looks again even without a change event: the bound on a missed wake-up. */
const POLL_MS = 250;

/** The roles `agent` is a member of, sorted; none when the roles cannot be read (doctor says why). */
export async function rolesOf(store: Store, agent: string): Promise<string[]> {
  let roles: Map<string, string[]>;
  try {
    roles = await store.memberships("roles");
  } catch {
    return [];
  }
  const mine: string[] = [];
  for (const [role, members] of roles) if (members.includes(agent)) mine.push(role);
  return mine.sort();
}

/**
 * Unread mail the caller's next receives take: its own mailbox and the queues of its roles (a role's message is
 * counted though another member may take it first). What "N more unread" says, on the CLI and in MCP's more_unread.
 */
export async function unreadWaiting(store: Store, agent: string): Promise<number> {
  let count = await store.countUnread(agent);
  for (const role of await rolesOf(store, agent)) {
    try {
      count += await store.countUnread(roleAddress(role));
    } catch {
      // An unreadable queue: taking from it says why.
    }
  }
  return count;
}

/**
 * The role queues of `roles` holding unread mail, in the order mail/order.ts gives (byOldestWaiting). Looked at
 * without taking anything: another member may take a message meanwhile, which only means the
 * take finds the next one, or none. An unreadable queue goes last: the healthy ones are served first, then taking
 * from it reports why.
 */
async function queuesByAge(store: Store, roles: readonly string[]): Promise<string[]> {
  const waiting: { queue: string; at: string }[] = [];
  for (const role of roles) {
    const queue = roleAddress(role);
    try {
      if ((await store.countUnread(queue)) === 0) continue;
      waiting.push({ queue, at: "" });
    } catch {
      waiting.push({ queue, at: "\uffff" });
    }
  }
  if (waiting.length === 0) return [];
  // Only with two or more to choose from is a queue's oldest message looked at.
  if (waiting.filter((entry) => entry.at === "").length > 1) {
    for (const entry of waiting) {
      if (entry.at !== "") continue;
      try {
        entry.at = String((await store.unread(entry.queue))[0]?.created_at ?? "");
      } catch {
        entry.at = "\uffff";
      }
    }
  }
  const queues: string[] = [];
  for (const entry of byOldestWaiting(waiting)) queues.push(entry.queue);
  return queues;
}

/** A message an earlier arrival announced (a native frame, a hook's list), met under the receive lock: left unread. */
class AlreadyAnnounced extends Error {}

/** Both preferences: what `first` accepts among what `fresh` accepts (the engine's `mention` speed-up kept). */
function within(fresh: (message: Message) => boolean, first: Preference | undefined): Preference {
  if (!first) return fresh;
  return Object.assign((message: Message) => fresh(message) && first(message), { mention: first.mention });
}

/**
 * Takes from a mailbox (the agent's own, or a role's queue); for a hook, passing over what an earlier arrival
 * announced: looked at under the receive lock (to be sure), where an announced message is left unread, and then, to
 * prefer the rest, as a snapshot.
 */
async function takeFrom(store: Store, mailbox: string, options: ReceiveOptions, show: Show): Promise<Message | null> {
  const take = { onSkip: options.onSkip, prefer: options.prefer };
  if (!options.leaveAnnounced) return store.take(mailbox, show, take);
  const guarded: Show = async (message) => {
    if ((await store.announced(mailbox)).has(message.id)) throw new AlreadyAnnounced();
    return show(message);
  };
  // Most takes find nothing, or a message no arrival announced: the announced set is read only when one is met.
  try {
    return await store.take(mailbox, guarded, take);
  } catch (error) {
    if (!(error instanceof AlreadyAnnounced)) throw error;
  }
  const announced = await store.announced(mailbox);
  const fresh = (message: Message) => !announced.has(message.id);
  // The preferred among the fresh (else the oldest, which may be announced), then the oldest fresh one.
  for (const prefer of [within(fresh, options.prefer), fresh]) {
    try {
      return await store.take(mailbox, guarded, { onSkip: options.onSkip, prefer });
    } catch (error) {
      if (!(error instanceof AlreadyAnnounced)) throw error;
    }
  }
  return null;
}

/**
 * The agent's own mailbox first; then the queues of its roles, the one with the oldest unread message first, so of
 * several members receiving at once exactly one gets each role message. The store marks a message read only after
 * `show` has returned. No signal is handled: SIGTERM or SIGHUP while the output is blocked ends the process as
 * SIGKILL would, before the mark, so the message stays unread.
 */
async function takeNext(
  store: Store,
  agent: string,
  roles: readonly string[],
  options: ReceiveOptions,
  show: Show,
): Promise<Message | null> {
  const own = await takeUnexpired(store, agent, options, show);
  if (own) {
    if (typeof own.moved_from === "string") await finishMove(store, own, own.moved_from);
    return own;
  }
  for (const queue of await queuesByAge(store, roles)) {
    const message = await takeUnexpired(store, queue, options, show);
    if (message) return message;
  }
  return null;
}

/**
 * The next message of one mailbox whose time to live has not run out: one that has is returned to its sender
 * instead of shown (dead-letters/dead-letters.ts, loaded only then), under the same take, so of that and an expiry
 * elsewhere exactly one happens; then the next is taken.
 */
async function takeUnexpired(store: Store, mailbox: string, options: ReceiveOptions, show: Show): Promise<Message | null> {
  for (;;) {
    let bouncer: { settle(): Promise<Bounced | null> } | null = null;
    const checked: Show = async (message) => {
      if (!isExpired(message, Date.now())) return show(message);
      const { bouncingShow, expiryReason } = await import("../dead-letters/dead-letters.ts");
      const bouncing = bouncingShow(store, mailbox, (each) => expiryReason(each, Date.now()), null);
      await bouncing.show(message);
      bouncer = bouncing;
    };
    const message = await takeFrom(store, mailbox, options, checked);
    if (message === null || bouncer === null) return message;
    const returned = await (bouncer as { settle(): Promise<Bounced | null> }).settle();
    if (returned !== null) options.onReturned?.(returned);
  }
}

/**
 * For what shows mail without taking it one message at a time (the post-tool hook): the messages of `mailbox` among
 * `messages` whose time to live ran out are returned to their senders, each under a take as receive returns them
 * (so of that and an expiry elsewhere exactly one happens), and `onReturned` is told of each. Returns the rest.
 */
export async function withoutExpired(
  store: Store,
  mailbox: string,
  messages: Message[],
  onReturned: (returned: Bounced) => void,
): Promise<Message[]> {
  const now = Date.now();
  if (!messages.some((message) => isExpired(message, now))) return messages;
  const { bounceWhere, expiryReason } = await import("../dead-letters/dead-letters.ts");
  for (const returned of await bounceWhere(store, mailbox, (message) => expiryReason(message, now))) onReturned(returned);
  return messages.filter((message) => !isExpired(message, now));
}

/**
 * A copy `agentmail name` moved, once delivered, marks the line it was copied from read, if that is still unread: a
 * `name` killed between its copy and that mark left the message unread under both names, and the old one must not
 * deliver it again (moved back, the copy would supersede it; delivered first, nothing else would tell). Only that
 * line: the record there moved one time fewer. Best effort, after the mark of the copy: a failure, or a kill in
 * between, can only show the message once more.
 */
async function finishMove(store: Store, copy: Message, from: string): Promise<void> {
  const moves = movesOf(copy);
  if (moves < 1 || addressProblem(from) !== null) return;
  await store.markRead(from, copy.id, undefined, moves - 1).catch(() => {});
}

/** What receive's wait means, for `receive --help` and the wait tool's schema. */
export const RECEIVE_ARGUMENTS = {
  wait: "When nothing is unread, wait this long at most for a message to arrive",
} as const;

export interface ReceiveOptions {
  onSkip: SkipReporter;
  /** Block until mail arrives: null waits forever, a number waits at most that many milliseconds. */
  waitMs?: number | null;
  /** Ends a wait early with null: an MCP client cancelled the call or went away. */
  signal?: AbortSignal;
  /** Told of each message returned to its sender instead of shown (its time to live ran out): receive says so. */
  onReturned?: (returned: Bounced) => void;
  /** Takes the oldest unread message this accepts before older ones (hooks: urgent mail first). */
  prefer?: Preference;
  /**
   * Hooks: leave alone what an earlier arrival announced (store.announced), so a message reaches the agent once, by
   * a native frame or a hook, not both. An explicit receive shows everything unread.
   */
  leaveAnnounced?: boolean;
  /**
   * Run under the mailbox's receive lock before a message is shown: throws when the caller no longer holds its name
   * (a claim moved meanwhile, see identity/name-claims.ts), and then the message stays unread.
   */
  confirm?: () => void;
}

/**
 * The oldest unread message, shown through `show`, or null. When waiting, the watch is set up before the first look,
 * so a message that lands between the look and the wait still wakes it; polling bounds a missed event (and finds a
 * role joined during the wait).
 */
export async function receiveMail(store: Store, agent: string, shown: Show, options: ReceiveOptions): Promise<Message | null> {
  const { confirm } = options;
  const show: Show = confirm
    ? (message) => {
        confirm();
        return shown(message);
      }
    : shown;
  if (options.waitMs === undefined) return takeNext(store, agent, await rolesOf(store, agent), options, show);
  const deadline = options.waitMs === null ? Infinity : Date.now() + options.waitMs;
  const watch = await store.watch([agent, ...(await rolesOf(store, agent)).map(roleAddress)]);
  const stopWaiting = () => watch.close();
  options.signal?.addEventListener("abort", stopWaiting, { once: true });
  try {
    for (;;) {
      if (options.signal?.aborted) return null;
      const message = await takeNext(store, agent, await rolesOf(store, agent), options, show);
      if (message) return message;
      const remaining = deadline - Date.now();
      if (remaining <= 0) return null;
      await watch.changed(Math.min(POLL_MS, remaining));
    }
  } finally {
    options.signal?.removeEventListener("abort", stopWaiting);
    stopWaiting();
  }
}

/**
 * Records that an MCP receive told the agent how many messages wait (their senders' `sent` says notified via mcp), all
 * but `except` (the one being shown). A count announces nothing (mail/arrival.ts): the hooks still bring each
 * message. Best effort: a record that cannot be written leaves them at stored.
 */
export async function noteCounted(store: Store, agent: string, except: string | null): Promise<void> {
  try {
    const ids: string[] = [];
    for (const id of await store.unreadIds(agent)) if (id !== except) ids.push(id);
    const { countedNotices } = await import("../mail/arrival.ts");
    await store.recordDelivery(agent, countedNotices(ids, "mcp", new Date()));
  } catch {
    // Only the notice is lost.
  }
}
