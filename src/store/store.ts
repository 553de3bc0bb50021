/**
 * The one interface every action uses to reach the mail, whichever engine keeps it: the embedded file store (JSONL
 * mailboxes in the repository's git dir, `file/file-store.ts`) or the Redis store (streams on a server many hosts
 * share, `redis/redis-store.ts`, chosen by AGENTMAIL_URL; see `open.ts`). Nothing outside src/store/ imports an
 * engine's modules (the lint rule engines-behind-the-contract): what differs between engines, callers ask of this
 * interface (sharedAcrossHosts, namespace, nameClaims, localRoot, projectStore), never of the engine.
 *
 * Mailboxes are named by address: an agent's name, or `role:<role>` for a role's queue (one member takes each
 * message). Group addresses never name a mailbox: a group's mail is one copy per member.
 *
 * Reads of a store that does not exist yet (no mail was ever sent) return nothing; only writes create it.
 *
 * Delivery guarantee, for every engine: `take` returns the oldest unread message of the mailbox (or with `prefer`,
 * the oldest one `prefer` accepts, else the oldest), hands it to `show`, and marks it read only after `show` has
 * returned; a `show` that throws leaves it unread. Of several receivers of one mailbox, on any host, exactly one gets
 * each message. A receiver killed between `show` and the mark leaves the message to be shown once more (never lost).
 * FIFO per mailbox: a later message overtakes an earlier one only while the earlier one is being shown by another
 * receiver, or (Redis, receiver died on another host) until that receiver's lease runs out.
 */
import type { ClaimsChange, ClaimsSnapshot } from "../claims/claims.ts";
import type { Availability } from "../mail/agents.ts";
import type { DeliveryEvent } from "../mail/arrival.ts";
import type { Message } from "../mail/message.ts";
import type { Preference } from "../mail/order.ts";
import type { HookThread } from "../mail/doorbell.ts";
import type { MovedNote } from "./moved.ts";
import type { Repository } from "./paths.ts";

export type { Availability, DeliveryEvent, MovedNote, Repository };

/**
 * The pane a person's registration records (the human running the agents): `watch` and `web` register them under
 * their name with this in place of a pane id (always `%N`, so no agent's pane can be it), on every engine. Such an
 * entry makes the name addressable by every agent, from any window or host, though no window has it
 * (actions/send.ts), and cleanup forgets it by age only.
 */
export const PERSON_PANE = "person";

/** An agent's registration, as every engine keeps it (`status`, `name`, `onboard`, the hooks). */
export interface AgentStatus {
  name: string;
  status: Availability;
  /** When the status last changed. */
  since: string;
  /** When the agent last set it (even to the same value): what `cleanup --stale-hours` looks at. */
  updated_at: string;
  /** The pane that set it, so the mailman can type into exactly that pane. */
  pane: string;
  /**
   * Set by `agentmail name`, which pinned the window's name (tmux will not rename it): the window (`@N`), the tmux
   * server (`$TMUX` without its session part: socket path and server pid, so a restarted server, whose pane ids
   * start again, is another one) and when. Kept while the same pane writes its status. A pin is not trusted
   * without asking tmux: a rename could not be seen in time (README, AGENTMAIL_NAME); a claim (below) is.
   */
  window?: string;
  server?: string;
  /** The machine the tmux server runs on: a socket path and pid only mean something there. */
  host?: string;
  named_at?: string;
  /**
   * Set only when the agent registered with AGENTMAIL_NAME naming it and tmux agreeing (see identity/name-claims.ts):
   * the tmux server of its pane and the machine. Such a registration is a claim: that pane's later calls that give
   * the same AGENTMAIL_NAME are trusted without asking tmux (store/file/registry.ts reads and writes it).
   */
  claim_server?: string;
  claim_host?: string;
  /**
   * Where the agent lives: the tmux server of the pane that registered the name last (`$TMUX` without its session
   * part) and that server's machine, written by every registration that knows it (`status`, `onboard`, the hooks,
   * `name`; on Redis every command). Two tmux servers over one repository share its mail: a name registered from a
   * live pane of one is not the other's (identity/caller.ts claimName).
   */
  tmux_server?: string;
  tmux_host?: string;
}

/** A tmux server and the machine it runs on: a socket path and a pid only mean something there. */
export interface Place {
  server: string;
  host: string;
}

/** What `agentmail name` records besides the status: see AgentStatus. */
export interface Pin {
  window: string;
  server: string;
  host: string;
}

/**
 * Where a claim was made: the tmux server of the claiming pane (`$TMUX` without its session part: socket path and
 * server pid, so a restarted server is another one) and the machine it runs on.
 */
