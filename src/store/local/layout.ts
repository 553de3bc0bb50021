/**
 * The file store's layout: every file and directory agentmail keeps in a store, what each is, whether it is mail
 * (what `migrate` copies, and so what may be removed once the mail has moved), and what `doctor --fix` may remove
 * when it finds it stale. The one list: paths.ts (which directory it adopts as a store), inspect.ts (doctor) and
 * the clean-up migrate suggests all read it, and the modules that write the files take their names from here.
 *
 *   <root>/.agentmail-store        the marker: this directory is agentmail's store (made on first use)
 *   <root>/.moved                  the tombstone: the mail moved elsewhere (migrate), and where
 *   <root>/<name>.jsonl            a mailbox; beside it, starting with its name: .lock, .rlock and .alock (and a
 *                                  breaker's .lock.break, .rlock.break, .alock.break), .cursor, .reads (the read
 *                                  journal), .delivery and .announced (the delivery record, delivery-record.ts),
 *                                  .moving (a move into the archive under way, with the new mailbox it writes,
 *                                  .<name>.jsonl.new)
 *   <root>/.groups.json, .roles.json   the lists (each with its .lock)
 *   <root>/.claims.json            the claims on paths (with its .lock): src/store/file/claims-file.ts
 *   <root>/.archive/<name>.jsonl   archives
 *   <root>/.roles/                 role queues: mailboxes as above, and their own .archive/
 *   <root>/.sent/<name>.index      each sender's sent index
 *   <root>/.agents/<name>.json     registrations (status, pane, claim)
 *   <root>/.bells/<name>/          the hooks' doorbell of each agent whose hooks ran here (doorbell.ts)
 *   <root>/.mailman/               the mailman's pid (and its lock), state.json, log, routes.json (the routes into
 *                                  agents it verified), framed/ (when a frame last went to each agent) and window/
 *                                  (what the frames and hooks showed each agent lately: window-file.ts), and stopped
 *                                  (when `mailman stop` stopped it: session starts then leave it stopped)
 *   <root>/.bridges/               the bridges' config, ledger, logs and locks, and roo-queue/ (queued Roo messages)
 *   .<file>.tmp-<pid>-<random>     a temp file of an atomic replace, anywhere
 *
 * Names of mailboxes are encoded (mail/names.ts) and never start with a dot, so nothing else can take one's place.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { decodeName, encodeName } from "../../mail/names.ts";

export const MARKER = ".agentmail-store";
export const TOMBSTONE = ".moved";
export const MAILBOX_SUFFIX = ".jsonl";
export const ARCHIVE_DIR = ".archive";
export const ROLES_DIR = ".roles";
export const SENT_DIR = ".sent";
export const AGENTS_DIR = ".agents";
export const BELLS_DIR = ".bells";
export const MAILMAN_DIR = ".mailman";
export const BRIDGES_DIR = ".bridges";
/** The claims on paths, one document (claims-file.ts); not mail: migrate does not copy it. */
export const CLAIMS_FILE = ".claims.json";

/** A mailbox's file: the agent's name, encoded (mail/names.ts), and the suffix. */
export function mailboxPath(root: string, agent: string): string {
  return join(root, encodeName(agent) + MAILBOX_SUFFIX);
}

/** Serializes everything that changes the bytes of a mailbox: appends, and cleanup's rewrite. */
export const lockPathOf = (mailbox: string) => `${mailbox}.lock`;
/** Serializes receivers (and cleanup) of one mailbox: held from finding a message until it is marked read. */
export const receiveLockPathOf = (mailbox: string) => `${mailbox}.rlock`;
/** Serializes what rewrites a mailbox or its archive (archive, cleanup, purge), from start to end: see archive.ts. */
export const archiveLockPathOf = (mailbox: string) => `${mailbox}.alock`;

/** The bridges' files in `.bridges/` (bridges/config.ts makes their paths). */
export const BRIDGE_FILES = {
  config: "config.json",
  configLock: "config.lock",
  syncLock: "sync.lock",
  ledger: "ledger.jsonl",
  sentLog: "sent.jsonl",
  problems: "problems.json",
  rooQueue: "roo-queue",
  rooQueueLock: "roo-queue.lock",
} as const;

/** The mailman's files in `.mailman/`. */
export const MAILMAN_FILES = {
  pid: "pid",
  state: "state.json",
  log: "log",
  routes: "routes.json",
  framed: "framed",
  window: "window",
  stopped: "stopped",
} as const;

