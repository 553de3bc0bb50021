import type { ClaimsChange, ClaimsSnapshot } from "../../claims/claims.ts";
import { roleAddress } from "../../mail/addresses.ts";
import { WIDEST_LINE } from "../../mail/format.ts";
import { byCreation, newestFirst } from "../../mail/order.ts";
import { AgentmailError } from "../../mail/errors.ts";
import { newId } from "../../mail/ids.ts";
import { byMessage, effectOn, parseEvent, serializeEvent } from "../../mail/arrival.ts";
import { movesOf, OnePerId, parseMessage, type Message } from "../../mail/message.ts";
import { withoutMovedSources } from "../../mail/moves.ts";
import { displayName, encodeName } from "../../mail/names.ts";
import { shellQuote } from "../../mail/next-steps.ts";
import { parseMovedNote, serializeMovedNote, StoreMoved, type MovedNote } from "../moved.ts";
import { localRoot } from "../paths.ts";
import type {
  AgentEntry,
  ArchiveResult,
  DeliveryEvent,
  MailFeed,
  MailRecord,
  MailWatch,
  MembershipKind,
  Memberships,
  Presence,
  ProjectPlace,
  Registration,
  Selection,
  Show,
  Store,
  TakeOptions,
  Touch,
  Which,
} from "../store.ts";
import { watchBells } from "./bells.ts";
import { Connection, DEFAULT_TIMEOUT_MS, ReplicasBehind, ScriptRefusal, type Script } from "./connection.ts";
import { formatHolder, isHolderDead, parseHolder, thisProcess, type Holder } from "./holder.ts";
import { parseLists, serializeLists } from "./lists.ts";
import { keyPrefix, namespaceOfKey } from "./namespace.ts";
import { agentEntry, presenceHost } from "./registry.ts";
import {
  ACKNOWLEDGE,
  ANNOUNCE,
  APPEND,
  ARCHIVE,
  PAGE,
  CLAIM,
  DROP_LEASES,
  FEED_LOOK,
  FIELDS,
  LIVE_LEASES,
  LOOK_UP,
  MARK_READ,
  PEEK,
  PURGE,
  READ_CLAIMS,
  RECORD_DELIVERY,
  REPLACE_CLAIMS,
  REPLACE_LISTS,
  TOUCH,
  UNREAD,
  WRITE_STATUS,
} from "./scripts.ts";
import { MailServerUnreachable, type ServerInfo, type ServerStore, type Topology } from "../server.ts";
import { redisCliCommand, type ServerAddress } from "./url.ts";

/**
 * How long a taken message is exclusive when its holder's death cannot be seen (it ran on another host). A receive
 * acknowledges within milliseconds; this only delays mail a receiver on another host died showing.
 */
const DEFAULT_LEASE_MS = 30_000;
/** Entries read, and moved by one script call, at a time by archive: a few milliseconds of the server's time each. */
const ARCHIVE_PAGE = 1000;
/** Entries read at a time by a listing (XRANGE, UNREAD): a few milliseconds of the server's time each, whatever the mailbox. */
const LIST_PAGE = 2000;
/** Takes in a row that find a dead holder's lease in front of them: each breaks at least one, so few are needed. */
const MAX_TAKEOVER_ROUNDS = 5;
/** How many of the oldest takeable messages a take with a preference chooses from. */
const PREFER_WINDOW = 1000;
const ROLE_PREFIX = roleAddress("");
const BOTH: Which = { live: true, archived: true };
const NOT_A_MESSAGE = "it is not a message (unparseable, or missing id, from, message or read_flag)";
/** How long marking the mail as moving waits for receives that hold a lease to end (see markMoved). */
const LEASES_DRAIN_MS = 5_000;
/** How long a claims change keeps trying while other hosts' changes land before it: far beyond any real contention. */
const CLAIMS_CHANGE_MS = 10_000;

export interface RedisStoreOptions {
  address: ServerAddress;
  namespace: string;
  /** This agent host's name (AGENTMAIL_HOST, else the machine's), written into leases and the registry. */
  host: string;
  timeoutMs?: number;
  leaseMs?: number;
  /** Open a namespace whose mail moved (migrate reads it); otherwise every command fails with code `moved`. */
  evenIfMoved?: boolean;
  /** How a command comes to use this store (Store.pointer); by default AGENTMAIL_URL and AGENTMAIL_NAMESPACE. */
  pointer?: string;
  /** Store.localRoot: by default the local directory of the repository around the process. */
  localRoot?: () => string;
  /** Store.projectStore: another namespace of this server (open.ts keeps it open); by default a new store here. */
  namespaceStore?: (namespace: string) => Promise<Store>;
}

/** A message being shown: its entry, and the token of the lease that makes it ours. */
interface Taken {
  mailbox: string;
  streamId: string;
  token: string;
}

type Entry = [streamId: string, fields: string[]];

function field(fields: string[], name: string): string {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1]!;
  return "";
}

/** A hash reply as a map: RESP3 gives an object, RESP2 a flat array. */
function hashOf(reply: unknown): Map<string, string> {
  const map = new Map<string, string>();
  if (Array.isArray(reply)) for (let i = 0; i + 1 < reply.length; i += 2) map.set(String(reply[i]), String(reply[i + 1]));
  else if (reply) for (const [key, value] of Object.entries(reply as Record<string, string>)) map.set(key, String(value));
  return map;
}

