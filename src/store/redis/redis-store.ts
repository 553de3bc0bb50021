/**
 * The Redis (or Valkey) store: a stream per mailbox and one per archive, delivery through Lua scripts that lease
 * the oldest message that is neither read nor leased (scripts.ts has the keys). One connection for everything but
 * blocking reads, which each get their own.
 *
 * Contract (store.ts, the same as the file store's, checked by test/support/store-contract.ts): a send is stored,
 * indexed and rung in one script call, on disk once the server has it with `appendfsync always` (append.ts); a take
 * leases the oldest takeable message, shows it, and marks it read only after it was shown (take.ts has the FIFO rule
 * exactly); a namespace whose mail moved refuses every command with code `moved` (keyspace.ts). This class only
 * composes the parts, each along a seam the file store has too: sending (append.ts), taking (take.ts), what is
 * unread (unread.ts), reading without taking (records.ts, mark-read.ts), what a sender sent (sent.ts), the delivery
 * record (delivery-record.ts), mailboxes and archives (mailboxes.ts, archive.ts), groups and roles
 * (memberships.ts), claims (claims.ts), the registry (agents.ts), moving away (moving.ts), what doctor asks
 * (server-info.ts).
 */
import type { ClaimsChange, ClaimsSnapshot } from "../../claims/claims.ts";
import { parseEvent } from "../../mail/arrival.ts";
import { parseMessage, type Message } from "../../mail/message.ts";
import { shellQuote } from "../../mail/next-steps.ts";
import type { MovedNote } from "../moved.ts";
import { localRoot } from "../paths.ts";
import type { ServerInfo, ServerStore, Topology } from "../server.ts";
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
import { otherNamespaces, removeStatus, status, statuses, touch, writeStatus } from "./agents.ts";
import { append } from "./append.ts";
import { archive, purgeArchive } from "./archive.ts";
import { watchBells } from "./bells.ts";
import { fileClaims, updateFileClaims } from "./claims.ts";
import type { Script } from "./connection.ts";
import { announce, announced, deliveries, recordDelivery } from "./delivery-record.ts";
import { Keyspace, type KeyspaceOptions } from "./keyspace.ts";
import { archives, mailboxes, roleQueues } from "./mailboxes.ts";
import { markRead } from "./mark-read.ts";
import { memberships, updateMemberships } from "./memberships.ts";
import { mailRemoval, markMoved, moved } from "./moving.ts";
import { find, mail, mailMatching } from "./records.ts";
import { FEED_LOOK } from "./scripts.ts";
import { sentBy, sentNewestFirst } from "./sent.ts";
import { serverInfo } from "./server-info.ts";
import { Takes } from "./take.ts";
import { countUnread, unread, unreadIds } from "./unread.ts";