/** A directory of the store whose entries follow one set of rules. */
export type Place = "top" | "roles" | "archive" | "sent" | "agents" | "mailman" | "bridges";

/** Why `doctor --fix` may remove an entry; nothing without one is ever removed by agentmail. */
export type Repair = "stale_lock" | "stale_break" | "stray_temp" | "bad_cursor";

export interface Kept {
  /** What it is, in a few words. */
  what: string;
  /** A lock is a symlink (or, written by older versions, a regular file); `file` and `directory` are just that. */
  shape: "file" | "directory" | "lock";
  /** Part of the mail (copied by migrate): may be removed once the mail has moved, and nothing else may. */
  mail: boolean;
  /** What may make `doctor --fix` remove it. */
  repair?: Repair;
  /** A directory whose entries are checked as this place; a directory without one is kept whole (the Roo queue). */
  place?: Place;
  /** A mailbox or archive: its lines are messages. */
  mailbox?: true;
}

const dir = (what: string, mail: boolean, place?: Place): Kept => ({ what, shape: "directory", mail, place });
const file = (what: string, mail: boolean): Kept => ({ what, shape: "file", mail });
const lock = (what: string, mail: boolean): Kept => ({ what, shape: "lock", mail, repair: "stale_lock" });
const breaker = (mail: boolean): Kept => ({ what: "a lock breaker's file", shape: "file", mail, repair: "stale_break" });

const MARKER_ENTRY = file("the marker that makes this directory agentmail's store", false);
const TOMBSTONE_ENTRY = file("the note of where this store's mail moved", false);
const TEMP = /^\..+\.tmp-(\d+)-[a-z0-9]+$/s;

/** The pid in a temp file's name, or null when the name is not a temp file's. */
export function tempFilePid(name: string): number | null {
  const pid = TEMP.exec(name)?.[1];
  return pid === undefined ? null : Number(pid);
}

/** The agent or role of `<name><suffix>`, or null when the name is not one agentmail makes. */
function named(name: string, suffix: string): string | null {
  return name.endsWith(suffix) ? decodeName(name.slice(0, -suffix.length)) : null;
}

/** A mailbox and the files beside it (the top of the store, and the role queues). */
function mailboxFile(name: string): Kept | null {
  if (named(name, MAILBOX_SUFFIX) !== null) return { what: "a mailbox", shape: "file", mail: true, mailbox: true };
  // Settled (finished or undone) by the next archive, cleanup or purge of its mailbox (pending-move.ts).
  if (name.startsWith(".") && named(name.slice(1), NEW_MAILBOX_SUFFIX) !== null) return file("a new mailbox a move is writing", true);
  for (const [suffix, kept] of MAILBOX_SIDE_FILES) if (named(name, MAILBOX_SUFFIX + suffix) !== null) return kept;
  return null;
}

const NEW_MAILBOX_SUFFIX = `${MAILBOX_SUFFIX}.new`;

const MAILBOX_SIDE_FILES: [string, Kept][] = [
  [".lock", lock("a mailbox's lock", true)],
  [".rlock", lock("a mailbox's receive lock", true)],
  [".alock", lock("a mailbox's archive lock", true)],
  [".lock.break", breaker(true)],
  [".rlock.break", breaker(true)],
  [".alock.break", breaker(true)],
  [".moving", file("the record of a move into the archive under way", true)],
  [".cursor", { what: "a mailbox's cursor", shape: "file", mail: true, repair: "bad_cursor" }],
  [".reads", file("a mailbox's read journal", true)],
  [".delivery", file("a mailbox's delivery record", true)],
  [".announced", file("the ids a mailbox's delivery record announces", true)],
];

function listsFile(name: string): Kept | null {
  for (const kind of ["groups", "roles"]) {
    const base = `.${kind}.json`;
    if (name === base) return file(`the ${kind} lists`, true);
    if (name === `${base}.lock`) return lock(`the ${kind} lists' lock`, true);
    if (name === `${base}.lock.break`) return breaker(true);
  }
  if (name === CLAIMS_FILE) return file("the claims on paths", false);
  if (name === `${CLAIMS_FILE}.lock`) return lock("the claims' lock", false);
  if (name === `${CLAIMS_FILE}.lock.break`) return breaker(false);
  return null;
}

