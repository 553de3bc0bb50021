import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { AgentmailError } from "../mail/errors.ts";
import { terminalLine } from "../mail/terminal-text.ts";
import { replaceFile } from "../store/durable/files.ts";
import { MAILMAN_DIR, MAILMAN_FILES } from "../store/local/layout.ts";
import { withLock } from "../store/durable/lock.ts";
import { currentProcess, isGone, parseIdentity, type ProcessIdentity } from "../store/durable/process-identity.ts";

/** The mailman's own files, in `<root>/.mailman/`: outside the mailbox namespace and outside what it watches. */
export const mailmanDir = (root: string) => join(root, MAILMAN_DIR);
export const mailmanLogPath = (root: string) => join(mailmanDir(root), MAILMAN_FILES.log);
const pidPath = (root: string) => join(mailmanDir(root), MAILMAN_FILES.pid);
const statePath = (root: string) => join(mailmanDir(root), MAILMAN_FILES.state);
const stoppedPath = (root: string) => join(mailmanDir(root), MAILMAN_FILES.stopped);

/**
 * Who started a mailman: someone by hand (`agentmail mailman`), or an agent's session start (its SessionStart hook's
 * `agentmail onboard`), which brings the store's mailman up when none runs, so mail reaches idle agents with nothing
 * started by hand.
 */
export type Starter = { how: "hand" } | { how: "session-start" | "send"; agent: string; pane: string };

export interface MailmanRecord extends ProcessIdentity {
  started_at: string;
  /**
   * The one store it serves (Store.label: the file store's directory, or the server and namespace): its files stay in
   * the local root whichever store that is. Missing in the records of older versions.
   */
  store?: string;
  /** Who started it; missing in the records of older versions. */
  started_by?: Starter;
}

/** A starter read back from a record or the environment, or null for anything that is not one. */
export function parseStarter(value: unknown): Starter | null {
  if (value === null || typeof value !== "object") return null;
  const { how, agent, pane } = value as Record<string, unknown>;
  if (how === "hand") return { how };
  if ((how === "session-start" || how === "send") && typeof agent === "string" && typeof pane === "string") return { how, agent, pane };
  return null;
}

/** `by hand`, `by the session start of "bob" (pane %3)`, `by a send from "alice" (pane %1)`. */
export function startedByText(starter: Starter | undefined): string | null {
  if (starter === undefined) return null;
  if (starter.how === "hand") return "by hand";
  const who = `"${terminalLine(starter.agent)}" (pane ${terminalLine(starter.pane)})`;
  return starter.how === "send" ? `by a send from ${who}` : `by the session start of ${who}`;
}

/**
 * What became of an agent's mail at the mailman's last attempt: framed through its agent CLI's own channel
 * (`notified`), held there for its user's approval (`held`), left to its hooks for want of a channel (`hooks`); or,
 * for an agent that opted into typed reminders, typed and submitted, typed but still on the input line after a
 * second Enter (given up for this interval), waiting for its pane, or not attempted and why.
 */
export type ReminderOutcome =
  | "notified"
  | "held"
  | "hooks"
  | "reminded"
  | "not_submitted"
  | "waiting"
  | "not_ready"
  | "no_agent_pane"
  | "no_window"
  | "unreadable";

interface AgentReminder {
  outcome: ReminderOutcome;
  /** Why, in the log's words (the channel or pane used, or what stopped it). */
  detail: string;
  /** Since when this outcome holds (for "reminded" and "notified": when it happened). */
  since: string;
  last_reminded_at: string | null;
  /** The agent CLI's own channel the mailman last framed its mail through, or null (none yet, or none at all). */
  channel?: string | null;
}

export interface MailmanState {
  last_action: string | null;
  last_action_at: string | null;
  reminders: number;
  /** Frames sent through the agents' own channels. */
  frames?: number;
  /** Per agent (by name) with a mailbox: its last reminder and what became of the last attempt. */
  agents: Record<string, AgentReminder>;
  /** When it last looked at every mailbox (written at most every SWEEP_NOTED_MS, so a busy store costs no write per send). */
  last_sweep_at?: string | null;
  /** Why its last sweep that failed did, and when (kept once sweeps work again: the mail room shows it). */
  last_failure?: string | null;
  last_failure_at?: string | null;
}

/** How often the state records a sweep that changed nothing else. */
export const SWEEP_NOTED_MS = 10_000;

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return null;
  }
}

