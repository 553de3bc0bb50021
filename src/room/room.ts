/**
 * The room's state, kept in memory and brought up to date from the store's feed (store.ts, MailFeed): the first
 * look loads every mailbox once, each later one applies only what changed and says so as RoomEvents. Every query
 * the views make (the feed, a mailbox, a thread, search, sent mail, who writes to whom) is answered from memory.
 */
import { isRoleAddress } from "../mail/addresses.ts";
import { BOUNCE_SENDER, isAgentMailbox } from "../mail/bounce.ts";
import { threadOf, typeOf } from "../mail/fields.ts";
import type { Message } from "../mail/message.ts";
import type { AgentEntry, DeliveryEvent, MailChange, MailFeed, MailRecord, Store } from "../store/store.ts";
import { type AgentInput, agentRow, type MailboxFacts, type PaneFacts } from "./agents.ts";
import { deliveryOf, sameDelivery } from "./delivery.ts";
import type { AgentRow, ClaimRow, Graph, MailItem, MailmanView, MailRow, MessageView, NeedRow, RoomEvent } from "./model.ts";
import { mayNeed, needsOf } from "./needs.ts";
import { previewOf } from "./preview.ts";
import { DEFAULT_THRESHOLDS, type Thresholds } from "./thresholds.ts";

/** What the room learns outside the store's mail: tmux's view of the panes, the mailman, the claims judged. */
export interface AgentFacts {
  /** What this machine's tmux says of the agent's pane (see PaneFacts); `unknown` for another host's. */
  pane(entry: AgentEntry): PaneFacts;
  /** How mail reaches the agent (see AgentRow.reach). */
  reach(name: string): string;
  /** Every stored claim of the room's stores, judged (holders named as the room names them). */
  claims: ClaimRow[];
  /** The mailman of the view's store; null when it cannot be known (no local store). */
  mailman: MailmanView | null;
}

/** Nothing known of a pane. */
export const UNKNOWN_PANE: PaneFacts = { cli: null, open: null, shell: null };

/** Another project's store, in a room of every project (`--all-projects`): its names shown as `name@project`. */
export interface OtherProject {
  project: string;
  store: Store;
}

export interface RoomOptions {
  /** The person watching: their row is marked, and their mailbox is theirs to read. */
  human: string | null;
  /** This host's name: a pane id means something only for the agents registered from it. */
  host: string;
  /** Reads the facts; called at most every `factsMs`, and at once after `refreshFacts`. */
  facts(): Promise<AgentFacts>;
  factsMs?: number;
  thresholds?: Thresholds;
  /** Hears the person's registration (or its absence) at each look at the agents. */
  onHuman?(entry: AgentEntry | undefined): void;
  /** The view's own project's name, shown beside its agents in a room of every project. */
  project?: string | null;
  /** The other projects of a room of every project. */
  others?: readonly OtherProject[];
}

export interface RoomFilter {
  /** Mail from or to this agent (or role queue) only. */
  agent?: string;
  /** Mail whose subject, body, sender or recipient holds this text (case-insensitive). */
  text?: string;
}

/**
 * How a room of every project names what another project's store holds: its agents as `name@project`; a name that
 * already names a project as it is, but this project's (`ana@app`, the sender of a copy sent there) as this
 * project's agent, `ana`.
 */
export function namesIn(project: string, own: string | null | undefined): (name: string) => string {
  const ownSuffix = own ? `@${own}` : null;
  return (name) => {
    if (ownSuffix !== null && name.endsWith(ownSuffix)) return name.slice(0, -ownSuffix.length);
    return name.includes("@") ? name : `${name}@${project}`;
  };
}

/** One store the room follows, and how its names are shown. */
interface Source {
  store: Store;
  feed: MailFeed;
  /** The project shown beside its agents; null in a room of one project. */
  project: string | null;
  /** Its names as the room shows them: the view's own project's as they are, another's as `name@project`. */
  shown(name: string): string;
}

const keyOf = (mailbox: string, id: string) => `${mailbox}\n${id}`;
const text = (value: unknown): string | null => (typeof value === "string" && value !== "" ? value : null);

