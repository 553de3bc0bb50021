/**
 * The room's state, kept in memory and brought up to date from the store's feed (store.ts, MailFeed): the first
 * look loads every mailbox once, each later one applies only what changed and says so as RoomEvents. Every query
 * the views make (the feed, a mailbox, a thread, search, sent mail, who writes to whom) is answered from memory.
 */
import { roleAddress } from "../mail/addresses.ts";
import { threadOf, typeOf } from "../mail/fields.ts";
import type { AgentEntry, DeliveryEvent, MailChange, MailFeed, MailRecord, Store } from "../store/store.ts";
import { deliveryOf, sameDelivery } from "./delivery.ts";
import type { AgentRow, Graph, MailItem, MailRow, MessageView, RoomEvent } from "./model.ts";

const ROLE_PREFIX = roleAddress("");
/** Longest preview of a body in a list row (characters). */
const PREVIEW_CHARS = 200;

/** What the room learns outside the store: the agent CLI in each pane of this host, and how mail reaches an agent. */
export interface AgentFacts {
  /** Pane id (as the registry records it) → the agent CLI holding it, or null; panes of this host only. */
  clis: ReadonlyMap<string, string | null>;
  /** How mail reaches the agent (see AgentRow.reach). */
  reach(name: string): string;
}

export interface RoomOptions {
  /** The person watching: their row is marked, and their mailbox is theirs to read. */
  human: string | null;
  /** This host's name: a pane id means something only for the agents registered from it. */
  host: string;
  /** Reads the facts; called at most every `factsMs`. */
  facts(): Promise<AgentFacts>;
  factsMs?: number;
}

export interface RoomFilter {
  /** Mail from or to this agent (or role queue) only. */
  agent?: string;
  /** Mail whose subject, body, sender or recipient holds this text (case-insensitive). */
  text?: string;
}

const keyOf = (mailbox: string, id: string) => `${mailbox}\n${id}`;
const text = (value: unknown): string | null => (typeof value === "string" && value !== "" ? value : null);

function itemOf(mailbox: string, { message, archived }: MailRecord, events?: readonly DeliveryEvent[]): MailItem {
  return {
    id: message.id,
    mailbox,
    from: message.from,
    created_at: String(message.created_at ?? ""),
    subject: text(message.subject),
    type: typeOf(message),
    priority: text(message.priority) ?? "normal",
    needs_response: message.needs_response === true,
    thread: threadOf(message),
    in_reply_to: text(message.in_reply_to),
    body: message.message,
    archived,
    delivery: deliveryOf(message, events),
  };
}

/** The subject, or the start of the body on one line. Raw text: each view makes it safe for where it shows it. */
export function previewOf(item: MailItem): string {
  const start = (item.subject ?? item.body).slice(0, PREVIEW_CHARS * 4);
  const line = start.replace(/\s+/g, " ").trim();
  return line.length > PREVIEW_CHARS ? `${line.slice(0, PREVIEW_CHARS - 1)}…` : line;
}

export function rowOf(item: MailItem): MailRow {
  const { body: _body, ...rest } = item;
  return { ...rest, preview: previewOf(item) };
}

const byMailbox = (a: MailItem, b: MailItem) => (a.mailbox < b.mailbox ? -1 : a.mailbox > b.mailbox ? 1 : 0);
/** Newest first; copies of one message (same time) by mailbox. */
const newestFirst = (a: MailItem, b: MailItem) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : byMailbox(a, b));
const oldestFirst = (a: MailItem, b: MailItem) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : byMailbox(a, b));

function matches(item: MailItem, filter: RoomFilter): boolean {
  if (filter.agent !== undefined && item.from !== filter.agent && item.mailbox !== filter.agent) return false;
  if (!filter.text) return true;
  const needle = filter.text.toLowerCase();
  return [item.subject ?? "", item.body, item.from, item.mailbox].some((field) => field.toLowerCase().includes(needle));
}

/** Messages with their copies, in the order of their first copy in `items`. */
export function messagesOf(items: Iterable<MailItem>): MessageView[] {
  const views = new Map<string, MessageView>();
  for (const item of items) {
    let view = views.get(item.id);
    if (!view) {
      const { mailbox: _mailbox, archived: _archived, delivery: _delivery, ...message } = item;
      view = { ...message, copies: [] };
      views.set(item.id, view);
    }
    view.copies.push({ mailbox: item.mailbox, archived: item.archived, delivery: item.delivery });
  }
  return [...views.values()];
}