const TOP_DIRECTORIES: Record<string, Kept> = {
  [ARCHIVE_DIR]: dir("the archives", true, "archive"),
  [ROLES_DIR]: dir("the role queues", true, "roles"),
  [SENT_DIR]: dir("the sent indexes", true, "sent"),
  [AGENTS_DIR]: dir("the agents' registrations", true, "agents"),
  [BELLS_DIR]: dir("the hooks' doorbells", false),
  [MAILMAN_DIR]: dir("the mailman's files", false, "mailman"),
  [BRIDGES_DIR]: dir("the bridges' files", false, "bridges"),
};

function bridgeFile(name: string): Kept | null {
  switch (name) {
    case BRIDGE_FILES.config:
      return file("the bridges' config", false);
    case BRIDGE_FILES.ledger:
      return file("the bridges' import ledger", false);
    case BRIDGE_FILES.sentLog:
      return file("the bridges' log of sent mail", false);
    case BRIDGE_FILES.problems:
      return file("the bridges' problems", false);
    case BRIDGE_FILES.rooQueue:
      return dir("the queued Roo messages", false);
    case BRIDGE_FILES.configLock:
    case BRIDGE_FILES.syncLock:
    case BRIDGE_FILES.rooQueueLock:
      return lock("a bridges' lock", false);
    case `${BRIDGE_FILES.configLock}.break`:
    case `${BRIDGE_FILES.syncLock}.break`:
    case `${BRIDGE_FILES.rooQueueLock}.break`:
      return breaker(false);
    default:
      return null;
  }
}

function mailmanFile(name: string): Kept | null {
  switch (name) {
    case MAILMAN_FILES.pid:
      return file("the mailman's pid file", false);
    case `${MAILMAN_FILES.pid}.lock`:
      return lock("the mailman's lock", false);
    case `${MAILMAN_FILES.pid}.lock.break`:
      return breaker(false);
    case MAILMAN_FILES.state:
      return file("the mailman's state", false);
    case MAILMAN_FILES.log:
      return file("the mailman's log", false);
    case MAILMAN_FILES.routes:
      return file("the routes into agents the mailman verified", false);
    case MAILMAN_FILES.framed:
      return dir("when a frame last went to each agent", false);
    case MAILMAN_FILES.window:
      return dir("what the frames and hooks showed each agent lately", false);
    case MAILMAN_FILES.stopped:
      return file("the note that the mailman was stopped by hand, so session starts leave it stopped", false);
    default:
      return null;
  }
}

/** Is `name` in a directory of this place one agentmail keeps, and what; null when it is not agentmail's. */
export function kept(place: Place, name: string): Kept | null {
  if (tempFilePid(name) !== null) {
    return { what: "a temp file", shape: "file", mail: place !== "mailman" && place !== "bridges", repair: "stray_temp" };
  }
  switch (place) {
    case "top":
      if (name === MARKER) return MARKER_ENTRY;
      if (name === TOMBSTONE) return TOMBSTONE_ENTRY;
      return TOP_DIRECTORIES[name] ?? listsFile(name) ?? mailboxFile(name);
    case "roles":
      return name === ARCHIVE_DIR ? dir("the role queues' archives", true, "archive") : mailboxFile(name);
    case "archive":
      return named(name, MAILBOX_SUFFIX) !== null ? { what: "an archive", shape: "file", mail: true, mailbox: true } : null;
    case "sent":
      // `.json`: an index of an older version, replaced by the next `sent`.
      return named(name, ".index") !== null || named(name, ".json") !== null ? file("a sent index", true) : null;
    case "agents":
      return named(name, ".json") !== null ? file("an agent's registration", true) : null;
    case "mailman":
      return mailmanFile(name);
    case "bridges":
      return bridgeFile(name);
  }
}

/**
 * Whether an unmarked directory may be adopted as a store an older agentmail made: every name in it is one that
 * agentmail accepted in a store before the marker existed (a mailbox's name and what starts with it, or a name
 * starting with a dot).
 */
export function olderStoreEntry(name: string): boolean {
  if (name.startsWith(".")) return true;
  for (let at = name.indexOf(MAILBOX_SUFFIX, 1); at !== -1; at = name.indexOf(MAILBOX_SUFFIX, at + 1)) {
    const after = at + MAILBOX_SUFFIX.length;
    if (after === name.length || name[after] === ".") return decodeName(name.slice(0, at)) !== null;
  }
  return false;
}

/** The names at the top of a store that are mail (layout above), sorted: what may go once the mail has moved. */
export function mailEntries(root: string): string[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  return names.filter((name) => kept("top", name)?.mail === true).sort();
}