export type ClaimPlace = Place;

/**
 * A claim on a name: the registration an agent started with AGENTMAIL_NAME made from a window of that name (see
 * identity/name-claims.ts). It lives in the agent's registration, which holds one pane per name, so a name has at
 * most one claim.
 */
export interface NameClaim extends ClaimPlace {
  name: string;
  pane: string;
  /** An agent that went offline (its session ended) holds nothing. */
  active: boolean;
}

/** The AGENTMAIL_NAME claims a store keeps (identity/name-claims.ts), read without a lock and without tmux. */
export interface NameClaims {
  claimOf(name: string): NameClaim | null;
}

/**
 * Another project (identity/projects.ts Project) as a store finds its store: by `key` (the git common dir of a
 * repository's store; the namespace on a store of namespaces) and, for a repository's, the repository.
 */
export interface ProjectPlace {
  key: string;
  repository: Repository | null;
}

/** Shows a taken message (writes the output); the message is marked read only after this returns. */
export type Show = (message: Message) => void | Promise<void>;

/** Called for a record a read passes over (not a message it can deliver): which mailbox, where in it, and why. */
export type SkipReporter = (mailbox: string, where: string, reason: string) => void;

export interface TakeOptions {
  onSkip?: SkipReporter;
  /** Take the oldest unread message this accepts before older ones (mail/order.ts); else the oldest. */
  prefer?: Preference;
  /**
   * Only a message `prefer` accepts, or none (a bounce takes expired mail and nothing else). With Redis, among the
   * oldest 1,000 takeable ones.
   */
  only?: boolean;
}

/** A message as readers see it: live in its mailbox, or moved to the mailbox's archive. */
export interface MailRecord {
  message: Message;
  archived: boolean;
}

export interface Which {
  live: boolean;
  archived: boolean;
}

/**
 * Which live messages to archive: these ids (all must be live, or nothing moves, not_found), or those a rule picks.
 * `pick` is asked about each live message once (the first line of its id); every message it accepts is in the
 * archive once archive returns (a dry run: would be), so a caller that wants their ids notes them there.
 */
export type Selection = { ids: readonly string[] } | { pick: (message: Message) => boolean };

/** Hears how many more bytes of a mailbox a long job (archive, cleanup) has read: for a progress line. */
export type ReadProgress = (bytes: number) => void;

export interface ArchiveResult {
  /** How many messages were moved (or a dry run would move): a count, so a long mailbox costs no list. */
  archived: number;
  /** The mailbox had (or would have) nothing left and was (or would be) removed. */
  removed: boolean;
}

export type MembershipKind = "groups" | "roles";
/** A list name (group or role, without `@`/`role:`) → its members, in the order they joined. */
export type Memberships = Map<string, string[]>;

/** Waiting for mail, set up before the first look so a message that lands in between still wakes it. */
export interface MailWatch {
  /**
   * Resolves after a change that may have made mail takeable in the watched mailboxes (or membership lists), or
   * after `ms`, whichever is first; a caller also looks again after each `ms` (a missed event only delays).
   * Wakes within 50 ms of a send from any process on any host.
   */
  changed(ms: number): Promise<void>;
  /** Ends the wait: a pending `changed` resolves. Safe to call more than once. */
  close(): void;
}

/**
 * One change to the mail, as a feed reports it (the views a person watches: `watch`, `web`). Kinds may be added (a
 * delivery state the store records); a reader passes over a kind it does not know.
 *  - `stored`: a record the feed has not reported before (live or archived), with its read state.
 *  - `read`: a live message the feed reported unread was marked read (`read_at` when known).
 *  - `reset`: the mailbox was rewritten (archived, cleaned up, purged): forget what was reported of it; the
 *    `stored` changes that follow in the same batch are all it holds now.
 *  - `delivery`: an event of the mailbox's delivery record (notified, acknowledged, bounced: mail/arrival.ts).
 */
export type MailChange =
  | { kind: "stored"; mailbox: string; record: MailRecord }
  | { kind: "read"; mailbox: string; id: string; read_at: string | null }
  | { kind: "reset"; mailbox: string }
  | { kind: "delivery"; mailbox: string; event: DeliveryEvent };

/**
 * Every mailbox's changes (agents', role queues, archives), read incrementally: each look reads what was added or
 * marked since the last one, never the whole store again (a mailbox that was rewritten is read again whole).
 */
