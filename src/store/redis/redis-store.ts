import { AgentmailError } from "../../core/errors.ts";
import { newId } from "../../core/ids.ts";
import { parseMessage, type Message } from "../../core/message.ts";
import type { AgentPresence, AgentRecord, Claim, ClaimOptions, Compaction, MailStore, MailWatch, Registration } from "../mail-store.ts";
import { AVAILABILITIES, type Availability } from "../status.ts";
import { Connection, DEFAULT_TIMEOUT_MS, MailServerUnreachable } from "./connection.ts";
import { formatHolder, isHolderDead, parseHolder, thisProcess, type Holder } from "./holder.ts";
import { keyPrefix } from "./namespace.ts";
import { ACKNOWLEDGE, APPEND, CLAIM, COMPACT, DROP_LEASES, MARK_UNREAD, TOUCH_AGENT } from "./scripts.ts";
import type { ServerAddress } from "./url.ts";

/**
 * How long a claim is exclusive when its holder's death cannot be seen (it ran on another host). A receive
 * acknowledges within milliseconds; this only delays mail a receiver on another host died holding.
 */
const DEFAULT_LEASE_MS = 30_000;

/** Claims in a row that find a dead holder's lease in front of them: each breaks at least one, so few are needed. */
const MAX_TAKEOVER_ROUNDS = 5;

export interface RedisStoreOptions {
  address: ServerAddress;
  namespace: string;
  /** This agent host's name (AGENTMAIL_HOST, else the machine's), written into leases and the registry. */
  host: string;
  timeoutMs?: number;
  leaseMs?: number;
}

interface AgentDocument {
  name?: unknown;
  host?: unknown;
  pane?: unknown;
  status?: unknown;
  since_ms?: unknown;
  last_seen_ms?: unknown;
}

function isoFromMs(value: unknown): string {
  const ms = Number(value);
  return new Date(Number.isFinite(ms) ? ms : 0).toISOString();
}

function agentRecord(json: string): AgentRecord {
  const value = JSON.parse(json) as AgentDocument;
  const status = (AVAILABILITIES as readonly unknown[]).includes(value.status) ? (value.status as Availability) : null;
  return {
    name: String(value.name),
    host: String(value.host),
    pane: String(value.pane ?? ""),
    status,
    since: status ? isoFromMs(value.since_ms) : null,
    last_seen: isoFromMs(value.last_seen_ms),
  };
}

/** An XREAD reply: RESP3 gives an object keyed by stream, RESP2 an array of [stream, entries]. */
function lastEntryId(reply: unknown, key: string): string | null {
  const entries = Array.isArray(reply)
    ? (reply.find((stream) => Array.isArray(stream) && stream[0] === key)?.[1] as unknown[] | undefined)
    : ((reply as Record<string, unknown[]> | null)?.[key] ?? undefined);
  const last = entries?.[entries.length - 1] as [string, unknown] | undefined;
  return last ? last[0] : null;
}

/** A lease value "<expiry ms>|<token>|<holder>" (scripts.ts). */
function parseLease(lease: string): { token: string; holder: Holder | null } {
  const first = lease.indexOf("|");
  const second = lease.indexOf("|", first + 1);
  return { token: lease.slice(first + 1, second), holder: parseHolder(lease.slice(second + 1)) };
}

function checkAgent(agent: string): string {
  if (typeof agent !== "string" || agent === "") {
    throw new AgentmailError("invalid_name", "an agent name cannot be empty; name the tmux window");
  }
  return agent;
}

/**
 * The Redis (or Valkey) mail store: a stream per mailbox, delivery through Lua scripts that claim the oldest
 * message that is neither read nor leased (see scripts.ts for the keys, mail-store.ts for the FIFO rule). One
 * connection for everything but blocking reads, which each get their own.
 */
export class RedisMailStore implements MailStore {
  readonly location: string;
  readonly namespace: string;
  readonly #connection: Connection;
  readonly #prefix: string;
  readonly #host: string;
  readonly #leaseMs: number;
  readonly #watches = new Set<MailWatch>();
  /**
   * Acknowledgements and releases whose connection was lost: done before the next claim of this store, so a
   * long-lived process (the MCP server) neither shows that message again nor leaves it leased.
   */
  readonly #unfinished: { claim: Claim; readAt: string | null }[] = [];

  constructor(options: RedisStoreOptions) {
    this.#connection = new Connection(options.address, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    this.location = options.address.display;
    this.namespace = options.namespace;
    this.#prefix = keyPrefix(options.namespace);
    this.#host = options.host;
    this.#leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  }

  #key(kind: string, agent?: string): string {
    return agent === undefined ? `${this.#prefix}${kind}` : `${this.#prefix}${kind}:${agent}`;
  }

  /** Connects now (a command connects on first use anyway): fails fast when the server cannot be reached. */
  async ping(): Promise<void> {
    await this.#connection.command("PING", []);
  }