export interface RedisStoreOptions extends KeyspaceOptions {
  /** How a command comes to use this store (Store.pointer); by default AGENTMAIL_URL and AGENTMAIL_NAMESPACE. */
  pointer?: string;
  /** Store.localRoot: by default the local directory of the repository around the process. */
  localRoot?: () => string;
  /** Store.projectStore: another namespace of this server (open.ts keeps it open); by default a new store here. */
  namespaceStore?: (namespace: string) => Promise<Store>;
}

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
  readonly #space: Keyspace;
  readonly #takes: Takes;
  readonly #watches = new Set<MailWatch>();

  constructor(options: RedisStoreOptions) {
    this.#options = options;
    this.#space = new Keyspace(options);
    this.#takes = new Takes(this.#space);
    this.description = `redis ${options.address.display}`;
    this.location = this.#space.location;
    this.label = this.#space.label;
    this.namespace = options.namespace;
    this.pointer =
      options.pointer ?? `export AGENTMAIL_URL=${shellQuote(options.address.display)} AGENTMAIL_NAMESPACE=${shellQuote(options.namespace)}`;
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

  append(message: Message): Promise<void> {
    return append(this.#space, message);
  }

  take(mailbox: string, show: Show, options?: TakeOptions): Promise<Message | null> {
    return this.#takes.take(mailbox, show, options);
  }

  countUnread(mailbox: string): Promise<number> {
    return countUnread(this.#space, mailbox);
  }

  unreadIds(mailbox: string): Promise<string[]> {
    return unreadIds(this.#space, mailbox);
  }

  unread(mailbox: string): Promise<Message[]> {
    return unread(this.#space, mailbox);
  }

  mailMatching(mailbox: string, accept: (message: Message) => boolean, hint?: RegExp, which?: Which): Promise<MailRecord[]> {
    return mailMatching(this.#space, mailbox, accept, hint, which);
  }

  mail(mailbox: string, which?: Which, needle?: string): Promise<MailRecord[]> {
    return mail(this.#space, mailbox, which, needle);
  }

  find(mailbox: string, id: string): Promise<MailRecord | null> {
    return find(this.#space, mailbox, id);
  }

  markRead(mailbox: string, id: string, at?: Date, moves?: number): Promise<string | null> {
    return markRead(this.#space, mailbox, id, at, moves);
  }

  sentBy(sender: string, whole?: boolean): Promise<MailRecord[]> {
    return sentBy(this.#space, sender, whole);
  }

  sentNewestFirst(sender: string, whole?: boolean): AsyncGenerator<MailRecord[]> {
    return sentNewestFirst(this.#space, sender, whole);
  }

  deliveries(mailbox: string, ids?: ReadonlySet<string>): Promise<Map<string, DeliveryEvent[]>> {
    return deliveries(this.#space, mailbox, ids);
  }

  announced(mailbox: string): Promise<Set<string>> {
    return announced(this.#space, mailbox);
  }

  recordDelivery(mailbox: string, events: readonly DeliveryEvent[]): Promise<void> {
    return recordDelivery(this.#space, mailbox, events);
  }

  announce(mailbox: string, events: readonly DeliveryEvent[]): Promise<string[]> {
    return announce(this.#space, mailbox, events);
  }

  mailboxes(): Promise<string[]> {
    return mailboxes(this.#space);
  }

  roleQueues(): Promise<string[]> {
    return roleQueues(this.#space);
  }

  archives(): Promise<string[]> {
    return archives(this.#space);
  }

  archive(mailbox: string, selection: Selection, dryRun: boolean): Promise<ArchiveResult> {
    return archive(this.#space, mailbox, selection, dryRun);
  }

  purgeArchive(mailbox: string, drop: (message: Message) => boolean, dryRun: boolean): Promise<Message[]> {
    return purgeArchive(this.#space, mailbox, drop, dryRun);
  }

  async watch(mailboxes: readonly string[] | null, receipts = false): Promise<MailWatch> {
    const space = this.#space;
    await space.notMoved();
    const bells =
      mailboxes === null
        ? [space.key("bell")]
        : mailboxes.flatMap((mailbox) => {
            const keys = space.keys(mailbox);
            return receipts ? [keys.bell, keys.rbell] : [keys.bell];
          });
    const inner = await watchBells(space.connection, [...bells, space.key("lists")], space.leaseMs);
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
    const space = this.#space;
    const port = {
      command: (name: string, args: string[]) => space.connection.command(name, args),
      run: (script: Script, keys: string[], args: string[]) => space.run(script, keys, args),
      keys: (mailbox: string) => space.keys(mailbox),
      key: (kind: string) => space.key(kind),
      parse: parseMessage,
      parseEvent,
      look: FEED_LOOK,
    };
    return new RedisFeed(port, await this.watch(null));
  }

  memberships(kind: MembershipKind): Promise<Memberships> {
    return memberships(this.#space, kind);
  }

  updateMemberships<T>(kind: MembershipKind, change: (lists: Memberships) => T): Promise<T> {
    return updateMemberships(this.#space, kind, change);
  }

  fileClaims(): Promise<ClaimsSnapshot> {
    return fileClaims(this.#space);
  }

  updateFileClaims<T>(change: (snapshot: ClaimsSnapshot) => ClaimsChange<T>): Promise<T> {
    return updateFileClaims(this.#space, change);
  }

  status(name: string): Promise<AgentEntry | null> {
    return status(this.#space, name);
  }

  statuses(): Promise<AgentEntry[]> {
    return statuses(this.#space);
  }

  writeStatus(registration: Registration): Promise<AgentEntry> {
    return writeStatus(this.#space, registration);
  }

  removeStatus(name: string): Promise<void> {
    return removeStatus(this.#space, name);
  }

  touch(presence: Presence, exclusiveMs?: number, takeOver?: boolean): Promise<Touch> {
    return touch(this.#space, presence, exclusiveMs, takeOver);
  }

  otherNamespaces(): Promise<string[]> {
    return otherNamespaces(this.#space);
  }

  moved(): Promise<MovedNote | null> {
    return moved(this.#space);
  }

  markMoved(note: MovedNote | null): Promise<void> {
    return markMoved(this.#space, note);
  }

  mailRemoval(): Promise<string | null> {
    return mailRemoval(this.#space);
  }

  serverInfo(): Promise<ServerInfo> {
    return serverInfo(this.#space);
  }

  /** What doctor reports of the servers: the sentinels' views, the server reached, its replicas (topology.ts). */
  async topology(): Promise<Topology> {
    const { readTopology } = await import("./topology.ts");
    return readTopology(this.#space.connection, this.#space.address);
  }

  close(): void {
    for (const watch of [...this.#watches]) watch.close();
    this.#space.connection.close();
  }
}