export interface MailFeed {
  /** The changes since the last call; the first call reports every record of the store as `stored`. */
  changes(): Promise<MailChange[]>;
  /**
   * Resolves after a change to the mail (or the registry) may have happened, or after `ms`, whichever is first; a
   * caller looks again after each `ms` too (a missed event only delays).
   */
  changed(ms: number): Promise<void>;
  close(): void;
}

/** An agent as the registry knows it (`status`, `name`, `onboard`, the hooks and, on Redis, every command). */
export interface AgentEntry extends AgentStatus {
  /** The host its tmux server runs on (AGENTMAIL_HOST, else the machine's name). */
  host?: string;
  /** When it last ran a command (ISO 8601); the file store reports updated_at. */
  last_seen?: string;
}

/**
 * A registration to record (Store.writeStatus): the agent's availability from `pane`. `pin`: a name pinned by
 * `agentmail name`; `claim`: the agent claims its AGENTMAIL_NAME from this pane (identity/name-claims.ts); `place`: the
 * tmux server and machine it lives on (a claim and a place are both a server and a machine: named, they cannot be
 * swapped). `at`: when (now by default).
 */
export interface Registration {
  name: string;
  status: Availability;
  pane: string;
  at?: Date;
  pin?: Pin;
  claim?: ClaimPlace;
  place?: Place;
}

export interface Presence {
  name: string;
  host: string;
  pane: string;
  /** The caller's tmux server and machine, when it runs in tmux: see AgentStatus.tmux_server. */
  tmux?: Place;
}

/**
 * Refused: `holder` has the name. `liveness`: it is registered from another tmux server on this machine, whether
 * its pane is alive only tmux can tell; the caller asks it, and touches again with `takeOver` when it is not.
 */
export type Touch = { accepted: true } | { accepted: false; holder: AgentEntry; liveness?: true };

export interface AppendOptions {
  freshId?: boolean;
  /** The caller read the mailbox and found it without this message (migrate): the engine may skip its own look. */
  checked?: boolean;
}

/**
 * The hooks' doorbells (doorbell.ts): the file store's way of letting the installed Stop hook find "no mail" without
 * starting agentmail. A store without them (Redis: a send from another host cannot ring a file here) has none.
 */
export interface Doorbells {
  /**
   * Points the pane of `env` at `name`'s bell, and the Codex thread a hook in Codex's daemon serves: the commands an
   * agent's hooks run call this.
   */
  point(env: Record<string, string | undefined>, name: string, thread?: HookThread): void;
  /** Empties `name`'s bell if nothing is unread for it (its mailbox and its roles' queues), atomically with sends. */
  settle(name: string): Promise<void>;
}

export interface Store {
  /**
   * The engine and where the mail is, in one line for a person (`watch`, `web`): `file <directory>`, or `redis <the
   * server's URL without its password>`. What differs between engines is in the members below, never read from this.
   */
  readonly description: string;
  /**
   * Agents of other hosts use this store too (Redis): its registry lists agents no window here has, and each host's
   * mailman reminds only its own. False for a repository's store (the file store), whose agents are this host's.
   */
  readonly sharedAcrossHosts: boolean;
  /**
   * The namespace this store is on a server of namespaces (Redis): a project known by its name alone, across hosts,
   * which `name@namespace` reaches and replies name. Null for a repository's store, whose project is its repository.
   */
  readonly namespace: string | null;
  /** The AGENTMAIL_NAME claims it keeps (the file store's registrations); null for a store that keeps none (Redis). */
  readonly nameClaims: NameClaims | null;
  readonly doorbells: Doorbells | null;
  /** Where the mail is, for messages: the directory, or the server's URL without its password. */
  readonly location: string;
  /** Which store this is, in one line: the directory, or the server's URL without its password and the namespace. */
  readonly label: string;
  /** The shell step that makes a command use this store: `export AGENTMAIL_URL=…`, or `unset AGENTMAIL_URL`. */
  readonly pointer: string;

  /**
   * This host's directory for what stays on it whatever the engine (the mailman's files, its routes, arrival windows,
   * the bridges'): the file store's own directory; for a shared store, the one the repository it was opened from
   * would have (paths.ts localRoot). Throws when there is none (no repository, no AGENTMAIL_DIR).
   */
  localRoot(): string;
  /**
   * Another project's store on this engine, as an agent working there finds it: on a repository's store, the store of
   * `project.repository` (else of the git common dir `project.key`), none of this caller's settings applying; on a
   * store of namespaces, the namespace `project.key` on this server, with this store's settings. Kept open as this
   * one is (Redis): the caller does not close it.
   */
  projectStore(project: ProjectPlace): Promise<Store>;

