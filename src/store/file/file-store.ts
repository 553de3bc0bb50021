/**
 * The embedded store behind the Store interface: JSONL mailboxes in one directory (the repository's `.git/mail`, or
 * AGENTMAIL_DIR), each file module keeping its own logic (mailbox.ts: append and take; mail-view.ts: reading;
 * archive.ts; sent-index.ts; status.ts; memberships.ts). Role queues are mailboxes named `role:<role>` kept in
 * `<root>/.roles/` (role-mail.ts). Reads of a root that does not exist yet return nothing; writes create it.
 *
 * Send, receive and status load only mailbox.ts, status.ts and what they need: every other module is imported when
 * first used.
 */
import { existsSync } from "node:fs";
import { basename } from "node:path";
import type { ClaimsChange, ClaimsSnapshot } from "../../claims/claims.ts";
import { isRoleAddress, roleAddress, roleOfAddress } from "../../mail/addresses.ts";
import { byCreation } from "../../mail/order.ts";
import { deliveryKey, movesOf, type Message } from "../../mail/message.ts";
import { shellQuote } from "../../mail/next-steps.ts";
import { bellNames, isRung, pointPane, quiet, ring, ringAll } from "../local/doorbell.ts";
import { withLock } from "../durable/lock.ts";
import { appendMessage, countUnread, holdsKey, listMailboxes, takeOldestUnread } from "./mailbox.ts";
import { lockPathOf, mailboxPath } from "../local/layout.ts";
import { readMemberships, updateMemberships } from "./memberships.ts";
import { ensureRoot, ensureStoreDirectory, mailRoot } from "../paths.ts";
import { refuseIfMoved } from "../local/tombstone.ts";
import { roleRoot, rolesWithQueues } from "./role-mail.ts";
import type {
  AgentEntry,
  AgentStatus,
  Doorbells,
  MovedNote,
  AppendOptions,
  ArchiveResult,
  MailFeed,
  MailRecord,
  MailWatch,
  MembershipKind,
  Memberships,
  NameClaims,
  DeliveryEvent,
  Presence,
  ProjectPlace,
  ReadProgress,
  Registration,
  Selection,
  Show,
  Store,
  TakeOptions,
  Touch,
  Which,
} from "../store.ts";
// Statically: hooks set the status on every turn.
import { readClaim, writeRegistration } from "./registry.ts";
import { listStatuses, readStatus, removeStatus } from "./status.ts";

/** The status file as the registry shows it: the file store knows when the agent last set it, not when it was last seen. */
const entryOf = (status: AgentStatus): AgentEntry => ({ ...status, last_seen: status.updated_at });

export class FileStore implements Store {
  readonly sharedAcrossHosts = false;
  readonly namespace = null;
  /** Claims live in the registrations (registry.ts), read straight from their files. */
  readonly nameClaims: NameClaims = { claimOf: (name) => readClaim(this.root, name) };
  readonly doorbells: Doorbells = {
    point: (env, name, thread) => pointPane(env, this.root, name, thread),
    settle: (name) => this.#settle(name),
  };
  readonly description: string;
  readonly location: string;
  readonly label: string;
  readonly #pointer: string | undefined;

  /** `pointer`: how a command comes to use this store (the default names the directory; see Store.pointer). */
  constructor(
    readonly root: string,
    pointer?: string,
  ) {
    this.description = `file ${root}`;
    this.location = root;
    this.label = root;
    this.#pointer = pointer;
  }

  /** Made when asked (a move's note, an error), not by every command that opens the store. */
  get pointer(): string {
    return this.#pointer ?? `unset AGENTMAIL_URL; export AGENTMAIL_DIR=${shellQuote(this.root)}`;
  }

  localRoot(): string {
    return this.root;
  }

  /** That repository's own store, as an agent working there finds it (none of the caller's git or store settings). */
  async projectStore({ key, repository }: ProjectPlace): Promise<Store> {
    const where = repository ?? { commonDir: key, workTree: null };
    return new FileStore(mailRoot(where.workTree ?? where.commonDir, {}, where));
  }