/** The running mailman of this store, or null (a pid file of a dead, zombie or reused pid does not count). */
export function runningMailman(root: string): MailmanRecord | null {
  const value = readJson(pidPath(root)) as Partial<MailmanRecord> | null;
  const identity = parseIdentity(value);
  if (!identity || isGone(identity)) return null;
  const record: MailmanRecord = { ...identity, started_at: String(value?.started_at) };
  if (typeof value?.store === "string") record.store = value.store;
  const starter = parseStarter(value?.started_by);
  if (starter !== null) record.started_by = starter;
  return record;
}

/** What the running mailman serves, said the same way everywhere (doctor, the refusal below). */
export const servedStore = (running: MailmanRecord): string =>
  running.store === undefined ? "a store it does not name (an older agentmail)" : terminalLine(running.store);

/**
 * The refusal a second mailman gets: the cause first, with the running one's pid and how to stop it; and when it
 * serves another store than `store` (AGENTMAIL_URL set or unset since), which one.
 */
export function mailmanAlreadyRuns(running: MailmanRecord, store: string): AgentmailError {
  const stop = "stop it with 'agentmail mailman stop'";
  const message =
    running.store === store
      ? `a mailman already runs for this store (pid ${running.pid}); ${stop}`
      : `a mailman already runs here for another store, ${servedStore(running)} (pid ${running.pid}); ${stop}, then start this store's`;
  return new AgentmailError("conflict", message);
}

/**
 * Registers this process as the mailman of `store` (its label), in the local root's pid file; fails naming the live
 * one if there is one, whichever store it serves.
 */
export async function claimMailman(root: string, store: string = root, startedBy: Starter = { how: "hand" }): Promise<MailmanRecord> {
  mkdirSync(mailmanDir(root), { recursive: true, mode: 0o700 });
  return withLock(`${pidPath(root)}.lock`, () => {
    const running = runningMailman(root);
    if (running && running.pid !== process.pid) throw mailmanAlreadyRuns(running, store);
    const record: MailmanRecord = { ...currentProcess(), started_at: new Date().toISOString(), store, started_by: startedBy };
    replaceFile(pidPath(root), JSON.stringify(record) + "\n");
    return record;
  });
}

export function releaseMailman(root: string): void {
  const value = readJson(pidPath(root)) as Partial<MailmanRecord> | null;
  if (value?.pid === process.pid) rmSync(pidPath(root), { force: true });
}

/** Removes the pid file of a mailman known to be gone. */
export function forgetMailman(root: string): void {
  rmSync(pidPath(root), { force: true });
}

/**
 * `agentmail mailman stop` leaves a note, so agents' session starts do not bring the mailman up again behind the
 * back of whoever stopped it; a mailman started by hand removes it.
 */
export function noteStoppedByHand(root: string): void {
  try {
    mkdirSync(mailmanDir(root), { recursive: true, mode: 0o700 });
    replaceFile(stoppedPath(root), `${new Date().toISOString()}\n`);
  } catch {
    // Then a session start may bring it up again.
  }
}

/** When the mailman was stopped by hand (and not started by hand since), or null. */
export function stoppedByHand(root: string): string | null {
  try {
    return readFileSync(stoppedPath(root), "utf8").trim() || "at an unknown time";
  } catch {
    return null;
  }
}

/** Whether a mailman would be brought up now (mailman/bring-up.ts): none runs, and it was not stopped by hand. */
export const mailmanWanted = (root: string): boolean => runningMailman(root) === null && stoppedByHand(root) === null;

export function clearStoppedByHand(root: string): void {
  rmSync(stoppedPath(root), { force: true });
}

export function readMailmanState(root: string): MailmanState | null {
  const state = readJson(statePath(root)) as Partial<MailmanState> | null;
  if (state === null || typeof state !== "object") return null;
  return {
    last_action: state.last_action ?? null,
    last_action_at: state.last_action_at ?? null,
    reminders: typeof state.reminders === "number" ? state.reminders : 0,
    frames: typeof state.frames === "number" ? state.frames : 0,
    agents: Object.assign(Object.create(null), state.agents !== null && typeof state.agents === "object" ? state.agents : {}),
    last_sweep_at: typeof state.last_sweep_at === "string" ? state.last_sweep_at : null,
    last_failure: typeof state.last_failure === "string" ? state.last_failure : null,
    last_failure_at: typeof state.last_failure_at === "string" ? state.last_failure_at : null,
  };
}

/** Writes the state only when it changed: a file that is rewritten without change only wakes watchers. */
export function writeMailmanState(root: string, state: MailmanState): void {
  const text = JSON.stringify(state) + "\n";
  try {
    if (readFileSync(statePath(root), "utf8") === text) return;
  } catch {
    // Not written yet.
  }
  replaceFile(statePath(root), text);
}
