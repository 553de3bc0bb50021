/**
 * The file store's feed (store.ts, MailFeed): every mailbox's changes, read incrementally. A mailbox only grows at
 * its end (an append) and is marked read in place, right after a line is appended to its read journal
 * (read-times.ts), so a look stats each mailbox, its journal and its archive, and reads only the bytes added since
 * the last look. A journal line is the news that a message is being read; the message counts as read once its own
 * line's flag says so (a receive killed between the two leaves a time for an unread message), so the feed reads that
 * one line, now or at a later look. Anything else (a rewrite by archive or cleanup: another inode or a shorter file;
 * an archive that changed; a mark with no journal line) makes the feed read that one mailbox again whole, as a
 * `reset`.
 *
 * Woken by inotify on the store's directories (watch.ts), which is best effort: the caller's timeout is the backstop.
 */
import { closeSync, existsSync, lstatSync, type Stats } from "node:fs";
import { join } from "node:path";
import { parseEvent } from "../../mail/arrival.ts";
import { findReadFlag, type Message } from "../../mail/message.ts";
import { archivePath, listArchives } from "./archive.ts";
import { deliveryPathOf } from "./delivery-record.ts";
import { openForRead, readRange } from "../durable/files.ts";
import { listMailboxes } from "./mailbox.ts";
import { mailboxPath } from "../local/layout.ts";
import { ensureRoot } from "../paths.ts";
import { readsPathOf, readTimesIn, withReadTime } from "./read-times.ts";
import { recordsIn } from "./records.ts";
import type { MailChange, MailFeed } from "../store.ts";
import { watchStore, type StoreWatcher } from "./watch.ts";

const NEWLINE = 0x0a;
const decoder = new TextDecoder();

/** What the feed has read of one mailbox: where each of its files was, and the ids it reported. */
interface Seen {
  ino: number;
  /** Bytes of the mailbox read: up to the end of its last complete line. */
  size: number;
  mtimeMs: number;
  /** Bytes of the read journal read, likewise. */
  readsSize: number;
  archiveIno: number;
  archiveSize: number;
  /** Every id reported, with where its line is in the mailbox (bytes [start, end), newline excluded). */
  lines: Map<string, { start: number; end: number }>;
  /** Journal times of messages whose line did not say read yet: reported once it does. */
  pending: Map<string, string>;
  /** Bytes of the delivery record read, likewise. */
  deliverySize: number;
}

interface Place {
  dir: string;
  mailbox: string;
}