export class Room {
  /** Every copy, by mailbox and id. */
  readonly #items = new Map<string, MailItem>();
  readonly #byMailbox = new Map<string, Map<string, MailItem>>();
  /** Each copy's read state as its record says it (the delivery state is worked out from it and the events). */
  readonly #read = new Map<string, { read_flag: boolean; read_at: string | null }>();
  /** Each copy's delivery events (mail/arrival.ts), in the order recorded; kept for copies not seen yet too. */
  readonly #events = new Map<string, DeliveryEvent[]>();
  /** Each sender's newest message (ISO time), for the last-seen of agents the registry does not know. */
  readonly #lastSent = new Map<string, string>();
  #sorted: MailItem[] | null = null;
  #agents: AgentRow[] = [];
  #agentsJson = "";
  #facts: AgentFacts = { clis: new Map(), reach: () => "pull" };
  #factsAt = Number.NEGATIVE_INFINITY;

  private constructor(
    readonly store: Store,
    readonly feed: MailFeed,
    readonly options: RoomOptions,
  ) {}

  /** Loads the whole store once; from then on `step` applies only what changed. */
  static async open(store: Store, options: RoomOptions): Promise<Room> {
    const room = new Room(store, await store.feed(), options);
    try {
      await room.step();
    } catch (error) {
      room.close();
      throw error;
    }
    return room;
  }

  /** Applies what changed since the last step (mail, delivery states, agents) and says what it was. */
  async step(): Promise<RoomEvent[]> {
    const events: RoomEvent[] = [];
    this.#apply(await this.feed.changes(), events);
    if (await this.#refreshAgents()) events.push({ event: "agents", agents: this.#agents });
    return events;
  }

  /** Resolves when the store may have changed, or after `ms`. */
  wait(ms: number): Promise<void> {
    return this.feed.changed(ms);
  }

  close(): void {
    this.feed.close();
  }

  /** A copy's state again, after its read state or its delivery record changed; an event when it moved. */
  #redeliver(item: MailItem, events: RoomEvent[]): void {
    const key = keyOf(item.mailbox, item.id);
    const read = this.#read.get(key) ?? { read_flag: false, read_at: null };
    const record = { id: item.id, from: item.from, to: item.mailbox, message: "", created_at: item.created_at, ...read };
    const delivery = deliveryOf(record, this.#events.get(key));
    if (sameDelivery(delivery, item.delivery)) return;
    this.#put({ ...item, delivery });
    events.push({ event: "delivery", id: item.id, mailbox: item.mailbox, delivery });
  }

  #put(item: MailItem): void {
    const key = keyOf(item.mailbox, item.id);
    this.#items.set(key, item);
    let box = this.#byMailbox.get(item.mailbox);
    if (!box) this.#byMailbox.set(item.mailbox, (box = new Map()));
    box.set(item.id, item);
    const last = this.#lastSent.get(item.from);
    if (last === undefined || item.created_at > last) this.#lastSent.set(item.from, item.created_at);
    this.#sorted = null;
  }

