/**
 * A sender follows its mail to the end (mail/arrival.ts): the delivery state of each copy it sent (`sent`), and its
 * recipient's acknowledgement (`ack`, or a reply).
 */
import { deliveryState, reached, type DeliveryEvent, type DeliveryState } from "../mail/arrival.ts";
import { AgentmailError } from "../mail/errors.ts";
import type { SentMessage } from "../mail/format.ts";
import type { Message } from "../mail/message.ts";
import { displayName } from "../mail/names.ts";
import type { Store } from "../store/store.ts";

/** Where a send stored a message's copies (actions/send.ts), for --wait-for and the results that follow it. */
export interface StoredCopies {
  store: Store;
  sender: string;
  /** Agents' names and `role:` queues. */
  mailboxes: string[];
  /** Copies in other projects' stores (send-elsewhere.ts): each agent's mailbox there, and how the sender names it. */
  elsewhere: { store: Store; mailbox: string; shown: string }[];
}

/** Which of the caller's sent mail to list: all of it, what is not read yet, or what bounced. */
export type SentFilter = "all" | "unread" | "undelivered";

/** What the arguments of `sent` and `ack` mean, for their --help and the sent and ack tools' schemas. */
export const FOLLOW_ARGUMENTS = {
  unread: "Only mail nobody has read yet",
  undelivered: "Only mail that bounced: returned to you unread, with why",
  ids: "The ids of the messages you acknowledge",
} as const;

/** Which delivery states a filter keeps. */
const WANTED: Record<Exclude<SentFilter, "all">, readonly string[]> = { unread: ["stored", "notified"], undelivered: ["bounced"] };

/**
 * What the caller sent, newest first, each copy with its delivery state, a batch at a time (the store's batches,
 * filtered): a long history is never held whole. Each mailbox's delivery record is read once, when the first copy
 * sent to it comes. Bodies over 1,000 characters are cut unless `whole`.
 */
export async function* sentInBatches(store: Store, agent: string, filter: SentFilter = "all", whole = true): AsyncGenerator<SentMessage[]> {
  const records = new Map<string, Map<string, DeliveryEvent[]> | null>();
  for await (const batch of store.sentNewestFirst(agent, whole)) {
    const listed: SentMessage[] = [];
    for (const { message: copy } of batch) {
      const mailbox = String(copy.to ?? "");
      let record = records.get(mailbox);
      if (record === undefined) {
        try {
          record = await store.deliveries(mailbox);
        } catch {
          // A record that cannot be read (a name no mailbox can have, a planted file) tells nothing: the copy's own state stands.
          record = null;
        }
        records.set(mailbox, record);
      }
      const delivery = deliveryState(copy, record?.get(copy.id));
      // The store's records are this call's own: each gets its state in place (a copy per record cost a tenth of
      // the listing). A field of that name is overwritten where it stands, as a spread would.
      if (filter === "all" || WANTED[filter].includes(delivery.state)) {
        const listedCopy: SentMessage = copy;
        listedCopy.delivery = delivery;
        listed.push(listedCopy);
      }
    }
    if (listed.length > 0) yield listed;
  }
}

/** What the caller sent, newest first, each copy with its delivery state: sentInBatches, as one list. */
export async function sent(store: Store, agent: string, filter: SentFilter = "all", whole = true): Promise<SentMessage[]> {
  const all: SentMessage[] = [];
  for await (const batch of sentInBatches(store, agent, filter, whole)) for (const copy of batch) all.push(copy);
  return all;
}

/**
 * Records that the caller dealt with these messages of its mailbox (live or archived), each marked read if it was
 * not: its sender's `sent` then says acknowledged. `reply`: the reply that did it. Every id is looked up first; one
 * that is not there fails the whole call, nothing recorded.
 */
export async function acknowledge(store: Store, agent: string, ids: readonly string[], reply?: string): Promise<string[]> {
  const found: Message[] = [];
  for (const id of ids) {
    const record = await store.find(agent, id);
    if (!record) {
      throw new AgentmailError(
        "not_found",
        `no message ${displayName(id)} in your mailbox; run 'agentmail inbox --all' to list your message ids`,
      );
    }
    found.push(record.message);
  }
  const at = new Date();
  const unique = [...new Set(found.map((message) => message.id))];
  await store.recordDelivery(
    agent,
    unique.map((id) => ({ id, event: "acknowledged", at: at.toISOString(), ...(reply === undefined ? {} : { reply }) })),
  );
  for (const message of found) if (message.read_flag !== true) await store.markRead(agent, message.id, at);
  return unique;
}