  /** The directory a mailbox's file is in: the root, or `.roles/` for a role's queue. */
  #dirOf(mailbox: string): string {
    return isRoleAddress(mailbox) ? roleRoot(this.root) : this.root;
  }

  /** Creates the root (marked) or the role queues' directory on first use. */
  #ensure(dir: string): string {
    return dir === this.root ? ensureRoot(dir) : ensureStoreDirectory(this.root, dir);
  }

  #exists(): boolean {
    return existsSync(this.root);
  }

  async append(message: Message, { freshId = false, checked = false }: AppendOptions = {}): Promise<void> {
    const dir = this.#dirOf(message.to);
    if (movesOf(message) > 0) return this.#appendMovedCopy(dir, message);
    // A message whose id the mailbox holds is not stored again (a resumed migration or import); two appends of one
    // id racing past this check both land, and readers still show the id once (the first line with an id wins).
    // A send's new id skips the look: it read the mailbox's whole unread part, 0.3–1.7 ms of every send.
    if (!freshId && !checked && holdsKey(dir, message.to, deliveryKey(message))) return;
    // Looked for again under the mailbox's lock: a send that began before a migrate marked the store moved either
    // lands before the migrate copies this mailbox or is refused (see markMoved).
    await appendMessage(this.#ensure(dir), message, {
      stillOpen: () => refuseIfMoved(this.root),
      written: () => this.#ring(message.to),
    });
  }

  /**
   * Empties `name`'s bell when nothing is unread for it, under the lock of its mailbox and then of each of its roles'
   * queues, the locks a send rings under: no ring can fall between the look and the emptying. The roles are read
   * under the first lock, which joining a role rings under (updateMemberships).
   */
  async #settle(name: string): Promise<void> {
    if (!this.#exists() || !isRung(this.root, name)) return;
    const own = mailboxPath(this.root, name);
    await withLock(lockPathOf(own), async () => {
      const roles: string[] = [];
      for (const [role, members] of readMemberships(this.root, "roles")) if (members.includes(name)) roles.push(role);
      // A loop, not Array#map: this runs in every hook (test/startup).
      const queues: string[] = [];
      for (const role of roles.sort()) queues.push(roleAddress(role));
      const queueDir = queues.length > 0 ? this.#ensure(roleRoot(this.root)) : "";
      const underQueueLocks = async (index: number): Promise<void> => {
        if (index < queues.length) {
          return withLock(lockPathOf(mailboxPath(queueDir, queues[index]!)), () => underQueueLocks(index + 1));
        }
        if (countUnread(this.root, name) > 0) return;
        for (const queue of queues) if (countUnread(queueDir, queue) > 0) return;
        quiet(this.root, name);
      };
      await underQueueLocks(0);
    });
  }

  /** Rings the doorbell of the mailbox's agent, or of every member of the role whose queue it is (doorbell.ts). */
  #ring(mailbox: string): void {
    if (!isRoleAddress(mailbox)) {
      ring(this.root, mailbox);
      return;
    }
    let members: Iterable<string>;
    try {
      members = readMemberships(this.root, "roles").get(roleOfAddress(mailbox)!) ?? [];
    } catch {
      // The roles cannot be read, so whose bell this is cannot be told: every one rings.
      members = bellNames(this.root);
    }
    ringAll(this.root, members);
  }

  /**
   * A copy `agentmail name` moves: judged (takesMovedCopy) under the mailbox's lock, against every record of its id
   * there and in the archive, so a move run again, or two at once, never stores it twice. Moves are rare: reading
   * the whole mailbox costs nothing that matters.
   */
  async #appendMovedCopy(dir: string, message: Message): Promise<void> {
    const [{ takesMovedCopy }, { archivePath }, { recordsIn, readRecordFile }] = await Promise.all([
      import("../../mail/moves.ts"),
      import("./archive.ts"),
      import("./records.ts"),
    ]);
    const needle = new TextEncoder().encode(JSON.stringify(message.id));
    const messages = (records: { message: Message }[]) => records.map((record) => record.message);
    // The archive is read without its lock: until a move into it commits (under this lock), what it appended is
    // still live too, and a purge replaces it whole, so the records seen here are ones the mailbox holds or held.
    await appendMessage(this.#ensure(dir), message, {
      stillOpen: () => refuseIfMoved(this.root),
      admits: (bytes) =>
        takesMovedCopy(message, [
          ...messages(recordsIn(bytes, needle)),
          ...messages(readRecordFile(archivePath(dir, message.to), needle).records),
        ]),
      written: () => this.#ring(message.to),
    });
  }

  async take(mailbox: string, show: Show, options: TakeOptions = {}): Promise<Message | null> {
    if (!this.#exists()) return null;
    // Under the receive lock, before the message is shown: as for append, so nothing is taken twice across a move.
    const shown: Show = (message) => {
      refuseIfMoved(this.root);
      return show(message);
    };
    return takeOldestUnread(this.#dirOf(mailbox), mailbox, options.onSkip ?? (() => {}), shown, options.prefer, options.only);
  }

  async countUnread(mailbox: string): Promise<number> {
    return this.#exists() ? countUnread(this.#dirOf(mailbox), mailbox) : 0;
  }

  async unreadIds(mailbox: string): Promise<string[]> {
    const ids: string[] = [];
    if (this.#exists()) countUnread(this.#dirOf(mailbox), mailbox, ids);
    return ids;
  }

  async unread(mailbox: string): Promise<Message[]> {
    if (!this.#exists()) return [];
    const { unreadMail } = await import("./mail-view.ts");
    return unreadMail(this.#dirOf(mailbox), mailbox);
  }

  async mail(mailbox: string, which?: Which, needle?: string): Promise<MailRecord[]> {
    if (!this.#exists()) return [];
    const { agentMail } = await import("./mail-view.ts");
    return agentMail(this.#dirOf(mailbox), mailbox, which, needle === undefined ? undefined : new TextEncoder().encode(needle));
  }

  /** Read a chunk at a time (mail-view.ts matchingMail): a long mailbox costs a chunk of memory and what matches. */
  async mailMatching(mailbox: string, accept: (message: Message) => boolean, hint?: RegExp, which?: Which): Promise<MailRecord[]> {
    if (!this.#exists()) return [];
    const { matchingMail } = await import("./mail-view.ts");
    return matchingMail(this.#dirOf(mailbox), mailbox, accept, hint, which);
  }

  async find(mailbox: string, id: string): Promise<MailRecord | null> {
    if (!this.#exists()) return null;
    const { findMail } = await import("./mail-view.ts");
    return findMail(this.#dirOf(mailbox), mailbox, id);
  }

  async markRead(mailbox: string, id: string, at?: Date, moves?: number): Promise<string | null> {
    if (!this.#exists()) return null;
    const { markRead } = await import("./mark-read.ts");
    return (await markRead(this.#dirOf(mailbox), mailbox, id, at, moves)) === null ? null : id;
  }

  async sentBy(sender: string, whole?: boolean): Promise<MailRecord[]> {
    if (!this.#exists()) return [];
    const { sentBy } = await import("./sent-reader.ts");
    // The index lists copies mailbox by mailbox; the interface promises them oldest first across mailboxes.
    return byCreation(sentBy(this.root, sender, whole));
  }

  async *sentNewestFirst(sender: string, whole = true): AsyncGenerator<MailRecord[]> {
    if (!this.#exists()) return;
    const { sentNewestFirst } = await import("./sent-reader.ts");
    yield* sentNewestFirst(this.root, sender, whole);
  }

  async deliveries(mailbox: string, ids?: ReadonlySet<string>): Promise<Map<string, DeliveryEvent[]>> {
    if (!this.#exists()) return new Map();
    const { readEvents } = await import("./delivery-record.ts");
    return readEvents(this.#dirOf(mailbox), mailbox, ids);
  }

  async announced(mailbox: string): Promise<Set<string>> {
    if (!this.#exists()) return new Set();
    const { announcedIds } = await import("./delivery-record.ts");
    return announcedIds(this.#dirOf(mailbox), mailbox);
  }

  async recordDelivery(mailbox: string, events: readonly DeliveryEvent[]): Promise<void> {
    const { recordEvents } = await import("./delivery-record.ts");
    await recordEvents(this.#ensure(this.#dirOf(mailbox)), mailbox, events);
  }

  async announce(mailbox: string, events: readonly DeliveryEvent[]): Promise<string[]> {
    if (!this.#exists()) return [];
    const { announceEvents } = await import("./delivery-record.ts");
    return announceEvents(this.#dirOf(mailbox), mailbox, events);
  }

  async mailboxes(): Promise<string[]> {
    return listMailboxes(this.root);
  }

  async roleQueues(): Promise<string[]> {
    return rolesWithQueues(this.root);
  }

  async archives(): Promise<string[]> {
    const { listArchives } = await import("./archive.ts");
    return [...listArchives(this.root), ...listArchives(roleRoot(this.root))].sort();
  }

  async archive(mailbox: string, selection: Selection, dryRun: boolean, onBytes?: ReadProgress): Promise<ArchiveResult> {
    const { archiveMessages, notInMailbox } = await import("./archive.ts");
    if (!this.#exists()) {
      // No store yet holds no message: asking for ids fails as it does for an empty mailbox.
      if ("ids" in selection && selection.ids.length > 0) throw notInMailbox(selection.ids);
      return { archived: 0, removed: false };
    }
    return archiveMessages(this.#dirOf(mailbox), mailbox, selection, dryRun, onBytes);
  }

  async purgeArchive(mailbox: string, drop: (message: Message) => boolean, dryRun: boolean): Promise<Message[]> {
    if (!this.#exists()) return [];
    const { purgeArchive } = await import("./archive.ts");
    return purgeArchive(this.#dirOf(mailbox), mailbox, drop, dryRun);
  }

  async watch(mailboxes: readonly string[] | null, receipts = false): Promise<MailWatch> {
    const { watchStore } = await import("./watch.ts");
    // A read mark changes the mailbox in place; a delivery event goes to the record beside it.
    const names = (mailbox: string) => {
      const name = basename(mailboxPath(this.root, mailbox));
      return receipts ? [name, `${name}.delivery`] : [name];
    };
    const files = mailboxes && new Set(mailboxes.filter((mailbox) => !isRoleAddress(mailbox)).flatMap(names));
    const wanted = files
      ? (name: string) => files.has(name) || name === ".roles.json"
      : (name: string) => name.endsWith(".jsonl") || name === ".agents" || name === ".roles.json";
    const watchers = [watchStore(ensureRoot(this.root), wanted)];
    // Role queues live in a directory of their own: watched when a role's queue is (a role joined meanwhile is polled).
    if (mailboxes === null || mailboxes.some(isRoleAddress)) {
      const queueFiles = (name: string) => name.endsWith(".jsonl") || (receipts && name.endsWith(".jsonl.delivery"));
      watchers.push(watchStore(this.#ensure(roleRoot(this.root)), queueFiles));
    }
    return {
      changed: (ms) => Promise.race(watchers.map((watcher) => watcher.changed(ms))),
      close: () => {
        for (const watcher of watchers) watcher.close();
      },
    };
  }

  async feed(): Promise<MailFeed> {
    const { FileFeed } = await import("./feed.ts");
    return new FileFeed(this.root, roleRoot(this.root));
  }

  async memberships(kind: MembershipKind): Promise<Memberships> {
    return readMemberships(this.root, kind);
  }

  /** An agent that joins a role is rung, under its mailbox's lock (see #settle): the queue may hold mail for it. */
  async updateMemberships<T>(kind: MembershipKind, change: (lists: Memberships) => T): Promise<T> {
    const joined = new Set<string>();
    const result = await updateMemberships(ensureRoot(this.root), kind, (lists) => {
      const before = new Map([...lists].map(([list, members]) => [list, new Set(members)]));
      const value = change(lists);
      for (const [list, members] of lists) for (const member of members) if (!before.get(list)?.has(member)) joined.add(member);
      return value;
    });
    if (kind === "roles") {
      for (const name of joined) await withLock(lockPathOf(mailboxPath(this.root, name)), () => ring(this.root, name));
    }
    return result;
  }

  async status(name: string): Promise<AgentEntry | null> {
    const status = readStatus(this.root, name);
    return status && entryOf(status);
  }

  async statuses(): Promise<AgentEntry[]> {
    return listStatuses(this.root).map(entryOf);
  }

  /** Through the registry: moving another pane's AGENTMAIL_NAME claim waits for a receive that trusted it. */
  async writeStatus(registration: Registration): Promise<AgentEntry> {
    return entryOf(await writeRegistration(ensureRoot(this.root), registration));
  }

  async removeStatus(name: string): Promise<void> {
    removeStatus(this.root, name);
  }

  /**
   * No presence is kept: the tmux server knows its windows. But two tmux servers may work over one repository: a
   * name registered from another one is refused (see Store.touch), so one reads the registration. A registration
   * from before tmux servers were recorded names its server only when `agentmail name` pinned it.
   */
  async touch(presence: Presence, exclusiveMs = 0, takeOver = false): Promise<Touch> {
    const here = presence.tmux;
    if (!here || takeOver) return { accepted: true };
    const record = readStatus(this.root, presence.name);
    const server = record?.tmux_server ?? (record?.named_at ? record.server : undefined);
    const host = record?.tmux_server ? record.tmux_host : record?.host;
    if (!record || server === undefined || record.status === "offline" || (server === here.server && host === here.host)) {
      return { accepted: true };
    }
    if (host === here.host) return { accepted: false, holder: entryOf(record), liveness: true };
    if (Date.now() - Date.parse(record.updated_at) < exclusiveMs) return { accepted: false, holder: entryOf(record) };
    return { accepted: true };
  }

  /** None: a repository's store knows no other; its other projects are known by their windows (identity/projects.ts). */
  async otherNamespaces(): Promise<string[]> {
    return [];
  }

  async moved(): Promise<MovedNote | null> {
    const { readTombstone } = await import("../local/tombstone.ts");
    return readTombstone(this.root);
  }

  /**
   * Writes (or removes) `<root>/.moved`; then, when the mail starts moving, takes and releases both locks of every
   * mailbox once: a send or receive holds its mailbox's lock from its look at the note to its write, so once each
   * lock has been had, any that began before the note is over, and any later one finds the note and is refused.
   */
  async markMoved(note: MovedNote | null): Promise<void> {
    const { writeTombstone } = await import("../local/tombstone.ts");
    writeTombstone(ensureRoot(this.root), note);
    if (note?.state !== "moving") return;
    const { withBothLocks } = await import("../durable/lock.ts");
    const { lockPathOf, receiveLockPathOf } = await import("../local/layout.ts");
    const roles = (await this.roleQueues()).map(roleAddress);
    for (const mailbox of new Set([...(await this.mailboxes()), ...roles, ...(await this.archives())])) {
      const path = mailboxPath(this.#dirOf(mailbox), mailbox);
      await withBothLocks(lockPathOf(path), receiveLockPathOf(path), () => {});
    }
  }

  async mailRemoval(): Promise<string | null> {
    const { mailEntries } = await import("../local/layout.ts");
    const names = mailEntries(this.root);
    if (names.length === 0) return null;
    return `cd ${shellQuote(this.root)} && rm -r -- ${names.map(shellQuote).join(" ")}`;
  }

  /** Read without the lock: the document is replaced atomically (claims-file.ts). */
  async fileClaims(): Promise<ClaimsSnapshot> {
    const { fileClaimsSnapshot } = await import("./claims-file.ts");
    return this.#exists() ? fileClaimsSnapshot(this.root) : { claims: [], now: Date.now() };
  }

  async updateFileClaims<T>(change: (snapshot: ClaimsSnapshot) => ClaimsChange<T>): Promise<T> {
    const { updateFileClaims } = await import("./claims-file.ts");
    return updateFileClaims(this.root, change);
  }

  close(): void {}
}