  #drop(item: MailItem): void {
    this.#items.delete(keyOf(item.mailbox, item.id));
    this.#byMailbox.get(item.mailbox)?.delete(item.id);
    this.#sorted = null;
  }

  #apply(changes: MailChange[], events: RoomEvent[]): void {
    // A reset mailbox's copies, until the records that follow it bring them back: what is left was removed.
    const resetting = new Map<string, Map<string, MailItem>>();
    for (const change of changes) {
      if (change.kind === "reset") {
        const old = new Map(this.#byMailbox.get(change.mailbox) ?? []);
        for (const item of old.values()) this.#drop(item);
        // The feed reports the mailbox's delivery record again after a reset.
        for (const id of old.keys()) this.#events.delete(keyOf(change.mailbox, id));
        resetting.set(change.mailbox, old);
      } else if (change.kind === "stored") {
        const { message } = change.record;
        const key = keyOf(change.mailbox, message.id);
        this.#read.set(key, {
          read_flag: message.read_flag === true,
          read_at: typeof message.read_at === "string" ? message.read_at : null,
        });
        const item = itemOf(change.mailbox, change.record, this.#events.get(key));
        const before = resetting.get(change.mailbox);
        const previous = before?.get(item.id) ?? this.#items.get(keyOf(item.mailbox, item.id));
        before?.delete(item.id);
        this.#put(item);
        if (!previous) events.push({ event: "mail", item });
        else {
          if (item.archived && !previous.archived) events.push({ event: "archived", id: item.id, mailbox: item.mailbox });
          if (!sameDelivery(item.delivery, previous.delivery)) {
            events.push({ event: "delivery", id: item.id, mailbox: item.mailbox, delivery: item.delivery });
          }
        }
      } else if (change.kind === "read") {
        const key = keyOf(change.mailbox, change.id);
        const item = this.#items.get(key);
        const read = this.#read.get(key);
        if (!item || (read?.read_flag === true && (read.read_at === change.read_at || change.read_at === null))) continue;
        this.#read.set(key, { read_flag: true, read_at: change.read_at });
        this.#redeliver(item, events);
      } else if (change.kind === "delivery") {
        const key = keyOf(change.mailbox, change.event.id);
        const list = this.#events.get(key) ?? [];
        list.push(change.event);
        this.#events.set(key, list);
        const item = this.#items.get(key);
        if (item) this.#redeliver(item, events);
      }
    }
    for (const [mailbox, left] of resetting) for (const id of left.keys()) events.push({ event: "removed", id, mailbox });
  }

  async #refreshAgents(): Promise<boolean> {
    const now = Date.now();
    if (now - this.#factsAt >= (this.options.factsMs ?? 5_000)) {
      this.#facts = await this.options.facts();
      this.#factsAt = now;
    }
    const statuses = new Map<string, AgentEntry>();
    for (const entry of await this.store.statuses()) statuses.set(entry.name, entry);
    const names = new Set<string>([...statuses.keys(), ...this.#byMailbox.keys()]);
    // Senders are agents too, but not the peers a bridge brought mail from (`feat124:…`).
    for (const sender of this.#lastSent.keys()) if (!sender.includes(":")) names.add(sender);
    if (this.options.human) names.add(this.options.human);
    const rows: AgentRow[] = [];
    for (const name of [...names].sort()) {
      const status = statuses.get(name);
      const human = name === this.options.human;
      let unread = 0;
      for (const item of this.#byMailbox.get(name)?.values() ?? [])
        if (!item.archived && (item.delivery.state === "stored" || item.delivery.state === "notified")) unread++;
      const here = status !== undefined && (status.host === undefined || status.host === this.options.host);
      rows.push({
        name,
        status: status?.status ?? null,
        cli: here ? (this.#facts.clis.get(status.pane) ?? null) : null,
        unread,
        last_seen: status?.last_seen ?? this.#lastSent.get(name) ?? null,
        host: status?.host ?? null,
        reach: human ? "room" : name.startsWith(ROLE_PREFIX) ? "role queue" : this.#facts.reach(name),
        human,
      });
    }
    const json = JSON.stringify(rows);
    if (json === this.#agentsJson) return false;
    this.#agents = rows;
    this.#agentsJson = json;
    return true;
  }

  agents(): AgentRow[] {
    return this.#agents;
  }

  /** How many copies the room holds. */
  get size(): number {
    return this.#items.size;
  }

  /** The newest copies first, at most `limit`, that pass the filter. */
  latest(limit: number, filter: RoomFilter = {}): MailItem[] {
    this.#sorted ??= [...this.#items.values()].sort(newestFirst);
    const out: MailItem[] = [];
    for (const item of this.#sorted) {
      if (out.length >= limit) break;
      if (matches(item, filter)) out.push(item);
    }
    return out;
  }

  item(mailbox: string, id: string): MailItem | null {
    return this.#items.get(keyOf(mailbox, id)) ?? null;
  }

  /** A copy of the message `id`, in whichever mailbox holds one (the first by name), or null. */
  anyCopy(id: string): MailItem | null {
    let found: MailItem | null = null;
    for (const [mailbox, box] of this.#byMailbox) {
      const item = box.get(id);
      if (item && (found === null || mailbox < found.mailbox)) found = item;
    }
    return found;
  }

  /** A mailbox's copies, newest first (live and archived). */
  mailbox(name: string): MailItem[] {
    return [...(this.#byMailbox.get(name)?.values() ?? [])].sort(newestFirst);
  }

  /** The thread `id` belongs to, oldest first; null when no mailbox holds `id`. */
  thread(id: string): MessageView[] | null {
    const start = this.anyCopy(id);
    if (!start) return null;
    const members: MailItem[] = [];
    for (const item of this.#items.values()) if (item.thread === start.thread) members.push(item);
    return messagesOf(members.sort(oldestFirst));
  }

  /** What `name` sent, newest first, each message with every copy's delivery state. */
  sent(name: string): MessageView[] {
    return messagesOf(this.latest(Number.POSITIVE_INFINITY, { agent: name }).filter((item) => item.from === name));
  }

  /** Messages whose subject, body, sender or recipient holds `text`, newest first, at most `limit`. */
  search(text: string, limit: number): MessageView[] {
    return messagesOf(this.latest(Number.POSITIVE_INFINITY, { text })).slice(0, limit);
  }

  /** Who writes to whom since `since` (every copy counts once on its edge); all time when null. */
  graph(since: Date | null): Graph {
    const from = since?.toISOString() ?? "";
    const edges = new Map<string, { from: string; to: string; count: number }>();
    const nodes = new Set<string>();
    for (const item of this.#items.values()) {
      if (item.created_at < from) continue;
      const key = keyOf(item.from, item.mailbox);
      const edge = edges.get(key) ?? { from: item.from, to: item.mailbox, count: 0 };
      edge.count++;
      edges.set(key, edge);
      nodes.add(item.from).add(item.mailbox);
    }
    return { since: since?.toISOString() ?? null, nodes: [...nodes].sort(), edges: [...edges.values()].sort((a, b) => b.count - a.count) };
  }
}