  async append(messages: readonly Message[]): Promise<void> {
    if (messages.length === 0) return;
    const keys = [this.#key("unread"), this.#key("bell")];
    const args = [String(messages.length)];
    for (const message of messages) {
      const agent = checkAgent(message.to);
      keys.push(this.#key("mail", agent), this.#key("read", agent), this.#key("ids", agent), this.#key("bell", agent));
      // The stored record is the message as sent; its read state lives beside it (read_flag false here, no read_at).
      const { read_at: readAt, ...rest } = message;
      const read = message.read_flag === true ? (typeof readAt === "string" ? readAt : new Date().toISOString()) : "";
      args.push(agent, message.id, JSON.stringify({ ...rest, read_flag: false }), read);
    }
    const [stored, collision] = (await this.#connection.run(APPEND, keys, args)) as [number, string?];
    if (stored === -1) {
      const taken = `message id ${collision} is already taken by another message in that mailbox`;
      throw new AgentmailError("conflict", `${taken}; nothing was stored, send it again`);
    }
  }

  #mailboxKeys(agent: string) {
    return {
      mail: this.#key("mail", agent),
      read: this.#key("read", agent),
      lease: this.#key("lease", agent),
      cursor: this.#key("cursor", agent),
      ids: this.#key("ids", agent),
      bell: this.#key("bell", agent),
    };
  }

  /** Drops the given claims' leases (stream id and token pairs) and rings the mailbox's bells. */
  async #dropLeases(agent: string, pairs: string[]): Promise<void> {
    await this.#connection.run(DROP_LEASES, [this.#key("lease", agent), this.#key("bell", agent), this.#key("bell")], [agent, ...pairs]);
  }

  async claim(agent: string, options: ClaimOptions = {}): Promise<Claim | null> {
    const keys = this.#mailboxKeys(checkAgent(agent));
    const me: Holder = thisProcess(this.#host);
    for (let left = this.#unfinished.length; left > 0; left--) {
      const { claim, readAt } = this.#unfinished.shift()!;
      await this.#finish(claim, readAt);
    }
    let takeovers = 0;
    for (;;) {
      const token = newId();
      const claimKeys = [keys.mail, keys.read, keys.lease, keys.cursor];
      const reply = await this.#connection.run(CLAIM, claimKeys, [String(this.#leaseMs), token, formatHolder(me)]);
      const [streamId, , record, skipped] = reply as [string, string, string, string[]];
      // Leases passed over whose holder died on this host: break them and claim again, so that message comes first.
      const dead: string[] = [];
      for (let i = 0; i + 1 < skipped.length; i += 2) {
        const lease = parseLease(skipped[i + 1]!);
        if (lease.holder && isHolderDead(lease.holder, me)) dead.push(skipped[i]!, lease.token);
      }
      if (dead.length > 0 && takeovers++ < MAX_TAKEOVER_ROUNDS) {
        await this.#dropLeases(agent, streamId ? [...dead, streamId, token] : dead);
        continue;
      }
      if (!streamId) return null;
      const message = parseMessage(record);
      if (!message) {
        options.onSkip?.(agent, `stream entry ${streamId}`, "it is not a message (unparseable, or missing id, from, message or read_flag)");
        const ackKeys = [keys.read, keys.lease, this.#key("unread")];
        await this.#connection.run(ACKNOWLEDGE, ackKeys, [streamId, token, new Date().toISOString(), agent]);
        continue;
      }
      message.read_flag = true;
      return { mailbox: agent, message, receipt: `${streamId} ${token}` };
    }
  }

  #receipt(claim: Claim): [string, string] {
    const [streamId, token] = claim.receipt.split(" ");
    if (!streamId || !token) {
      throw new AgentmailError("internal", "a claim's receipt is malformed; this is a bug in agentmail, please report it");
    }
    return [streamId, token];
  }

  /** Acknowledges (readAt given) or releases (null) a claim; kept for the next claim if the connection is lost. */
  async #finish(claim: Claim, readAt: string | null): Promise<void> {
    const [streamId, token] = this.#receipt(claim);
    try {
      if (readAt === null) await this.#dropLeases(claim.mailbox, [streamId, token]);
      else {
        const keys = [this.#key("read", claim.mailbox), this.#key("lease", claim.mailbox), this.#key("unread")];
        await this.#connection.run(ACKNOWLEDGE, keys, [streamId, token, readAt, claim.mailbox]);
      }
    } catch (error) {
      if (error instanceof MailServerUnreachable) this.#unfinished.push({ claim, readAt });
      throw error;
    }
  }

  async acknowledge(claim: Claim): Promise<void> {
    const readAt = new Date().toISOString();
    await this.#finish(claim, readAt);
    claim.message.read_at = readAt;
  }

  async release(claim: Claim): Promise<void> {
    await this.#finish(claim, null);
  }

  async markUnread(agent: string, id: string): Promise<boolean> {
    const keys = this.#mailboxKeys(checkAgent(agent));
    const result = (await this.#connection.run(
      MARK_UNREAD,
      [keys.mail, keys.read, keys.ids, keys.cursor, this.#key("unread"), keys.bell, this.#key("bell")],
      [id, agent],
    )) as number;
    if (result === -1) throw new AgentmailError("not_found", `there is no message ${id} in the mailbox of ${agent}; check the id`);
    return result === 1;
  }

  async countUnread(agent: string): Promise<number> {
    const count = Number(await this.#connection.command("HGET", [this.#key("unread"), checkAgent(agent)]));
    return Number.isFinite(count) && count > 0 ? count : 0;
  }

  async listMailboxes(): Promise<string[]> {
    const names = (await this.#connection.command("HKEYS", [this.#key("unread")])) as string[];
    return names.sort();
  }

  async #entries(agent: string): Promise<{ streamId: string; message: Message | null }[]> {
    const keys = this.#mailboxKeys(checkAgent(agent));
    const [entries, read] = (await Promise.all([
      this.#connection.command("XRANGE", [keys.mail, "-", "+"]),
      this.#connection.command("HGETALL", [keys.read]),
    ])) as [[string, string[]][], Record<string, string> | string[]];
    const readAt = new Map<string, string>();
    if (Array.isArray(read)) for (let i = 0; i + 1 < read.length; i += 2) readAt.set(read[i]!, read[i + 1]!);
    else for (const streamId of Object.keys(read)) readAt.set(streamId, read[streamId]!);
    return entries.map(([streamId, fields]) => {
      const recordAt = fields.indexOf("record");
      const message = recordAt >= 0 && recordAt % 2 === 0 ? parseMessage(fields[recordAt + 1]!) : null;
      const at = readAt.get(streamId);
      if (message && at !== undefined) Object.assign(message, { read_flag: true, read_at: at });
      return { streamId, message };
    });
  }

  async messages(agent: string): Promise<Message[]> {
    return (await this.#entries(agent)).flatMap((entry) => (entry.message ? [entry.message] : []));
  }

  async compact(agent: string, drop: (message: Message) => boolean, dryRun: boolean): Promise<Compaction> {
    const pairs: string[] = [];
    for (const { streamId, message } of await this.#entries(agent)) {
      if (message?.read_flag && drop(message)) pairs.push(streamId, message.id);
    }
    const keys = this.#mailboxKeys(agent);
    const [dropped, removed] = (await this.#connection.run(
      COMPACT,
      [keys.mail, keys.read, keys.ids, keys.lease, keys.cursor, keys.bell, this.#key("unread")],
      [agent, dryRun ? "1" : "0", ...pairs],
    )) as [number, number];
    return { dropped, removed: removed === 1 };
  }

  async watch(agent: string | null): Promise<MailWatch> {
    const key = agent === null ? this.#key("bell") : this.#key("bell", checkAgent(agent));
    const newest = (await this.#connection.command("XREVRANGE", [key, "+", "-", "COUNT", "1"])) as [string, unknown][];
    let lastId = newest[0]?.[0] ?? "0-0";
    const blocker = this.#connection.sibling();
    const leaseMs = this.#leaseMs;
    let closed = false;
    const watches = this.#watches;
    const watch: MailWatch = {
      async changed(ms) {
        if (closed) return false;
        // Never longer than a lease: a lease that runs out rings no bell, so the caller looks again then.
        const capped = ms > leaseMs;
        const blockMs = Math.max(1, Math.ceil(Math.min(ms, leaseMs)));
        try {
          const reply = await blocker.command("XREAD", ["BLOCK", String(blockMs), "STREAMS", key, lastId], blockMs);
          const newer = reply === null ? null : lastEntryId(reply, key);
          if (newer === null) return capped && !closed;
          lastId = newer;
          return true;
        } catch (error) {
          if (closed) return false;
          throw error;
        }
      },
      close() {
        if (closed) return;
        closed = true;
        watches.delete(watch);
        blocker.close();
      },
    };
    watches.add(watch);
    return watch;
  }

  async touchAgent(presence: AgentPresence, options: { exclusiveMs?: number } = {}): Promise<Registration> {
    const [registered, json] = (await this.#connection.run(
      TOUCH_AGENT,
      [this.#key("agents")],
      [
        checkAgent(presence.name),
        presence.host,
        presence.pane,
        presence.status ?? "",
        String(Math.max(0, Math.floor(options.exclusiveMs ?? 0))),
      ],
    )) as [number, string];
    const record = agentRecord(json);
    return registered === 1 ? { registered: true, record } : { registered: false, holder: record };
  }

  async listAgents(): Promise<AgentRecord[]> {
    const reply = (await this.#connection.command("HVALS", [this.#key("agents")])) as string[];
    const records: AgentRecord[] = [];
    for (const json of reply) {
      try {
        records.push(agentRecord(json));
      } catch {
        // A record another tool wrote and we cannot read is not an agent of ours.
      }
    }
    return records.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async removeAgent(name: string): Promise<void> {
    await this.#connection.command("HDEL", [this.#key("agents"), checkAgent(name)]);
  }

  close(): void {
    for (const watch of [...this.#watches]) watch.close();
    this.#connection.close();
  }
}
