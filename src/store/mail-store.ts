/**
 * What every command needs from a mail store, whichever engine keeps the mail: the embedded file store (JSONL
 * mailboxes in the repository's git dir) or the Redis store (streams on a server shared by many hosts).
 *
 * Delivery is two steps, so a message becomes read only once its output has been written:
 *
 *   const claim = await store.claim(agent);         // the oldest claimable message, now exclusively ours
 *   if (claim) {
 *     try { await show(claim.message); }             // write it out
 *     catch (error) { await store.release(claim); throw error; }   // not shown: claimable again at once
 *     await store.acknowledge(claim);                // now read (read_at recorded)
 *   }
 *
 * A receiver killed between `show` and `acknowledge` leaves its claim behind; the message is then delivered again
 * (at most twice, never lost). The FIFO rule, for every store:
 *
 *   A claim returns the oldest message of the mailbox that is neither read nor under a live claim. A claim stays
 *   live until it is acknowledged or released, until a receiver on the holder's host sees that the holder died,
 *   or until its lease runs out, whichever comes first; then its message is again the oldest claimable one and is
 *   delivered before every later message.
 *
 * So a later message overtakes an earlier one only while the earlier one is claimed by another receiver that has
 * not acknowledged it yet: concurrently, or because that receiver died on another host and its lease has not run
 * out. (A same-host death is seen at once, and the single-receiver case stays strictly FIFO.)
 */
import type { Message } from "../core/message.ts";
import type { Availability } from "./status.ts";

/** A message taken for delivery and not yet acknowledged. */
export interface Claim {
  readonly mailbox: string;
  /** The message, with read_flag true: it is being delivered. */
  readonly message: Message;
  /** The store's proof of this claim (opaque): acknowledge and release check it. */
  readonly receipt: string;
}

/** Called for a record a receive passes over because it is not a message it can deliver; it is never deleted. */
type SkipReporter = (mailbox: string, where: string, reason: string) => void;

export interface ClaimOptions {
  onSkip?: SkipReporter;
}

/** Waiting for mail, set up before the first look so a message that lands in between still wakes it. */
export interface MailWatch {
  /**
   * Resolves true when mail may have become claimable since the watch was made or last resolved (a send, a claim
   * given back, a message marked unread), false after `ms` or once closed. Wakes within 50 ms of a send from any
   * process on any host. A lease that runs out rings no bell: a waiter also looks again at least once a lease.
   */
  changed(ms: number): Promise<boolean>;
  /** Ends the wait: a pending `changed` resolves false. Safe to call more than once. */
  close(): void;
}

/** An agent as the registry knows it: who, on which host, in which pane, how available, and when last heard of. */
export interface AgentRecord {
  name: string;
  host: string;
  pane: string;
  status: Availability | null;
  /** When the status last changed (ISO 8601), null without a status. */
  since: string | null;
  /** When the agent last ran a command (ISO 8601). */
  last_seen: string;
}

export interface AgentPresence {
  name: string;
  host: string;
  pane: string;
  /** Leave out to keep the status the agent had. */
  status?: Availability;
}

export type Registration = { registered: true; record: AgentRecord } | { registered: false; holder: AgentRecord };

export interface Compaction {
  dropped: number;
  /** The mailbox had (or would have) no message left and was (or would be) removed. */
  removed: boolean;
}

export interface MailStore {
  /** Where the mail is, for messages: a directory, or the server's URL without its password. */
  readonly location: string;

  /**
   * Stores messages, each in the mailbox of its `to`, all or none; returns once they are durable (the file store
   * fsyncs; the Redis store returns after the server has written them, to disk when it runs `appendfsync always`).
   * A message with `read_flag: true` is stored read (migration); a message whose id its mailbox already holds with
   * the same content is stored once, so a retried send or a resumed migration never duplicates.
   */
  append(messages: readonly Message[]): Promise<void>;

  /** Claims the oldest claimable message of `agent`'s mailbox (see the FIFO rule above), or null. */
  claim(agent: string, options?: ClaimOptions): Promise<Claim | null>;

  /** Marks a claimed message read and records read_at. Acknowledging twice, or after a takeover, is harmless. */
  acknowledge(claim: Claim): Promise<void>;

  /** Gives a claim back unacknowledged (its output could not be written): the message is claimable again at once. */
  release(claim: Claim): Promise<void>;

  /** Makes a read message unread again. False when it was unread already; a not_found error when there is none. */
  markUnread(agent: string, id: string): Promise<boolean>;

  /** Unread messages in `agent`'s mailbox, claimed ones included (they are not read yet). */
  countUnread(agent: string): Promise<number>;

  /** The agents that have a mailbox, sorted. */
  listMailboxes(): Promise<string[]>;

  /** Every message of a mailbox, oldest first, with read_flag (and read_at once read) as they stand. */
  messages(agent: string): Promise<Message[]>;

  /** Deletes the read messages `drop` picks (never an unread one); removes a mailbox left empty. */
  compact(agent: string, drop: (message: Message) => boolean, dryRun: boolean): Promise<Compaction>;

  /** Watches `agent`'s mailbox, or every mailbox of the store when `agent` is null (the mailman). */
  watch(agent: string | null): Promise<MailWatch>;

  /**
   * Records that an agent ran a command. With `exclusiveMs`, refused (registered: false, with the other agent's
   * record) when an agent of that name was seen on another host less than that long ago.
   */
  touchAgent(presence: AgentPresence, options?: { exclusiveMs?: number }): Promise<Registration>;

  listAgents(): Promise<AgentRecord[]>;

  removeAgent(name: string): Promise<void>;

  /** Releases connections and watchers; the process can then exit. */
  close(): void;
}