/** What `send --wait-for` waits for: every copy read, a reply to the sender, or every copy acknowledged. */
export type WaitFor = "read" | "reply" | "ack";

export interface CopyState {
  mailbox: string;
  delivery: DeliveryState;
}

export interface WaitOutcome {
  /** The state was reached: every copy read (acknowledged counts) or acknowledged, or a reply came. */
  reached: boolean;
  /** Where each copy is now. */
  copies: CopyState[];
  /** The reply, shown through `showReply` and marked read. */
  reply: Message | null;
}

/** How often a wait looks again without a change event: the bound on a missed one (Store.watch). */
const WAIT_POLL_MS = 500;

/**
 * Each copy's state now, in this store and others (another project's): its record where it is and its events.
 * `justSent`: the message this very call stored, so each copy's record is that message, unread, and only its events
 * are looked up (finding the record is a scan of the mailbox, which a long-lived sender would pay on every send).
 */
export async function copyStates(copies: StoredCopies, id: string, justSent?: Message): Promise<CopyState[]> {
  const states: CopyState[] = [];
  const each: { store: Store; mailbox: string; shown: string }[] = [];
  for (const mailbox of copies.mailboxes) each.push({ store: copies.store, mailbox, shown: mailbox });
  for (const copy of copies.elsewhere) each.push(copy);
  for (const { store, mailbox, shown } of each) {
    const record = justSent ? { message: { ...justSent, to: mailbox } } : await store.find(mailbox, id);
    const events = (await store.deliveries(mailbox, new Set([id]))).get(id) ?? [];
    const message = record?.message ?? ({ id, from: "", to: mailbox, message: "", read_flag: false, created_at: "" } as Message);
    states.push({ mailbox: shown, delivery: deliveryState(message, events) });
  }
  return states;
}

/**
 * Blocks until the message `id` (its copies in `stored`) reaches what `what` asks, or `timeoutMs` passes (null:
 * no limit), or `signal` aborts. A reply (`in_reply_to` the id, in the sender's mailbox) is taken as receive takes
 * mail: shown through `showReply`, marked read once that returns. A copy that bounced ends the wait unreached. Wakes
 * on the store's watch of those mailboxes (reads, delivery events, new mail) and looks again at least every
 * WAIT_POLL_MS (a copy in another project's store is seen by that look); it holds nothing between looks, so a wait that is killed leaves nothing behind.
 */
export async function waitFor(
  stored: StoredCopies,
  id: string,
  what: WaitFor,
  timeoutMs: number | null,
  showReply: (reply: Message) => void | Promise<void>,
  signal?: AbortSignal,
): Promise<WaitOutcome> {
  const { store, sender, mailboxes } = stored;
  const deadline = timeoutMs === null ? Number.POSITIVE_INFINITY : Date.now() + timeoutMs;
  const watch = await store.watch(what === "reply" ? [sender, ...mailboxes] : mailboxes, true);
  const stop = () => watch.close();
  signal?.addEventListener("abort", stop, { once: true });
  const isReply = Object.assign((message: Message) => message.in_reply_to === id, { mention: id });
  try {
    for (;;) {
      if (what === "reply") {
        const reply = await store.take(sender, showReply, { prefer: isReply, only: true });
        if (reply) return { reached: true, copies: await copyStates(stored, id), reply };
      }
      const copies = await copyStates(stored, id);
      const wanted = what === "read" ? "read" : "acknowledged";
      const bounced = copies.every((copy) => copy.delivery.state === "bounced");
      if (what !== "reply" && copies.every((copy) => copy.delivery.state !== "bounced" && reached(copy.delivery.state, wanted))) {
        return { reached: true, copies, reply: null };
      }
      if (bounced || (what !== "reply" && copies.some((copy) => copy.delivery.state === "bounced")))
        return { reached: false, copies, reply: null };
      const left = deadline - Date.now();
      if (left <= 0 || signal?.aborted) return { reached: false, copies, reply: null };
      await watch.changed(Math.min(left, WAIT_POLL_MS));
    }
  } finally {
    signal?.removeEventListener("abort", stop);
    stop();
  }
}
