/**
 * The Redis store's feed (store.ts, MailFeed): every mailbox's changes, read incrementally in one script call per
 * look. For each mailbox the feed knows the last stream entry it read, the lengths of the mailbox, its read hash and
 * its archive, and which entries it reported unread; the script returns the entries added since, with their read
 * state, and the read times of those unread entries when the read hash grew. A mailbox whose lengths say something
 * was removed (archive, purge, cleanup) comes back whole, as a `reset`.
 *
 * Appends ring the namespace's bell, which wakes the feed; a read rings nothing, so a read is seen at the caller's
 * next timeout (the views look every second).
 */
import { parseMessage, type Message } from "../../core/message.ts";
import type { MailChange, MailFeed, MailWatch } from "../store.ts";
import { Script } from "./connection.ts";

/**
 * KEYS: three per mailbox (mail, read, arch). ARGV, per mailbox in that order: '1' to read it whole or '0', the
 * last stream id read, the known lengths of mail, read and arch, how many unread stream ids follow, and those ids.
 * Returns per mailbox {'whole', entries, {}, archive entries, lengths} or {'more', entries added, read times of the
 * given ids ('' for unread), {}, lengths}, where each entry is {stream id, record, read_at ('' for unread)} (an
 * archive entry's read_at is its own field) and lengths are those of mail, read and arch now. Changes nothing.
 */
const LOOK = new Script(`
local function field(fields, name)
  for i = 1, #fields, 2 do if fields[i] == name then return fields[i + 1] end end
  return ''
end
local function entries(key, from, read_key)
  local out = {}
  for _, entry in ipairs(redis.call('XRANGE', key, from, '+')) do
    local read_at = read_key and (redis.call('HGET', read_key, entry[1]) or '') or field(entry[2], 'read_at')
    out[#out + 1] = {entry[1], field(entry[2], 'record'), read_at}
  end
  return out
end
local out = {}
local at = 1
for i = 1, #KEYS, 3 do
  local mail, read, arch = KEYS[i], KEYS[i + 1], KEYS[i + 2]
  local whole, last = ARGV[at], ARGV[at + 1]
  local live_len, read_len, arch_len = tonumber(ARGV[at + 2]), tonumber(ARGV[at + 3]), tonumber(ARGV[at + 4])
  local unread_count = tonumber(ARGV[at + 5])
  local unread = {}
  for j = 1, unread_count do unread[j] = ARGV[at + 5 + j] end
  at = at + 6 + unread_count
  local added = whole == '1' and {} or entries(mail, '(' .. last, read)
  local now_live, now_read, now_arch = redis.call('XLEN', mail), redis.call('HLEN', read), redis.call('XLEN', arch)
  if whole == '1' or now_arch ~= arch_len or now_live ~= live_len + #added or now_read < read_len then
    out[#out + 1] = {'whole', entries(mail, '-', read), {}, entries(arch, '-', nil), now_live, now_read, now_arch}
  else
    local times = {}
    if now_read ~= read_len then
      for j = 1, #unread do times[j] = redis.call('HGET', read, unread[j]) or '' end
    end
    out[#out + 1] = {'more', added, times, {}, now_live, now_read, now_arch}
  end
end
return out
`);

/** What the RedisStore lends its feed: its connection and its key names. */
export interface FeedPort {
  command(name: string, args: string[]): Promise<unknown>;
  run(script: Script, keys: string[], args: string[]): Promise<unknown>;
  /** A mailbox's keys (throws for a name no mailbox can have). */
  keys(mailbox: string): { mail: string; read: string; arch: string };
  key(kind: string): string;
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
    const answers = (await this.port.run(LOOK, keys, args)) as Answer[];
    const changes: MailChange[] = [];
    for (let i = 0; i < names.length; i++) this.#apply(names[i]!, answers[i]!, changes);
    return changes;
  }

  #apply(mailbox: string, [mode, entries, reads, archived, live, read, archive]: Answer, changes: MailChange[]): void {
    let seen = this.#seen.get(mailbox);
    if (mode === "whole") {
      if (seen) changes.push({ kind: "reset", mailbox });
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
      const message = parseMessage(record);
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