function statOf(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/** Bytes [from, size) of a file as it is now, with its stat; null when there is no such file. */
function readFrom(path: string, from: number): { stat: Stats; bytes: Uint8Array } | null {
  const file = openForRead(path);
  if (!file) return null;
  try {
    return { stat: file.stat, bytes: readRange(file.fd, Math.min(from, file.stat.size), file.stat.size) };
  } finally {
    closeSync(file.fd);
  }
}

/** Where the complete lines of bytes end (after the last newline); a line still being written is read next time. */
const completeEnd = (bytes: Uint8Array): number => bytes.lastIndexOf(NEWLINE) + 1;

export class FileFeed implements MailFeed {
  readonly #seen = new Map<string, Seen & Place>();
  readonly #watchers: StoreWatcher[];
  /** Directories whose files change inside them (archives, the registry), watched once they exist. */
  readonly #inner: string[];

  /** `roles`: where the role queues are (role-mail.ts), given by the store so this chunk does not import it. */
  constructor(
    readonly root: string,
    readonly roles: string,
  ) {
    ensureRoot(root);
    ensureRoot(roles);
    const mail = (name: string) => name.endsWith(".jsonl") || name.endsWith(".reads") || name.endsWith(".delivery");
    this.#watchers = [
      watchStore(root, (name) => mail(name) || name === ".archive" || name === ".agents" || name === ".roles.json"),
      watchStore(roles, (name) => mail(name) || name === ".archive"),
    ];
    this.#inner = [join(root, ".archive"), join(root, ".agents"), join(roles, ".archive")];
    this.#watchInner();
  }

  #watchInner(): void {
    for (let i = this.#inner.length - 1; i >= 0; i--) {
      const dir = this.#inner[i]!;
      if (!existsSync(dir)) continue;
      this.#watchers.push(watchStore(dir, () => true));
      this.#inner.splice(i, 1);
    }
  }

  /** Every mailbox with a file now (live or archived, agents' and role queues), and every one reported before. */
  #places(): Place[] {
    const places = new Map<string, Place>();
    for (const dir of [this.root, this.roles]) {
      for (const mailbox of [...listMailboxes(dir), ...listArchives(dir)]) places.set(`${dir}\n${mailbox}`, { dir, mailbox });
    }
    for (const [key, seen] of this.#seen) if (!places.has(key)) places.set(key, seen);
    return [...places.values()];
  }

  async changes(): Promise<MailChange[]> {
    if (this.#inner.length > 0) this.#watchInner();
    const changes: MailChange[] = [];
    for (const place of this.#places()) {
      const key = `${place.dir}\n${place.mailbox}`;
      const seen = this.#seen.get(key);
      if (seen === undefined || !this.#follow(seen, changes)) this.#readWhole(key, place, seen !== undefined, changes);
    }
    return changes;
  }

  /** Reads what was added to a mailbox since the last look; false when it must be read again whole. */
  #follow(seen: Seen & Place, changes: MailChange[]): boolean {
    const path = mailboxPath(seen.dir, seen.mailbox);
    const live = statOf(path);
    const reads = statOf(readsPathOf(path));
    const archive = statOf(archivePath(seen.dir, seen.mailbox));
    const liveIno = live?.ino ?? 0;
    const readsSize = reads?.size ?? 0;
    if (liveIno !== seen.ino || (live?.size ?? 0) < seen.size || readsSize < seen.readsSize) return false;
    if ((archive?.ino ?? 0) !== seen.archiveIno || (archive?.size ?? 0) !== seen.archiveSize) return false;
    const grew = live !== null && live.size > seen.size;
    const journaled = readsSize > seen.readsSize;
    if (grew) {
      const added = readFrom(path, seen.size);
      if (added === null || added.stat.ino !== seen.ino) return false;
      const end = completeEnd(added.bytes);
      for (const { message, start, end: stop } of recordsIn(added.bytes.subarray(0, end))) {
        if (seen.lines.has(message.id)) continue;
        seen.lines.set(message.id, { start: seen.size + start, end: seen.size + stop });
        changes.push({ kind: "stored", mailbox: seen.mailbox, record: { message, archived: false } });
      }
      seen.size += end;
    }
    if (journaled) {
      const added = readFrom(readsPathOf(path), seen.readsSize);
      if (added === null) return false;
      const end = completeEnd(added.bytes);
      for (const [id, at] of readTimesIn(decoder.decode(added.bytes.subarray(0, end)))) if (seen.lines.has(id)) seen.pending.set(id, at);
      seen.readsSize += end;
    }
    this.#delivered(path, seen, changes);
    const marked = this.#marked(path, seen, changes);
    // Changed in place with no journal line to say what: a mark whose time could not be written (a full disk).
    if (live !== null && live.mtimeMs !== seen.mtimeMs && !grew && !journaled && !marked) return false;
    if (live !== null) seen.mtimeMs = live.mtimeMs;
    return true;
  }

  /** Reports the events appended to the mailbox's delivery record since the last look (from its start at first). */
  #delivered(path: string, seen: Seen & Place, changes: MailChange[]): void {
    const record = deliveryPathOf(path);
    if ((statOf(record)?.size ?? 0) <= seen.deliverySize) return;
    const added = readFrom(record, seen.deliverySize);
    if (added === null) return;
    const end = completeEnd(added.bytes);
    const text = decoder.decode(added.bytes.subarray(0, end));
    for (let start = 0, stop = text.indexOf("\n"); stop !== -1; start = stop + 1, stop = text.indexOf("\n", start)) {
      const event = parseEvent(text.slice(start, stop));
      if (event) changes.push({ kind: "delivery", mailbox: seen.mailbox, event });
    }
    seen.deliverySize += end;
  }

  /** Reports the pending messages whose line now says read; whether there was one. */
  #marked(path: string, seen: Seen & Place, changes: MailChange[]): boolean {
    if (seen.pending.size === 0) return false;
    const file = openForRead(path);
    if (!file) return false;
    let marked = false;
    try {
      for (const [id, at] of seen.pending) {
        const line = seen.lines.get(id)!;
        if (findReadFlag(readRange(file.fd, line.start, line.end), 0, line.end - line.start)?.read !== true) continue;
        seen.pending.delete(id);
        changes.push({ kind: "read", mailbox: seen.mailbox, id, read_at: at });
        marked = true;
      }
    } finally {
      closeSync(file.fd);
    }
    return marked;
  }

  /** Reads a mailbox and its archive whole, reporting every record (after a reset when it was reported before). */
  #readWhole(key: string, place: Place, reported: boolean, changes: MailChange[]): void {
    const path = mailboxPath(place.dir, place.mailbox);
    // The journal first: a line appended after this is read again next time, which only repeats a mark.
    const journal = readFrom(readsPathOf(path), 0);
    const journalEnd = journal === null ? 0 : completeEnd(journal.bytes);
    const times = readTimesIn(journal === null ? "" : decoder.decode(journal.bytes.subarray(0, journalEnd)));
    const live = readFrom(path, 0);
    const liveEnd = live === null ? 0 : completeEnd(live.bytes);
    const archive = readFrom(archivePath(place.dir, place.mailbox), 0);
    if (reported) changes.push({ kind: "reset", mailbox: place.mailbox });
    const lines = new Map<string, { start: number; end: number }>();
    const report = (message: Message, archived: boolean) => {
      changes.push({ kind: "stored", mailbox: place.mailbox, record: { message, archived } });
    };
    for (const { message, start, end } of live === null ? [] : recordsIn(live.bytes.subarray(0, liveEnd))) {
      lines.set(message.id, { start, end });
      report(withReadTime(message, times), false);
    }
    for (const { message } of archive === null ? [] : recordsIn(archive.bytes)) if (!lines.has(message.id)) report(message, true);
    if (live === null && archive === null) {
      this.#seen.delete(key);
      return;
    }
    this.#seen.set(key, {
      ...place,
      ino: live?.stat.ino ?? 0,
      size: liveEnd,
      mtimeMs: live?.stat.mtimeMs ?? 0,
      readsSize: journalEnd,
      archiveIno: archive?.stat.ino ?? 0,
      archiveSize: archive?.stat.size ?? 0,
      lines,
      pending: new Map(),
      deliverySize: 0,
    });
    this.#delivered(path, this.#seen.get(key)!, changes);
  }

  changed(ms: number): Promise<void> {
    return Promise.race(this.#watchers.map((watcher) => watcher.changed(ms)));
  }

  close(): void {
    for (const watcher of this.#watchers) watcher.close();
  }
}