/** A stored record with its read state: read when `readAt` is given ('' or undefined is unread). */
function withReadState(message: Message, readAt: string | undefined): Message {
  if (readAt) Object.assign(message, { read_flag: true, read_at: readAt });
  return message;
}

/** A lease value "<expiry ms>|<token>|<holder>" (scripts.ts). */
function parseLease(lease: string): { token: string; holder: Holder | null } {
  const first = lease.indexOf("|");
  const second = lease.indexOf("|", first + 1);
  return { token: lease.slice(first + 1, second), holder: parseHolder(lease.slice(second + 1)) };
}

/** A mailbox's keys. Its name is hostile: it goes into keys only encoded (and is refused when empty or too long). */
function mailboxKeys(prefix: string, mailbox: string) {
  const name = encodeName(mailbox);
  const key = (kind: string) => `${prefix}${kind}:${name}`;
  return {
    mail: key("mail"),
    read: key("read"),
    lease: key("lease"),
    cursor: key("cursor"),
    ids: key("ids"),
    bell: key("bell"),
    arch: key("arch"),
    archids: key("archids"),
    delivery: key("delivery"),
    announced: key("announced"),
    rbell: key("rbell"),
  };
}

type MailboxKeys = ReturnType<typeof mailboxKeys>;

const sortNames = (names: string[]) => names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * The Redis (or Valkey) store: a stream per mailbox and one per archive, delivery through Lua scripts that lease
 * the oldest message that is neither read nor leased (scripts.ts has the keys). One connection for everything but
 * blocking reads, which each get their own.
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
export class RedisStore implements ServerStore {
  readonly sharedAcrossHosts = true;
  /** No claims: AGENTMAIL_NAME is checked against tmux on every call (identity/name-claims.ts). */
  readonly nameClaims = null;
  /** A send from another host cannot ring a file here, so the hooks always ask (README, "The doorbell"). */
  readonly doorbells = null;
  readonly description: string;
  readonly location: string;
  readonly label: string;
  readonly pointer: string;
  readonly namespace: string;
  readonly #options: RedisStoreOptions;
  readonly #address: ServerAddress;
  readonly #connection: Connection;
  readonly #prefix: string;
  readonly #host: string;
  readonly #leaseMs: number;
  readonly #watches = new Set<MailWatch>();
  /**
   * Acknowledgements and give-backs whose connection was lost: done before this store's next take, so a long-lived
   * process (the MCP server) neither shows that message again nor leaves it leased.
   */
  readonly #unfinished: { taken: Taken; readAt: string | null }[] = [];
  /**
   * Settled once the namespace is known not to have moved (see #notMoved): by the first script that checks it
   * itself (a touch, a send, a take), else by one GET before the first other command.
   */
  #checked: Promise<void> | null;

  constructor(options: RedisStoreOptions) {
    this.#options = options;
    this.#address = options.address;
    this.#prefix = keyPrefix(options.namespace);
    this.#connection = new Connection(options.address, options.timeoutMs ?? DEFAULT_TIMEOUT_MS, { syncKey: this.#key("sync") });
    this.description = `redis ${options.address.display}`;
    this.location = options.address.display;
    this.label = `${options.address.display}, namespace ${options.namespace}`;
    this.namespace = options.namespace;
    this.pointer =
      options.pointer ?? `export AGENTMAIL_URL=${shellQuote(options.address.display)} AGENTMAIL_NAMESPACE=${shellQuote(options.namespace)}`;
    this.#checked = options.evenIfMoved ? Promise.resolve() : null;
    this.#host = options.host;
    this.#leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  }

  localRoot(): string {
    return this.#options.localRoot ? this.#options.localRoot() : localRoot(process.cwd(), process.env);
  }

  /** Another project on Redis is another namespace of this server (identity/projects.ts). */
  async projectStore({ key }: ProjectPlace): Promise<Store> {
    if (this.#options.namespaceStore) return this.#options.namespaceStore(key);
    const { pointer: _pointer, evenIfMoved: _evenIfMoved, namespaceStore: _namespaceStore, ...same } = this.#options;
    return new RedisStore({ ...same, namespace: key });
  }

  #key(kind: string): string {
    return `${this.#prefix}${kind}`;
  }

  /** Keys of the mailboxes used lately: a migration appends thousands of messages to one mailbox. */
  readonly #keyCache = new Map<string, MailboxKeys>();

  #keys(mailbox: string): MailboxKeys {
    let keys = this.#keyCache.get(mailbox);
    if (!keys) {
      if (this.#keyCache.size >= 256) this.#keyCache.clear();
      this.#keyCache.set(mailbox, (keys = mailboxKeys(this.#prefix, mailbox)));
    }
    return keys;
  }

  /** The key of a sender's index, or null for a name no mailbox could have (then no index is kept). */
  #sentKey(sender: string): string | null {
    try {
      return `${this.#prefix}sent:${encodeName(sender)}`;
    } catch {
      return null;
    }
  }