  /**
   * Stores `message` in the mailbox of its `to`, durably, before returning (the file store fsyncs; Redis returns
   * once the server has it, on disk with `appendfsync always`). A failure stores nothing. A message whose id the
   * mailbox already holds is not stored again (a resumed migration or import never duplicates).
   * A message with `read_flag: true` is stored read (migration). `freshId`: the id was minted for this append
   * (a send), so no mailbox can hold it yet and the engine may skip looking for it; so may it with `checked`.
   * Appends made at once may be stored together (one fsync, one round trip): a bulk copy issues many at a time.
   */
  append(message: Message, options?: AppendOptions): Promise<void>;

  /** See the delivery guarantee above. Null when the mailbox has nothing unread. */
  take(mailbox: string, show: Show, options?: TakeOptions): Promise<Message | null>;

  /** Unread messages in the mailbox (those being shown included). */
  countUnread(mailbox: string): Promise<number>;
  /** The ids of the mailbox's unread messages, as cheaply as countUnread (the hook runs it). */
  unreadIds(mailbox: string): Promise<string[]>;
  /** The mailbox's unread messages, oldest first. Marks nothing. */
  unread(mailbox: string): Promise<Message[]>;
  /**
   * The mailbox's records, live ones first then archived ones, each oldest first, each id once (live wins), read
   * times as `read_at`. `needle`: text every stored line of each wanted message holds (a thread's quoted id): an
   * engine may skip records whose stored text does not contain it, and then reads a part at a time (a speed-up only;
   * callers still check).
   */
  mail(mailbox: string, which?: Which, needle?: string): Promise<MailRecord[]>;
  /**
   * The mailbox's records (live, then archived ones not also live, as `mail` gives them; `which` of them) whose
   * message `accept` takes, read a part at a time: a long mailbox costs a part of it and what `accept` takes, and a
   * record taken costs no more than reading it. `hint`: a pattern that the stored text of each of them matches
   * wherever it holds no escape, within one line (a search's plain text): an engine may skip other records unparsed
   * (a speed-up only).
   */
  mailMatching(mailbox: string, accept: (message: Message) => boolean, hint?: RegExp, which?: Which): Promise<MailRecord[]>;
  /** The record with this id in the mailbox, live or archived, or null. */
  find(mailbox: string, id: string): Promise<MailRecord | null>;
  /**
   * Marks an unread live message read (at `at`); returns its id, or null when it was read already or is not there.
   * `moves`: only if its record (the copy moved most) was moved exactly that many times (mail/moves.ts).
   */
  markRead(mailbox: string, id: string, at?: Date, moves?: number): Promise<string | null>;
  /** What `sender` sent, oldest first, each with its receipt (read_flag/read_at of the copy); bodies cut unless whole. */
  sentBy(sender: string, whole?: boolean): Promise<MailRecord[]>;
  /**
   * sentBy's records newest first (by created_at; of equal times, the one sentBy lists later first), a batch at a
   * time: a store that can holds one batch, not the list (`sent` of a million messages).
   */
  sentNewestFirst(sender: string, whole?: boolean): AsyncIterable<MailRecord[]>;

  /**
   * The mailbox's delivery record (mail/arrival.ts): how and when each message was put in front of its agent, or why
   * it could not be. Every event, grouped by message id, in the order recorded; `ids` keeps only those messages.
   */
  deliveries(mailbox: string, ids?: ReadonlySet<string>): Promise<Map<string, DeliveryEvent[]>>;
  /**
   * The ids of the mailbox's unread messages whose last event announces them (mail/arrival.ts `announces`): what a
   * hook leaves alone. Cheap: it grows with the announced unread mail, not with the history.
   */
  announced(mailbox: string): Promise<Set<string>>;
  /**
   * Appends events to the mailbox's delivery record, durably for every reader once it returns; the announced set
   * follows them (`effectOn`); wakes watchers of receipts (`watch(…, true)`).
   */
  recordDelivery(mailbox: string, events: readonly DeliveryEvent[]): Promise<void>;
  /**
   * Claims messages for one arrival: each event whose message is unread, not being shown by a receiver and not
   * announced is recorded, atomically with respect to receivers and other claims; returns the ids recorded. A hook
   * checks `announced` while it holds a message (under the receive lock; Redis: with its lease), so each message is
   * put in front of its agent by one arrival, never by a hook and a frame both.
   */
  announce(mailbox: string, events: readonly DeliveryEvent[]): Promise<string[]>;

