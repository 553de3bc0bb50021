/**
 * A take on the Redis store (Store.take): the oldest message of the mailbox that is neither read nor leased is
 * leased to this receiver (CLAIM in scripts.ts), shown, then marked read (ACKNOWLEDGE) or given back.
 *
 * The FIFO rule, exactly: a take returns the oldest message of the mailbox that is neither read nor under a live
 * lease (with `prefer`: the oldest such one it accepts among the oldest 1,000, else the oldest). A lease lives until
 * the message is marked read or given back, until a receiver on the holder's host sees that the holder died (at
 * once: its pid is gone), or until it runs out (30 s; a receiver on another host cannot see a death sooner); then
 * the message is again the oldest takeable one and comes before every later message. So a later message overtakes
 * an earlier one only while the earlier one is being shown by another receiver, or by one that died on another host
 * less than a lease ago. Leases are not persisted: after a server restart a message being shown is takeable again
 * (shown once more, never lost).
 */
import { AgentmailError } from "../../mail/errors.ts";
import { newId } from "../../mail/ids.ts";
import { NOT_A_MESSAGE, parseMessage, type Message } from "../../mail/message.ts";
import { MailServerUnreachable } from "../server.ts";
import type { Show, TakeOptions } from "../store.ts";
import { ReplicasBehind } from "./connection.ts";
import { formatHolder, isHolderDead, parseHolder, thisProcess, type Holder } from "./holder.ts";
import type { Keyspace } from "./keyspace.ts";
import { ACKNOWLEDGE, CLAIM, DROP_LEASES, PEEK } from "./scripts.ts";

/** Takes in a row that find a dead holder's lease in front of them: each breaks at least one, so few are needed. */
const MAX_TAKEOVER_ROUNDS = 5;
/** How many of the oldest takeable messages a take with a preference chooses from. */
const PREFER_WINDOW = 1000;

/** A message being shown: its entry, and the token of the lease that makes it ours. */
interface Taken {
  mailbox: string;
  streamId: string;
  token: string;
}

/** A lease value "<expiry ms>|<token>|<holder>" (scripts.ts). */
function parseLease(lease: string): { token: string; holder: Holder | null } {
  const first = lease.indexOf("|");
  const second = lease.indexOf("|", first + 1);
  return { token: lease.slice(first + 1, second), holder: parseHolder(lease.slice(second + 1)) };
}

/** The takes of one store: what it leased, shown and has yet to mark read or give back. */
export class Takes {
  readonly #space: Keyspace;
  /**
   * Acknowledgements and give-backs whose connection was lost: done before this store's next take, so a long-lived
   * process (the MCP server) neither shows that message again nor leaves it leased.
   */
  readonly #unfinished: { taken: Taken; readAt: string | null }[] = [];

  constructor(space: Keyspace) {
    this.#space = space;
  }

  async take(mailbox: string, show: Show, options: TakeOptions = {}): Promise<Message | null> {
    for (let left = this.#unfinished.length; left > 0; left--) {
      const { taken, readAt } = this.#unfinished.shift()!;
      await this.#finish(taken, readAt);
    }
    const claimed = await this.#claim(mailbox, options);
    if (!claimed) return null;
    const { taken, message } = claimed;
    const readAt = new Date().toISOString();
    Object.assign(message, { read_flag: true, read_at: readAt });
    try {
      await show(message);
    } catch (error) {
      // Not shown: takeable again at once. A give-back that cannot reach the server is retried by the next take.
      await this.#finish(taken, null).catch(() => {});
      throw error;
    }
    await this.#finish(taken, readAt).catch((error: unknown) => {
      if (!(error instanceof ReplicasBehind)) throw error;
      throw new AgentmailError("io", `message ${message.id} was shown and marked read, but ${error.message}: it may be shown once more`);
    });
    return message;
  }

  /** Leases the message to take (see the FIFO rule above), breaking the leases of dead holders on this host first. */
  async #claim(mailbox: string, options: TakeOptions): Promise<{ taken: Taken; message: Message } | null> {
    const keys = this.#space.keys(mailbox);
    const walkKeys = [keys.mail, keys.read, keys.lease, keys.cursor];
    const me = thisProcess(this.#space.host);
    let takeovers = 0;
    for (;;) {
      let target = "";
      if (options.prefer) {
        const [found] = (await this.#space.run(PEEK, walkKeys, [String(PREFER_WINDOW)])) as [[string, string][], string[]];
        if (found.length === 0) return null;
        const preferred = found.find(([, record]) => {
          const message = parseMessage(record);
          return message !== null && options.prefer!(message);
        });
        if (!preferred && options.only) return null;
        target = (preferred ?? found[0]!)[0];
      }
      const token = newId();
      const reply = await this.#space.runChecked(CLAIM, walkKeys, [String(this.#space.leaseMs), token, formatHolder(me), target]);
      const [streamId, record, skipped] = reply as [string, string, string[]];
      // Leases passed over whose holder died on this host: break them and look again, so that message comes first.
      const dead: string[] = [];
      for (let i = 0; i + 1 < skipped.length; i += 2) {
        const lease = parseLease(skipped[i + 1]!);
        if (lease.holder && isHolderDead(lease.holder, me)) dead.push(skipped[i]!, lease.token);
      }
      if (dead.length > 0 && takeovers++ < MAX_TAKEOVER_ROUNDS) {
        await this.#dropLeases(mailbox, streamId ? [...dead, streamId, token] : dead);
        continue;
      }
      // The one chosen was taken by another receiver meanwhile: choose again.
      if (!streamId) {
        if (target) continue;
        return null;
      }
      const taken = { mailbox, streamId, token };
      const message = parseMessage(record);
      if (message) return { taken, message };
      options.onSkip?.(mailbox, `stream entry ${streamId}`, NOT_A_MESSAGE);
      await this.#finish(taken, new Date().toISOString());
    }
  }

  /** Drops the given leases (stream id and token pairs) and rings the mailbox's bells. */
  async #dropLeases(mailbox: string, pairs: string[]): Promise<void> {
    const keys = this.#space.keys(mailbox);
    await this.#space.run(DROP_LEASES, [keys.lease, keys.bell, this.#space.key("bell")], [mailbox, ...pairs]);
  }

  /** Marks a taken message read (readAt given) or gives it back (null); kept for the next take if the server is away. */
  async #finish(taken: Taken, readAt: string | null): Promise<void> {
    try {
      if (readAt === null) await this.#dropLeases(taken.mailbox, [taken.streamId, taken.token]);
      else {
        const keys = this.#space.keys(taken.mailbox);
        await this.#space.run(
          ACKNOWLEDGE,
          [keys.mail, keys.read, keys.lease, this.#space.key("unread"), keys.rbell],
          [taken.streamId, taken.token, readAt, taken.mailbox],
        );
      }
    } catch (error) {
      if (error instanceof MailServerUnreachable) this.#unfinished.push({ taken, readAt });
      throw error;
    }
  }
}
