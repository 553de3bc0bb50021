/**
 * The Redis store's feed (store.ts, MailFeed): every mailbox's changes, read incrementally in one script call per
 * look (FEED_LOOK in scripts.ts). For each mailbox the feed knows the last stream entry it read, the lengths of the
 * mailbox, its read hash and its archive, and which entries it reported unread; the script returns the entries added
 * since, with their read state, and the read times of those unread entries when the read hash grew. A mailbox whose
 * lengths say something was removed (archive, purge, cleanup) comes back whole, as a `reset`.
 *
 * Each mailbox's delivery record (notified, acknowledged, bounced) is read from the last entry reported on.
 *
 * Appends ring the namespace's bell, which wakes the feed; a read rings nothing, so a read is seen at the caller's
 * next timeout (the views look every second).
 */
import type { Message } from "../../mail/message.ts";
import type { DeliveryEvent, MailChange, MailFeed, MailWatch } from "../store.ts";
import type { Script } from "./connection.ts";

/** What the RedisStore lends its feed: its connection and its key names. */
export interface FeedPort {
  command(name: string, args: string[]): Promise<unknown>;
  run(script: Script, keys: string[], args: string[]): Promise<unknown>;
  /** scripts.ts's FEED_LOOK. What the store lends is what this chunk does not import: importing it would split the chunks send and receive load. */
  look: Script;
  /** A mailbox's keys (throws for a name no mailbox can have). */
  keys(mailbox: string): { mail: string; read: string; arch: string; delivery: string };
  key(kind: string): string;
  /** mail/message.ts's parser. */
  parse(record: string): Message | null;
  /** mail/arrival.ts's parser of a delivery event. */
  parseEvent(text: string): DeliveryEvent | null;
}

interface Seen {
  last: string;
  liveLength: number;
  readLength: number;
  archiveLength: number;
  /** Stream id → message id, for the entries reported unread. */
  unread: Map<string, string>;
  ids: Set<string>;
}

type Entry = [streamId: string, record: string, readAt: string];
type Answer = [mode: "whole" | "more", entries: Entry[], reads: string[], archived: Entry[], live: number, read: number, archive: number];

function withReadState(message: Message, readAt: string): Message {
  if (readAt) Object.assign(message, { read_flag: true, read_at: readAt });
  return message;
}

export class RedisFeed implements MailFeed {
  readonly #seen = new Map<string, Seen>();
  /** Per mailbox, the last entry of its delivery record reported. */
  readonly #events = new Map<string, string>();

  constructor(
    readonly port: FeedPort,
    readonly watch: MailWatch,
  ) {}

  async #names(): Promise<string[]> {
    const [live, archived] = (await Promise.all([
      this.port.command("HKEYS", [this.port.key("unread")]),
      this.port.command("SMEMBERS", [this.port.key("archived")]),
    ])) as [string[], string[]];
    const names = new Set([...live, ...archived, ...this.#seen.keys()]);
    const usable: string[] = [];
    for (const name of names) {
      try {
        this.port.keys(name);
        usable.push(name);
      } catch {
        // A field no mailbox could have: nothing to read under it.
      }
    }
    return usable.sort();
  }

  async changes(): Promise<MailChange[]> {
    const names = await this.#names();
    if (names.length === 0) return [];
    const keys: string[] = [];
    const args: string[] = [];
    for (const name of names) {
      const { mail, read, arch } = this.port.keys(name);
      keys.push(mail, read, arch);
      const seen = this.#seen.get(name);
      if (!seen) args.push("1", "0-0", "0", "0", "0", "0");
      else {
        args.push("0", seen.last, String(seen.liveLength), String(seen.readLength), String(seen.archiveLength));
        args.push(String(seen.unread.size), ...seen.unread.keys());
      }
    }
    const answers = (await this.port.run(this.port.look, keys, args)) as Answer[];
    const changes: MailChange[] = [];
    for (let i = 0; i < names.length; i++) this.#apply(names[i]!, answers[i]!, changes);
    // Each mailbox's delivery record from where the last look left it (from its start after a reset).
    const records = (await Promise.all(
      names.map((name) => this.port.command("XRANGE", [this.port.keys(name).delivery, `(${this.#events.get(name) ?? "0-0"}`, "+"])),
    )) as [string, string[]][][];
    for (let i = 0; i < names.length; i++) {
      for (const [streamId, fields] of records[i]!) {
        this.#events.set(names[i]!, streamId);
        const at = fields.indexOf("event");
        const event = at === -1 ? null : this.port.parseEvent(String(fields[at + 1]));
        if (event) changes.push({ kind: "delivery", mailbox: names[i]!, event });
      }
    }
    return changes;
  }

  #apply(mailbox: string, [mode, entries, reads, archived, live, read, archive]: Answer, changes: MailChange[]): void {
    let seen = this.#seen.get(mailbox);
    if (mode === "whole") {
      if (seen) changes.push({ kind: "reset", mailbox });
      this.#events.delete(mailbox);
      seen = { last: "0-0", liveLength: live, readLength: read, archiveLength: archive, unread: new Map(), ids: new Set() };
      this.#report(mailbox, seen, entries, false, changes);
      this.#report(mailbox, seen, archived, true, changes);
      if (live === 0 && archive === 0) this.#seen.delete(mailbox);
      else this.#seen.set(mailbox, seen);
      return;
    }
    if (!seen) return;
    const unread = [...seen.unread];
    reads.forEach((readAt, i) => {
      if (!readAt) return;
      const [streamId, id] = unread[i]!;
      seen.unread.delete(streamId);
      changes.push({ kind: "read", mailbox, id, read_at: readAt });
    });
    this.#report(mailbox, seen, entries, false, changes);
    Object.assign(seen, { liveLength: live, readLength: read, archiveLength: archive });
  }

  #report(mailbox: string, seen: Seen, entries: Entry[], archived: boolean, changes: MailChange[]): void {
    for (const [streamId, record, readAt] of entries) {
      if (!archived) seen.last = streamId;
      const message = this.port.parse(record);
      if (!message || seen.ids.has(message.id)) continue;
      seen.ids.add(message.id);
      withReadState(message, readAt);
      if (!archived && !readAt) seen.unread.set(streamId, message.id);
      changes.push({ kind: "stored", mailbox, record: { message, archived } });
    }
  }

  changed(ms: number): Promise<void> {
    return this.watch.changed(ms);
  }

  close(): void {
    this.watch.close();
  }
}