  /** Fails with code `moved` when the namespace's mail moved; one GET, the first time only. */
  #notMoved(): Promise<void> {
    if (this.#checked === null) {
      const check = this.#connection.command("GET", [this.#key("moved")]).then((note: string | null) => {
        if (note !== null) throw this.#moved(note);
      });
      // A failure (moved, or the server away) is looked at again by the next command.
      check.catch(() => {
        if (this.#checked === check) this.#checked = null;
      });
      this.#checked = check;
    }
    return this.#checked;
  }

  #moved(note: string): StoreMoved {
    return new StoreMoved(this.label, parseMovedNote(note));
  }

  async #command(name: string, args: string[]): Promise<unknown> {
    await this.#notMoved();
    return this.#connection.command(name, args);
  }

  async #run(script: Script, keys: string[], args: string[]): Promise<unknown> {
    await this.#notMoved();
    return this.#connection.run(script, keys, args);
  }

  /** A script that refuses a moved namespace itself (scripts.ts notMoved), given the moved key last. */
  async #runChecked(script: Script, keys: string[], args: string[]): Promise<unknown> {
    try {
      const reply = await this.#connection.run(script, [...keys, this.#key("moved")], args);
      this.#checked ??= Promise.resolve();
      return reply;
    } catch (error) {
      if (error instanceof ScriptRefusal) throw this.#moved(error.what);
      throw error;
    }
  }

  async append(message: Message): Promise<void> {
    const mailbox = message.to;
    const keys = this.#keys(mailbox);
    const sent = this.#sentKey(message.from);
    // The stored record is the message as sent; its read state lives beside it (read_flag false here, no read_at).
    const { read_at: readAt, ...rest } = message;
    const read = message.read_flag === true ? (typeof readAt === "string" && readAt ? readAt : new Date().toISOString()) : "";
    const appended = this.#runChecked(
      APPEND,
      [
        keys.mail,
        keys.read,
        keys.ids,
        keys.bell,
        keys.archids,
        sent ?? this.#key("sent:"),
        this.#key("unread"),
        this.#key("bell"),
        keys.arch,
        keys.lease,
      ],
      [
        mailbox,
        message.id,
        JSON.stringify({ ...rest, read_flag: false }),
        read,
        sent ? "1" : "0",
        String(movesOf(message)),
        new Date().toISOString(),
      ],
    );
    await appended.catch((error: unknown) => {
      throw uncertainSend(message.id, error);
    });
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
    const keys = this.#keys(mailbox);
    const walkKeys = [keys.mail, keys.read, keys.lease, keys.cursor];
    const me = thisProcess(this.#host);
    let takeovers = 0;
    for (;;) {
      let target = "";
      if (options.prefer) {
        const [found] = (await this.#run(PEEK, walkKeys, [String(PREFER_WINDOW)])) as [[string, string][], string[]];
        if (found.length === 0) return null;
        const preferred = found.find(([, record]) => {
          const message = parseMessage(record);
          return message !== null && options.prefer!(message);
        });
        if (!preferred && options.only) return null;
        target = (preferred ?? found[0]!)[0];
      }
      const token = newId();
      const reply = await this.#runChecked(CLAIM, walkKeys, [String(this.#leaseMs), token, formatHolder(me), target]);
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
    const keys = this.#keys(mailbox);
    await this.#run(DROP_LEASES, [keys.lease, keys.bell, this.#key("bell")], [mailbox, ...pairs]);
  }

  /** Marks a taken message read (readAt given) or gives it back (null); kept for the next take if the server is away. */
  async #finish(taken: Taken, readAt: string | null): Promise<void> {
    try {
      if (readAt === null) await this.#dropLeases(taken.mailbox, [taken.streamId, taken.token]);
      else {
        const keys = this.#keys(taken.mailbox);
        await this.#run(
          ACKNOWLEDGE,
          [keys.mail, keys.read, keys.lease, this.#key("unread"), keys.rbell],
          [taken.streamId, taken.token, readAt, taken.mailbox],
        );
      }
    } catch (error) {
      if (error instanceof MailServerUnreachable) this.#unfinished.push({ taken, readAt });
      throw error;
    }
  }

  async countUnread(mailbox: string): Promise<number> {
    encodeName(mailbox);
    const count = Number(await this.#command("HGET", [this.#key("unread"), mailbox]));
    return Number.isFinite(count) && count > 0 ? count : 0;
  }

  async unreadIds(mailbox: string): Promise<string[]> {
    const ids: string[] = [];
    for (const message of await this.unread(mailbox)) ids.push(message.id);
    return ids;
  }

  /** A page of entries at a time (UNREAD): a mailbox of a million read messages never holds the server for long. */
  async unread(mailbox: string): Promise<Message[]> {
    const keys = this.#keys(mailbox);
    const unread: Message[] = [];
    for (let from = ""; ; ) {
      const [last, found] = (await this.#run(UNREAD, [keys.mail, keys.read, keys.cursor], [from, String(LIST_PAGE)])) as [
        string,
        [string, string][],
      ];
      for (const [, record] of found) {
        const message = parseMessage(record);
        if (message) unread.push(message);
      }
      if (last === "") return unread;
      from = last;
    }
  }

  async mailMatching(mailbox: string, accept: (message: Message) => boolean, hint?: RegExp, which: Which = BOTH): Promise<MailRecord[]> {
    // A record with an escape may hold the hint's text spelled otherwise: it is parsed whatever its text.
    const maybe = hint ? (record: string) => record.includes("\\") || hint.test(record) : () => true;
    return this.#matching(mailbox, which, maybe, accept);
  }

  async mail(mailbox: string, which: Which = BOTH, needle?: string): Promise<MailRecord[]> {
    return this.#matching(mailbox, which, needle ? (record) => record.includes(needle) : () => true, () => true);
  }

  /**
   * The mailbox's records (`which` of them) whose stored text `maybe` lets through and whose message `accept`
   * takes, read a page at a time (XRANGE ... COUNT), so neither this process nor the server holds the mailbox, and
   * no call holds the server for long. A message's record is the entry its index names (ids, archids: a copy
   * `agentmail name` brought back is the newest entry of its id), asked about, with the read state, only for the
   * records taken: a listing costs its pages and what it lists. Live records first, then archived ones not also
   * live, each oldest first.
   */
  async #matching(
    mailbox: string,
    which: Which,
    maybe: (record: string) => boolean,
    accept: (message: Message) => boolean,
  ): Promise<MailRecord[]> {
    const keys = this.#keys(mailbox);
    const out = new OnePerId<MailRecord>();
    const taken = async (key: string) => {
      const found: { streamId: string; id: string; message: Message; readAt: string }[] = [];
      for await (const page of this.#pages(key)) {
        for (const [streamId, fields] of page) {
          const record = field(fields, "record");
          if (!maybe(record)) continue;
          const message = parseMessage(record);
          if (message && accept(message)) found.push({ streamId, id: message.id, message, readAt: field(fields, "read_at") });
        }
      }
      return found;
    };
    /** The values of these fields of a hash ('' for each that is not there), a page of them per call. */
    const lookUp = async (hash: string, fields: string[]) => {
      const values: string[] = [];
      for (let at = 0; at < fields.length; at += LIST_PAGE) {
        for (const value of (await this.#run(FIELDS, [hash], fields.slice(at, at + LIST_PAGE))) as string[]) values.push(value);
      }
      return values;
    };
    /**
     * Of the entries taken, those that are their message's record or an older copy of it that was taken too (the
     * record then stands in the older copy's place, as OnePerId keeps it); `newest` is what the index names.
     */
    const records = <T extends { streamId: string }>(found: T[], newest: string[]): T[] => {
      const streamIds = new Set(found.map((each) => each.streamId));
      return found.filter((_, at) => newest[at] === "" || streamIds.has(newest[at]!));
    };
    if (which.live) {
      const found = await taken(keys.mail);
      const ids = found.map((each) => each.id);
      const streamIds = found.map((each) => each.streamId);
      const [newest, reads] = await Promise.all([lookUp(keys.ids, ids), lookUp(keys.read, streamIds)]);
      const readAt = new Map(streamIds.map((streamId, at) => [streamId, reads[at]]));
      for (const { streamId, message } of records(found, newest)) {
        out.add({ message: withReadState(message, readAt.get(streamId)), archived: false });
      }
    }
    if (which.archived) {
      const found = await taken(keys.arch);
      const ids = found.map((each) => each.id);
      const [newest, live] = await Promise.all([lookUp(keys.archids, ids), lookUp(keys.ids, ids)]);
      const liveIds = new Set(ids.filter((_, at) => live[at] !== ""));
      for (const { message, readAt } of records(found, newest)) {
        if (!liveIds.has(message.id)) out.add({ message: withReadState(message, readAt), archived: true });
      }
    }
    return out.records;
  }

  /** A stream's entries, oldest first, LIST_PAGE at a time. */
  async *#pages(key: string): AsyncGenerator<Entry[]> {
    for (let from = "-"; ; ) {
      const page = (await this.#command("XRANGE", [key, from, "+", "COUNT", String(LIST_PAGE)])) as Entry[];
      if (page.length > 0) yield page;
      if (page.length < LIST_PAGE) return;
      from = `(${page[page.length - 1]![0]}`;
    }
  }

  async find(mailbox: string, id: string): Promise<MailRecord | null> {
    const keys = this.#keys(mailbox);
    const [[state, record, readAt]] = (await this.#run(LOOK_UP, [keys.ids, keys.mail, keys.read, keys.archids, keys.arch], ["1", id])) as [
      [string, string, string],
    ];
    const message = state ? parseMessage(record) : null;
    return message ? { message: withReadState(message, readAt), archived: state === "archived" } : null;
  }

  async markRead(mailbox: string, id: string, at: Date = new Date(), moves?: number): Promise<string | null> {
    const keys = this.#keys(mailbox);
    const marked = (await this.#run(
      MARK_READ,
      [keys.ids, keys.read, keys.lease, this.#key("unread"), keys.mail, keys.rbell],
      [id, at.toISOString(), mailbox, moves === undefined ? "" : String(moves)],
    )) as string;
    return marked ? id : null;
  }

  /**
   * Reads the sender's index (every copy it sent, in order) and looks each copy up where it is now, in one script;
   * copies deleted since (a purged archive) leave the index.
   */
  async sentBy(sender: string, whole = true): Promise<MailRecord[]> {
    const index = this.#sentKey(sender);
    if (!index) return [];
    const entries = (await this.#command("XRANGE", [index, "-", "+"])) as Entry[];
    if (entries.length === 0) return [];
    const positions = new Map<string, number>();
    const keys: string[] = [];
    const args: string[] = [];
    const usable: Entry[] = [];
    // A copy moved back to a mailbox it left is indexed there twice: it is one copy, looked up once.
    const copies = new Set<string>();
    for (const entry of entries) {
      const mailbox = field(entry[1], "to");
      const copy = JSON.stringify([mailbox, field(entry[1], "id")]);
      if (copies.has(copy)) continue;
      copies.add(copy);
      let position = positions.get(mailbox);
      if (position === undefined) {
        let keysOf: MailboxKeys;
        try {
          keysOf = this.#keys(mailbox);
        } catch {
          continue;
        }
        position = positions.size + 1;
        positions.set(mailbox, position);
        keys.push(keysOf.ids, keysOf.mail, keysOf.read, keysOf.archids, keysOf.arch);
      }
      usable.push(entry);
      args.push(String(position), field(entry[1], "id"));
    }
    // A page of copies per call: a sender of a million copies looked up in one call held the server past its timeout.
    const found: [string, string?, string?][] = [];
    for (let at = 0; at < args.length; at += 2 * LIST_PAGE) {
      const page = (await this.#run(LOOK_UP, keys, args.slice(at, at + 2 * LIST_PAGE))) as [string, string?, string?][];
      for (const each of page) found.push(each);
    }
    const out: MailRecord[] = [];
    const gone: string[] = [];
    found.forEach(([state, record, readAt], i) => {
      const message = state ? parseMessage(record!) : null;
      if (!message) {
        if (!state) gone.push(usable[i]![0]);
        return;
      }
      if (!whole && message.message.length > WIDEST_LINE) message.message = message.message.slice(0, WIDEST_LINE);
      out.push({ message: withReadState(message, readAt), archived: state === "archived" });
    });
    if (gone.length > 0) await this.#command("XDEL", [index, ...gone]);
    // The index is in the order the copies were stored, which a migration (mailbox by mailbox) does not keep.
    return byCreation(withoutMovedSources(out));
  }

  /** sentBy's list reversed, in one batch: the Redis index holds whole copies, so the list is in memory anyway. */
  async *sentNewestFirst(sender: string, whole = true): AsyncGenerator<MailRecord[]> {
    const records = newestFirst(await this.sentBy(sender, whole));
    if (records.length > 0) yield records;
  }

  async deliveries(mailbox: string, ids?: ReadonlySet<string>): Promise<Map<string, DeliveryEvent[]>> {
    const entries = (await this.#command("XRANGE", [this.#keys(mailbox).delivery, "-", "+"])) as Entry[];
    const events: DeliveryEvent[] = [];
    for (const [, fields] of entries) {
      const event = parseEvent(field(fields, "event"));
      if (event && (!ids || ids.has(event.id))) events.push(event);
    }
    return byMessage(events);
  }

  async announced(mailbox: string): Promise<Set<string>> {
    return new Set((await this.#command("HKEYS", [this.#keys(mailbox).announced])) as string[]);
  }

  async recordDelivery(mailbox: string, events: readonly DeliveryEvent[]): Promise<void> {
    if (events.length === 0) return;
    const keys = this.#keys(mailbox);
    const args = events.flatMap((event) => [event.id, serializeEvent(event), effectOn(event)]);
    await this.#run(RECORD_DELIVERY, [keys.delivery, keys.announced, keys.ids, keys.read, keys.rbell], args);
  }

  async announce(mailbox: string, events: readonly DeliveryEvent[]): Promise<string[]> {
    if (events.length === 0) return [];
    const keys = this.#keys(mailbox);
    const args = events.flatMap((event) => [event.id, serializeEvent(event)]);
    return (await this.#run(ANNOUNCE, [keys.ids, keys.read, keys.lease, keys.announced, keys.delivery, keys.rbell], args)) as string[];
  }

  async #mailboxNames(): Promise<string[]> {
    return (await this.#command("HKEYS", [this.#key("unread")])) as string[];
  }

  async mailboxes(): Promise<string[]> {
    return sortNames((await this.#mailboxNames()).filter((name) => !name.startsWith(ROLE_PREFIX)));
  }

  async roleQueues(): Promise<string[]> {
    const queues = (await this.#mailboxNames()).filter((name) => name.startsWith(ROLE_PREFIX));
    return sortNames(queues.map((name) => name.slice(ROLE_PREFIX.length)));
  }

  async archives(): Promise<string[]> {
    return sortNames((await this.#command("SMEMBERS", [this.#key("archived")])) as string[]);
  }

  /**
   * Reads the mailbox a page at a time and, for a rule's selection, moves each page's picks with one script call,
   * so neither this process nor the server holds the whole mailbox at once, and no single call keeps senders and
   * receivers waiting for long however long the mailbox is. Each call moves entries by stream id, with their read
   * state as it is then, so mail sent or read meanwhile is never lost. A selection by id moves with one call: all of
   * them, or none. Each message is decided by its record (the copy moved most, which APPEND makes its newest entry);
   * an older copy of it (read: a copy `agentmail name` sent on, and got back) waits for that and goes with it.
   */
  async archive(mailbox: string, selection: Selection, dryRun: boolean): Promise<ArchiveResult> {
    const keys = this.#keys(mailbox);
    const wanted = "ids" in selection ? new Set(selection.ids) : null;
    const picks = (message: Message) => (wanted ? wanted.has(message.id) : "pick" in selection && selection.pick(message));
    let archived = 0;
    const found = new Set<string>();
    const byId: string[] = [];
    let entries = 0;
    let kept = 0;
    let removed = false;
    /** Older copies seen before their record, by id: stream id and message. */
    const waiting = new Map<string, { streamId: string; message: Message }[]>();
    /** Decides one message: its record, and the older copies that wait for it; adds the pairs to move to `moving`. */
    const decide = (streamId: string, message: Message, moving: string[]) => {
      const older = waiting.get(message.id) ?? [];
      waiting.delete(message.id);
      if (wanted) found.add(message.id);
      if (picks(message)) {
        // Older copies first: the archive's index of ids then names the record, as the mailbox's did.
        for (const copy of older) moving.push(copy.streamId, message.id);
        moving.push(streamId, message.id);
        archived++;
      } else kept += 1 + older.length;
    };
    const move = async (moving: string[]) => {
      if (wanted) byId.push(...moving);
      else if (!dryRun && moving.length > 0) removed = (await this.#moveToArchive(mailbox, false, moving)) || removed;
    };
    for (let from = "-"; ; ) {
      const page = (await this.#run(PAGE, [keys.mail, keys.read, keys.ids], [from, String(ARCHIVE_PAGE)])) as [
        string,
        string,
        string,
        string,
      ][];
      if (page.length === 0) break;
      entries += page.length;
      const moving: string[] = [];
      for (const [streamId, record, readAt, older] of page) {
        const message = parseMessage(record);
        if (!message) {
          kept++;
          continue;
        }
        withReadState(message, readAt);
        if (older === "1") {
          const list = waiting.get(message.id) ?? [];
          list.push({ streamId, message });
          waiting.set(message.id, list);
        } else decide(streamId, message, moving);
      }
      await move(moving);
      from = page[page.length - 1]![0];
    }
    // Older copies whose record left the mailbox meanwhile (another archive): each newest one left is decided itself.
    const moving: string[] = [];
    for (const copies of [...waiting.values()]) {
      const last = copies.pop()!;
      waiting.set(last.message.id, copies);
      decide(last.streamId, last.message, moving);
    }
    await move(moving);
    const missing = wanted ? [...wanted].filter((id) => !found.has(id)) : [];
    if (missing.length > 0) throw notInMailbox(missing);
    if (dryRun) return { archived, removed: entries > 0 && kept === 0 };
    if (byId.length > 0) removed = await this.#moveToArchive(mailbox, true, byId);
    return { archived, removed };
  }

  /** One ARCHIVE call: moves these (stream id, message id) pairs; returns whether the mailbox was left empty and removed. */
  async #moveToArchive(mailbox: string, allOrNone: boolean, pairs: string[]): Promise<boolean> {
    const keys = this.#keys(mailbox);
    const result = (await this.#run(
      ARCHIVE,
      [keys.mail, keys.read, keys.ids, keys.lease, keys.cursor, this.#key("unread"), keys.arch, keys.archids, this.#key("archived")],
      [mailbox, allOrNone ? "1" : "0", ...pairs],
    )) as [number, number | string];
    if (result[0] === -1) throw notInMailbox([String(result[1])]);
    return result[1] === 1;
  }

  async purgeArchive(mailbox: string, drop: (message: Message) => boolean, dryRun: boolean): Promise<Message[]> {
    const keys = this.#keys(mailbox);
    const entries = (await this.#command("XRANGE", [keys.arch, "-", "+"])) as Entry[];
    const purged: { streamId: string; message: Message }[] = [];
    for (const [streamId, fields] of entries) {
      const message = parseMessage(field(fields, "record"));
      if (message && drop(withReadState(message, field(fields, "read_at")))) purged.push({ streamId, message });
    }
    if (!dryRun && purged.length > 0) {
      const pairs = purged.flatMap((entry) => [entry.streamId, entry.message.id]);
      await this.#run(PURGE, [keys.arch, keys.archids, this.#key("archived")], [mailbox, ...pairs]);
    }
    return purged.map((entry) => entry.message);
  }

  async watch(mailboxes: readonly string[] | null, receipts = false): Promise<MailWatch> {
    await this.#notMoved();
    const bells =
      mailboxes === null
        ? [this.#key("bell")]
        : mailboxes.flatMap((mailbox) => {
            const keys = this.#keys(mailbox);
            return receipts ? [keys.bell, keys.rbell] : [keys.bell];
          });
    const inner = await watchBells(this.#connection, [...bells, this.#key("lists")], this.#leaseMs);
    const watches = this.#watches;
    const watch: MailWatch = {
      changed: (ms) => inner.changed(ms),
      close() {
        watches.delete(watch);
        inner.close();
      },
    };
    watches.add(watch);
    return watch;
  }

  async feed(): Promise<MailFeed> {
    const { RedisFeed } = await import("./feed.ts");
    const port = {
      command: (name: string, args: string[]) => this.#connection.command(name, args),
      run: (script: Script, keys: string[], args: string[]) => this.#run(script, keys, args),
      keys: (mailbox: string) => this.#keys(mailbox),
      key: (kind: string) => this.#key(kind),
      parse: parseMessage,
      parseEvent,
      look: FEED_LOOK,
    };
    return new RedisFeed(port, await this.watch(null));
  }

  async memberships(kind: MembershipKind): Promise<Memberships> {
    const key = this.#key(kind);
    return parseLists(((await this.#command("GET", [key])) as string | null) ?? "", key);
  }

  /**
   * Reads the lists, changes them here, and stores the result only if nobody changed them meanwhile; otherwise
   * `change` runs again on what is stored now. So `change` may run more than once, and must only edit the lists.
   */
  async updateMemberships<T>(kind: MembershipKind, change: (lists: Memberships) => T): Promise<T> {
    const key = this.#key(kind);
    let stored = ((await this.#command("GET", [key])) as string | null) ?? "";
    for (;;) {
      const lists = parseLists(stored, key);
      const result = change(lists);
      const [replaced, current] = (await this.#run(REPLACE_LISTS, [key, this.#key("lists")], [stored, serializeLists(lists)])) as [
        number,
        string?,
      ];
      if (replaced === 1) return result;
      stored = current ?? "";
    }
  }

  /** The claims document as stored, on the server's clock (the claims code loads only for claims, not for mail). */
  async #claimsAt(document: string, now: string): Promise<ClaimsSnapshot> {
    if (document === "") return { claims: [], now: Number(now) };
    const { parseClaims } = await import("../../claims/claims.ts");
    const claims = parseClaims(document);
    if (claims === null) {
      throw new AgentmailError(
        "io",
        `the claims at ${this.location} (${this.#key("claims")}) are not a claims document; delete that key to drop every claim`,
      );
    }
    return { claims, now: Number(now) };
  }

  async fileClaims(): Promise<ClaimsSnapshot> {
    const [document, now] = (await this.#run(READ_CLAIMS, [this.#key("claims")], [])) as [string, string];
    return await this.#claimsAt(document, now);
  }

  /**
   * Reads the claims with the server's time, decides here, and stores the result only if nobody changed the claims
   * meanwhile; otherwise decides again on what is stored now (a short random pause first, so that contenders spread).
   */
  async updateFileClaims<T>(change: (snapshot: ClaimsSnapshot) => ClaimsChange<T>): Promise<T> {
    const key = this.#key("claims");
    const { serializeClaims } = await import("../../claims/claims.ts");
    let [document, now] = (await this.#run(READ_CLAIMS, [key], [])) as [string, string];
    const started = Date.now();
    for (let attempt = 0; ; attempt++) {
      const outcome = change(await this.#claimsAt(document, now));
      if (outcome.claims === null) return outcome.result;
      const next = outcome.claims.length === 0 ? "" : serializeClaims(outcome.claims);
      const [replaced, current, then] = (await this.#run(REPLACE_CLAIMS, [key], [document, next])) as [number, string?, string?];
      if (replaced === 1) return outcome.result;
      if (Date.now() - started > CLAIMS_CHANGE_MS) {
        throw new AgentmailError("locked", `the claims at ${this.location} kept changing for ${CLAIMS_CHANGE_MS / 1000} s; retry`);
      }
      [document, now] = [current ?? "", then ?? "0"];
      await new Promise((done) => setTimeout(done, Math.random() * Math.min(50, 2 ** attempt)));
    }
  }

  async status(name: string): Promise<AgentEntry | null> {
    const json = (await this.#command("HGET", [this.#key("agents"), name])) as string | null;
    return json === null ? null : agentEntry(json);
  }

  async statuses(): Promise<AgentEntry[]> {
    const documents = (await this.#command("HVALS", [this.#key("agents")])) as string[];
    const entries = documents.flatMap((json) => agentEntry(json) ?? []);
    return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** A claim is not kept (Store.nameClaims is null): every call's AGENTMAIL_NAME is checked against tmux. */
  async writeStatus({ name, status, pane, at: now = new Date(), pin, place }: Registration): Promise<AgentEntry> {
    const pinned = [pin?.window ?? "", pin?.server ?? "", pin?.host ?? ""];
    const args = [name, status, pane, now.toISOString(), this.#host, ...pinned, place?.server ?? "", place?.host ?? ""];
    const json = (await this.#run(WRITE_STATUS, [this.#key("agents")], args)) as string;
    return agentEntry(json)!;
  }

  async removeStatus(name: string): Promise<void> {
    await this.#command("HDEL", [this.#key("agents"), name]);
  }

  async touch(presence: Presence, exclusiveMs = 0, takeOver = false): Promise<Touch> {
    const exclusive = String(Math.max(0, Math.floor(exclusiveMs)));
    const where = [presence.tmux?.server ?? "", presence.tmux?.host ?? "", takeOver ? "1" : ""];
    const args = [presence.name, presence.host, presence.pane, exclusive, new Date().toISOString(), ...where];
    const [accepted, json] = (await this.#runChecked(TOUCH, [this.#key("agents")], args)) as [number, string];
    if (accepted === 1) return { accepted: true };
    const found = agentEntry(json) ?? { name: presence.name, status: "ready", since: "", updated_at: "", pane: "" };
    const holder = { ...found, host: presenceHost(json) ?? found.host };
    return accepted === 2 ? { accepted: false, holder, liveness: true } : { accepted: false, holder };
  }

  async moved(): Promise<MovedNote | null> {
    const note = (await this.#connection.command("GET", [this.#key("moved")])) as string | null;
    return note === null ? null : parseMovedNote(note);
  }

  /**
   * Sets (or deletes) the moved key. The scripts that send and take refuse once it is set, atomically; when the mail
   * starts moving, this then waits (at most 5 s) for the leases of receives under way to end, so a message being
   * shown is copied read. A lease left after that is a receiver that died or hangs: its message is copied unread
   * and shown once more, as after any receiver's death.
   */
  async markMoved(note: MovedNote | null): Promise<void> {
    const key = this.#key("moved");
    if (note) await this.#connection.command("SET", [key, serializeMovedNote(note).trimEnd()]);
    else await this.#connection.command("DEL", [key]);
    if (note?.state !== "moving") return;
    const deadline = Date.now() + LEASES_DRAIN_MS;
    for (;;) {
      const mailboxes = (await this.#connection.command("HKEYS", [this.#key("unread")])) as string[];
      const leases = mailboxes.flatMap((mailbox) => {
        try {
          return [this.#keys(mailbox).lease];
        } catch {
          return [];
        }
      });
      if (leases.length === 0 || Number(await this.#connection.run(LIVE_LEASES, leases, [])) === 0) return;
      if (Date.now() > deadline) return;
      await new Promise((done) => setTimeout(done, 20));
    }
  }

  /** Every other namespace on this server with registered agents, sorted (Store). One SCAN, a page at a time. */
  async otherNamespaces(): Promise<string[]> {
    const found = new Set<string>();
    let cursor = "0";
    do {
      const [next, keys] = (await this.#connection.command("SCAN", [cursor, "MATCH", "agentmail:{*}:agents", "COUNT", "1000"])) as [
        string,
        string[],
      ];
      for (const key of keys) {
        const namespace = key.endsWith("}:agents") ? namespaceOfKey(key) : null;
        if (namespace !== null && namespace !== this.namespace) found.add(namespace);
      }
      cursor = String(next);
    } while (cursor !== "0");
    return [...found].sort();
  }

  /** Deletes every key of the namespace but the moved key (which keeps agents left on it from using it). */
  async mailRemoval(): Promise<string | null> {
    const pattern = this.#prefix.replace(/[*?[\]\\]/g, (char) => `\\${char}`) + "*";
    const cli = redisCliCommand(await this.#connection.server());
    const keep = this.#key("moved");
    const password = this.#address.password ? "  # with REDISCLI_AUTH set to the server's password" : "";
    return `${cli} --scan --pattern ${shellQuote(pattern)} | grep -v -x -F ${shellQuote(keep)} | xargs ${cli} del${password}`;
  }

  /**
   * What `doctor` checks: the namespace's registered agents (which also proves the server answers), the server's
   * version and its persistence settings. INFO and CONFIG are often refused (a managed server, a limited user): what
   * cannot be read is null.
   */
  async serverInfo(): Promise<ServerInfo> {
    const agents = Number(await this.#connection.command("HLEN", [this.#key("agents")]));
    const refused = (error: unknown) => {
      if (error instanceof MailServerUnreachable) throw error;
      return null;
    };
    const [server, persistence, config] = (await Promise.all([
      this.#connection.command("INFO", ["server"]).catch(refused),
      this.#connection.command("INFO", ["persistence"]).catch(refused),
      this.#connection.command("CONFIG", ["GET", "appendfsync"]).catch(refused),
    ])) as [string | null, string | null, unknown];
    const aof = persistence === null ? null : /^aof_enabled:(\d)/m.exec(persistence)?.[1];
    return {
      agents,
      version: server === null ? null : (/^redis_version:(.+)$/m.exec(server)?.[1]?.trim() ?? null),
      appendonly: aof === null || aof === undefined ? null : aof === "1",
      appendfsync: hashOf(config).get("appendfsync") ?? null,
    };
  }

  /** What doctor reports of the servers: the sentinels' views, the server reached, its replicas (topology.ts). */
  async topology(): Promise<Topology> {
    const { readTopology } = await import("./topology.ts");
    return readTopology(this.#connection, this.#address);
  }

  close(): void {
    for (const watch of [...this.#watches]) watch.close();
    this.#connection.close();
  }
}

/**
 * A send whose outcome is not known: the connection broke after the message went out (and trying again did not get
 * through), or the primary stored it but too few replicas acknowledged it. The message may be delivered, so the
 * error says so, names its id, and says to look before sending again (a second send would be a second message).
 */
function uncertainSend(id: string, error: unknown): unknown {
  if (error instanceof ReplicasBehind)
    return new AgentmailError("io", `message ${id} may still be delivered: ${error.message}`, undefined, "checkSent");
  if (error instanceof MailServerUnreachable && error.maybeDone) {
    return new AgentmailError("io", `message ${id} may have been stored: ${error.message}`, undefined, "checkSent");
  }
  return error;
}

function notInMailbox(ids: string[]): AgentmailError {
  const list = ids.map(displayName).join(", ");
  return new AgentmailError("not_found", `no message ${list} in your mailbox; run 'agentmail inbox --all' to see the ids you can archive`);
}