function itemOf(mailbox: string, from: string, { message, archived }: MailRecord, events?: readonly DeliveryEvent[]): MailItem {
  return {
    id: message.id,
    mailbox,
    from,
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
  /** The mailboxes (as shown) that are agents' (isAgentMailbox of the store's own name, before it is shown). */
  readonly #agentMailboxes = new Set<string>();
  /** Each copy's read state as its record says it (the delivery state is worked out from it and the events). */
  readonly #read = new Map<string, { read_flag: boolean; read_at: string | null }>();
  /** Each copy's delivery events (mail/arrival.ts), in the order recorded; kept for copies not seen yet too. */
  readonly #events = new Map<string, DeliveryEvent[]>();
  /** Each sender's newest message (ISO time): the last thing it did, as far as the mail says. */
  readonly #lastSent = new Map<string, string>();
  /** What each mailbox's mail says of its agent (room/agents.ts): newest read, acknowledgement, hook, channel. */
  readonly #boxes = new Map<string, MailboxFacts>();
  /** The ids some message answers (its in_reply_to): a question among them is answered. */
  readonly #answered = new Set<string>();
  /** The copies that may need the person (needs.ts): theirs, questions, bounced, unreachable; by key. */
  readonly #candidates = new Map<string, MailItem>();
  readonly #sources: Source[];
  #sorted: MailItem[] | null = null;
  #agents: AgentRow[] = [];
  #agentsJson = "";
  #needs: NeedRow[] = [];
  #needsJson = "[]";
  #claimsJson = "[]";
  #mailmanJson = "null";
  #facts: AgentFacts = { pane: () => UNKNOWN_PANE, reach: () => "pull", claims: [], mailman: null };
  #factsAt = Number.NEGATIVE_INFINITY;
  readonly thresholds: Thresholds;

  private constructor(
    readonly store: Store,
    sources: Source[],
    readonly options: RoomOptions,
  ) {
    this.#sources = sources;
    this.thresholds = options.thresholds ?? DEFAULT_THRESHOLDS;
  }

  /** Loads the whole store (and the other projects' stores) once; from then on `step` applies only what changed. */
  static async open(store: Store, options: RoomOptions): Promise<Room> {
    const sources: Source[] = [];
    const all = options.others !== undefined;
    try {
      sources.push({ store, feed: await store.feed(), project: all ? (options.project ?? null) : null, shown: (name) => name });
      for (const other of options.others ?? []) {
        sources.push({
          store: other.store,
          feed: await other.store.feed(),
          project: other.project,
          shown: namesIn(other.project, options.project),
        });
      }
    } catch (error) {
      for (const source of sources) source.feed.close();
      throw error;
    }
    const room = new Room(store, sources, options);
    try {
      await room.step();
    } catch (error) {
      room.close();
      throw error;
    }
    return room;
  }

  /** Applies what changed since the last step (mail, delivery states, agents, needs, claims) and says what it was. */
  async step(): Promise<RoomEvent[]> {
    const events: RoomEvent[] = [];
    for (const source of this.#sources) this.#apply(source, await source.feed.changes(), events);
    if (await this.#refreshAgents()) events.push({ event: "agents", agents: this.#agents });
    const needs = needsOf({
      human: this.options.human,
      candidates: this.#candidates.values(),
      answered: this.#answered,
      lastEvent: (item) => this.#events.get(keyOf(item.mailbox, item.id))?.at(-1),
      claims: this.#facts.claims,
      now: Date.now(),
      thresholds: this.thresholds,
    });
    const needsJson = JSON.stringify(needs);
    if (needsJson !== this.#needsJson) {
      this.#needs = needs;
      this.#needsJson = needsJson;
      events.push({ event: "needs", needs });
    }
    const claimsJson = JSON.stringify(this.#facts.claims);
    if (claimsJson !== this.#claimsJson) {
      this.#claimsJson = claimsJson;
      events.push({ event: "claims", claims: this.#facts.claims });
    }
    const mailmanJson = JSON.stringify(this.#facts.mailman);
    if (mailmanJson !== this.#mailmanJson) {
      this.#mailmanJson = mailmanJson;
      events.push({ event: "mailman", mailman: this.#facts.mailman });
    }
    return events;
  }

  /** Resolves when a store may have changed, or after `ms`. */
  wait(ms: number): Promise<void> {
    return Promise.race(this.#sources.map((source) => source.feed.changed(ms)));
  }

  /** The facts are read again at the next step (after a write that changes them: a claim released). */
  refreshFacts(): void {
    this.#factsAt = Number.NEGATIVE_INFINITY;
  }

  /** Stops following the stores (a store itself is closed with the others when the command ends: store/open.ts). */
  close(): void {
    for (const source of this.#sources) source.feed.close();
  }

  /**
   * The store that holds a mailbox of the room, and the mailbox's name there: `name@project` of a room of every
   * project is `name` in that project's store.
   */
  locate(mailbox: string): { store: Store; mailbox: string } {
    for (const source of this.#sources.slice(1)) {
      const suffix = `@${source.project}`;
      if (mailbox.endsWith(suffix)) return { store: source.store, mailbox: mailbox.slice(0, -suffix.length) };
    }
    return { store: this.store, mailbox };
  }

  /**
   * A stored copy (live or archived) as the room names it: the message, its sender as the room shows it (another
   * project's `name@project`, so a reply goes there), and the mailbox. Read from its store, so it is the latest.
   */
  async find(mailbox: string, id: string): Promise<{ message: Message; mailbox: string } | null> {
    const located = this.locate(mailbox);
    const found = await located.store.find(located.mailbox, id);
    if (!found) return null;
    const source = this.#sources.find((each) => each.store === located.store) ?? this.#sources[0]!;
    return { message: { ...found.message, from: source.shown(found.message.from) }, mailbox };
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

  #box(mailbox: string): MailboxFacts {
    let box = this.#boxes.get(mailbox);
    if (!box) this.#boxes.set(mailbox, (box = { read: null, acknowledged: null, hook: null, channel: null }));
    return box;
  }

  #put(item: MailItem): void {
    const key = keyOf(item.mailbox, item.id);
    this.#items.set(key, item);
    let box = this.#byMailbox.get(item.mailbox);
    if (!box) this.#byMailbox.set(item.mailbox, (box = new Map()));
    box.set(item.id, item);
    const last = this.#lastSent.get(item.from);
    if (last === undefined || item.created_at > last) this.#lastSent.set(item.from, item.created_at);
    if (item.in_reply_to !== null) this.#answered.add(item.in_reply_to);
    const read = this.#read.get(key)?.read_at;
    const facts = this.#box(item.mailbox);
    if (read && (facts.read === null || read > facts.read)) facts.read = read;
    if (mayNeed(item, this.options.human, this.#events.get(key)?.at(-1))) this.#candidates.set(key, item);
    else this.#candidates.delete(key);
    this.#sorted = null;
  }

  #drop(item: MailItem): void {
    const key = keyOf(item.mailbox, item.id);
    this.#items.delete(key);
    this.#byMailbox.get(item.mailbox)?.delete(item.id);
    this.#candidates.delete(key);
    this.#sorted = null;
  }

  /** A delivery event's mark on its mailbox's facts: an acknowledgement, a hook that ran, the channel used. */
  #noteEvent(mailbox: string, event: DeliveryEvent): void {
    const facts = this.#box(mailbox);
    if (event.event === "acknowledged" && (facts.acknowledged === null || event.at > facts.acknowledged)) facts.acknowledged = event.at;
    if (event.event === "notified" && event.channel !== undefined) {
      facts.channel = event.channel;
      if ((event.channel === "stop-hook" || event.channel === "tool-hook") && (facts.hook === null || event.at > facts.hook)) {
        facts.hook = event.at;
      }
    }
  }

  #apply(source: Source, changes: MailChange[], events: RoomEvent[]): void {
    // A reset mailbox's copies, until the records that follow it bring them back: what is left was removed.
    const resetting = new Map<string, Map<string, MailItem>>();
    for (const change of changes) {
      const mailbox = source.shown(change.mailbox);
      if (isAgentMailbox(change.mailbox)) this.#agentMailboxes.add(mailbox);
      if (change.kind === "reset") {
        const old = new Map(this.#byMailbox.get(mailbox) ?? []);
        for (const item of old.values()) this.#drop(item);
        // The feed reports the mailbox's delivery record again after a reset.
        for (const id of old.keys()) this.#events.delete(keyOf(mailbox, id));
        resetting.set(mailbox, old);
      } else if (change.kind === "stored") {
        const { message } = change.record;
        const key = keyOf(mailbox, message.id);
        this.#read.set(key, {
          read_flag: message.read_flag === true,
          read_at: typeof message.read_at === "string" ? message.read_at : null,
        });
        const item = itemOf(mailbox, source.shown(message.from), change.record, this.#events.get(key));
        const before = resetting.get(mailbox);
        const previous = before?.get(item.id) ?? this.#items.get(key);
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
        const key = keyOf(mailbox, change.id);
        const item = this.#items.get(key);
        const read = this.#read.get(key);
        if (!item || (read?.read_flag === true && (read.read_at === change.read_at || change.read_at === null))) continue;
        this.#read.set(key, { read_flag: true, read_at: change.read_at });
        this.#redeliver(item, events);
        // Put again even when its state did not move (a read with no event after it): its mailbox's facts did.
        this.#put(this.#items.get(key)!);
      } else if (change.kind === "delivery") {
        const key = keyOf(mailbox, change.event.id);
        const list = this.#events.get(key) ?? [];
        list.push(change.event);
        this.#events.set(key, list);
        this.#noteEvent(mailbox, change.event);
        const item = this.#items.get(key);
        if (item) {
          this.#redeliver(item, events);
          this.#put(this.#items.get(key)!);
        }
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
    const projects = new Map<string, string | null>();
    for (const source of this.#sources) {
      for (const entry of await source.store.statuses()) {
        const name = source.shown(entry.name);
        statuses.set(name, { ...entry, name });
        projects.set(name, source.project);
      }
    }
    // A mailbox of bounces kept for another project's sender (mail/bounce.ts) is no agent's.
    const names = new Set<string>([...statuses.keys(), ...[...this.#byMailbox.keys()].filter((name) => this.#agentMailboxes.has(name))]);
    // Senders are agents too, but not the peers a bridge brought mail from (`feat124:…`).
    for (const sender of this.#lastSent.keys()) if (!sender.includes(":")) names.add(sender);
    // agentmail itself sends bounces and claim notices: the sender of its own mail, no agent.
    names.delete(BOUNCE_SENDER);
    const human = this.options.human;
    if (human) {
      names.add(human);
      this.options.onHuman?.(statuses.get(human));
    }
    const claimsOf = new Map<string, ClaimRow[]>();
    for (const claim of this.#facts.claims) claimsOf.set(claim.holder, [...(claimsOf.get(claim.holder) ?? []), claim]);
    const rows: AgentRow[] = [];
    for (const name of [...names].sort()) {
      const entry = statuses.get(name);
      const unread: AgentInput["unread"] = [];
      for (const item of this.#byMailbox.get(name)?.values() ?? []) {
        if (item.archived || (item.delivery.state !== "stored" && item.delivery.state !== "notified")) continue;
        unread.push({ item, last: this.#events.get(keyOf(name, item.id))?.at(-1) });
      }
      const here = entry !== undefined && (entry.host === undefined || entry.host === this.options.host);
      rows.push(
        agentRow({
          name,
          project: projects.get(name) ?? (this.options.others ? this.#sourceOf(name).project : null),
          entry,
          unread,
          mailbox: this.#boxes.get(name),
          sent: this.#lastSent.get(name),
          claims: claimsOf.get(name) ?? [],
          pane: here ? this.#facts.pane(entry) : UNKNOWN_PANE,
          host: entry?.host ?? null,
          reach: name === human ? "room" : isRoleAddress(name) ? "role queue" : this.#facts.reach(name),
          human: name === human,
          now,
          thresholds: this.thresholds,
        }),
      );
    }
    const json = JSON.stringify(rows);
    if (json === this.#agentsJson) return false;
    this.#agents = rows;
    this.#agentsJson = json;
    return true;
  }

  #sourceOf(name: string): Source {
    for (const source of this.#sources.slice(1)) if (name.endsWith(`@${source.project}`)) return source;
    return this.#sources[0]!;
  }

  /** What needs the person (needs.ts), as of the last step. */
  needs(): NeedRow[] {
    return this.#needs;
  }

  /** Every stored claim, judged, as of the last look at the facts. */
  claims(): ClaimRow[] {
    return this.#facts.claims;
  }

  /** The mailman of the view's store, as of the last look at the facts. */
  mailman(): MailmanView | null {
    return this.#facts.mailman;
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

  /** How many copies pass the filter. */
  count(filter: RoomFilter): number {
    let count = 0;
    for (const item of this.#items.values()) if (matches(item, filter)) count++;
    return count;
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