  /**
   * Mailboxes with live mail, sorted (role queues not included): agents', and those of bounces kept for another
   * project's sender (`alice@app`), which no agent reads (mail/bounce.ts isAgentMailbox).
   */
  mailboxes(): Promise<string[]>;
  /** Roles with a queue (mail was sent to them), sorted, without the `role:` prefix. */
  roleQueues(): Promise<string[]>;
  /** Mailboxes (agents' and `role:` queues) with archived mail, sorted. */
  archives(): Promise<string[]>;

  /** Moves live messages into the mailbox's archive; removes a mailbox left empty. */
  archive(mailbox: string, selection: Selection, dryRun: boolean, onBytes?: ReadProgress): Promise<ArchiveResult>;
  /** Deletes archived messages `drop` picks; returns them. */
  purgeArchive(mailbox: string, drop: (message: Message) => boolean, dryRun: boolean): Promise<Message[]>;

  /**
   * Watches these mailboxes (and the membership lists), or every mailbox when null (the mailman). `receipts`: also
   * wakes on what happens to their mail after it was stored (a read mark, a delivery event), for a sender waiting.
   */
  watch(mailboxes: readonly string[] | null, receipts?: boolean): Promise<MailWatch>;

  /** Follows every mailbox's changes from the start (see MailFeed): the views a person watches. */
  feed(): Promise<MailFeed>;

  memberships(kind: MembershipKind): Promise<Memberships>;
  /** Changes the lists under the store's lock (atomically on Redis); returns what `change` returns. */
  updateMemberships<T>(kind: MembershipKind, change: (lists: Memberships) => T): Promise<T>;

  status(name: string): Promise<AgentEntry | null>;
  statuses(): Promise<AgentEntry[]>;
  /**
   * Records an agent's availability (keeping `since` when unchanged, and a pin and a place while the same pane
   * writes). A claim is never carried over: each registration makes it again, or drops it; only the file store
   * keeps claims.
   */
  writeStatus(registration: Registration): Promise<AgentEntry>;
  removeStatus(name: string): Promise<void>;
  /**
   * Records that an agent ran a command here (Redis: name, host, pane, tmux server, last seen, so `recipients` lists
   * agents of every host). Refused, with the holder, when an agent of that name ran a command on another host less
   * than `exclusiveMs` ago, or is registered from a pane of another tmux server (with `tmux` given; then with
   * `liveness` when that server is on this machine, unless `takeOver`: the caller found that pane gone). The file
   * store keeps no presence (its tmux server knows its windows): it only reads the registration to refuse.
   */
  touch(presence: Presence, exclusiveMs?: number, takeOver?: boolean): Promise<Touch>;
  /**
   * The other stores this one's agents can reach by name, each a project whose agents may have no window on this
   * machine: on Redis every other namespace of the server with registered agents (a namespace is a project across
   * hosts), sorted; the file store has none (its other projects are known only by their windows). Listed by a room of
   * every project and `recipients --all`.
   */
  otherNamespaces(): Promise<string[]>;

  /** Where the store's mail moved (migrate), or null while it is the store in use. */
  moved(): Promise<MovedNote | null>;
  /**
   * Records where the mail moves (`moving`, before a migrate copies it) or moved, or that it is the store in use again
   * (null). From then on every command of every process against it fails with code `moved`, except migrate's reads
   * (a store opened to migrate). Returns once no send or receive that began before can still change it, so what a
   * migrate copies afterwards is final: nothing sent to the old store is lost and nothing is delivered twice.
   */
  markMoved(note: MovedNote | null): Promise<void>;
  /**
   * The shell command that deletes this store's mail, once it has moved, and nothing else: not the note of where it
   * went (which keeps agents left on it from using it), nor what is not mail (the bridges' config and queued Roo
   * messages, the mailman's files). Null when there is no mail to delete.
   */
  mailRemoval(): Promise<string | null>;
  /**
   * The claims on paths (src/claims/) with the store's clock: the file store's is the machine's, Redis's the server's
   * TIME, so a host whose clock is ahead cannot see a live claim as run out. None when the store does not exist yet.
   */
  fileClaims(): Promise<ClaimsSnapshot>;
  /**
   * Runs `change` on the claims and stores the list it returns (null: unchanged), atomically: no other change lands in
   * between, so of two agents claiming one path at once exactly one is granted. The file store runs it under the
   * claims lock; Redis compares-and-sets, running it again on a concurrent change, so `change` must be pure. What
   * `change` throws changes nothing and is thrown.
   */
  updateFileClaims<T>(change: (snapshot: ClaimsSnapshot) => ClaimsChange<T>): Promise<T>;

  /** Releases connections and watchers so the process can exit. Safe to call more than once. */
  close(): void;
}
