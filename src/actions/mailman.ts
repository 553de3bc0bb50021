import { bridgeSyncer } from "../bridges/loop.ts";
import { existsSync } from "node:fs";
import { bringUpMailman } from "../mailman/bring-up.ts";
import { selfCommand, STARTER_VARIABLE, startDaemon, stopDaemon } from "../mailman/daemon.ts";
import { runMailman } from "../mailman/loop.ts";
import {
  claimMailman,
  clearStoppedByHand,
  forgetMailman,
  mailmanLogPath,
  noteStoppedByHand,
  parseStarter,
  readMailmanState,
  releaseMailman,
  runningMailman,
  stoppedByHand,
  type MailmanRecord,
  type ReminderOutcome,
  type Starter,
} from "../mailman/files.ts";
import { ensureRoot, localRoot } from "../store/paths.ts";
import { isAlive } from "../store/durable/process-identity.ts";
import { storeAt } from "../identity/caller.ts";
import { boundaryOf, type ProjectBoundary } from "../identity/projects.ts";
import type { Invocation } from "../identity/invocation.ts";
import { toAgentmailError } from "../mail/errors.ts";
import { displayName } from "../mail/names.ts";
import type { Store } from "../store/store.ts";

export interface MailmanSettings {
  intervalSeconds: number;
  sweepSeconds: number;
  /** Typed reminders, the last resort: for nobody (null), every agent ("all"), or these agents. */
  typing?: "all" | string[] | null;
}

/** What `agentmail mailman` runs with when not told otherwise (and what `setup` starts it with). */
export const DEFAULT_MAILMAN_SETTINGS: MailmanSettings = { intervalSeconds: 60, sweepSeconds: 5, typing: null };

/** The store whose mailman a command means: the same lookup for start, stop and status. */
const storeOf = (invocation: Invocation): string => localRoot(invocation.cwd, invocation.env);

/** The arguments that make a child run the mailman with these settings. */
function settingsArgs(settings: MailmanSettings): string[] {
  const args = ["--interval", String(settings.intervalSeconds), "--sweep", String(settings.sweepSeconds)];
  if (settings.typing === "all") args.push("--typing");
  else if (settings.typing) args.push(`--typing=${settings.typing.join(",")}`);
  return args;
}

/** Who started a mailman, in words (`by hand`, `by the session start of "bob" (pane %3)`). */
export { startedByText } from "../mailman/files.ts";

/**
 * A mailman an agent's session start or a send brought up gives way to one started by hand, with the settings asked
 * for (a mailman by hand is refused while another by hand runs). Returns whether one gave way.
 */
async function makeWayForHand(root: string): Promise<boolean> {
  const running = runningMailman(root);
  if (running?.started_by === undefined || running.started_by.how === "hand") return false;
  await stopDaemon(running);
  forgetMailman(root);
  return true;
}

/**
 * Runs `start` (a mailman started by hand claiming the store) after making way; one brought up meanwhile (it is
 * spawned and not waited for, so it may register a moment later) is made way for once more.
 */
async function byHand<T>(root: string, start: () => Promise<T>): Promise<T> {
  await makeWayForHand(root);
  try {
    return await start();
  } catch (error) {
    if (!(await makeWayForHand(root))) throw error;
    return start();
  }
}

/**
 * Starts the store's mailman in the background (`self` is the command line that runs agentmail); refused before
 * anything is written when one already runs (one a session start or a send brought up is replaced).
 */
export async function startMailman(
  invocation: Invocation,
  settings: MailmanSettings,
  self = selfCommand(),
): Promise<{ mailman: MailmanRecord; log: string }> {
  const root = ensureRoot(storeOf(invocation));
  const store = await storeAt(invocation);
  const mailman = await byHand(root, () => startDaemon(root, settingsArgs(settings), invocation.env, self, store.label));
  clearStoppedByHand(root);
  return { mailman, log: mailmanLogPath(root) };
}

/**
 * An agent's session start (`onboard`, run by its SessionStart hook) brings up the store's mailman when none runs and
 * it was not stopped by hand (mailman/bring-up.ts). Returns whether it did; never fails.
 */
export function mailmanForSession(invocation: Invocation, agent: string, pane: string): boolean {
  try {
    return bringUpMailman(ensureRoot(storeOf(invocation)), invocation.env, { how: "session-start", agent, pane });
  } catch {
    return false;
  }
}

/**
 * Why a mailman a session start brought up should end: its tmux server is gone (every agent it served was in it) or
 * its store's directory is. Null while it has work.
 */
function sessionMailmanDone(root: string, env: Invocation["env"]): string | null {
  // $TMUX is `<socket>,<server pid>,<session>`; a killed server may leave its socket file behind.
  const [socket, pid] = (env.TMUX ?? "").split(",");
  if (socket && (!existsSync(socket) || (Number(pid) > 0 && !isAlive(Number(pid))))) return `its tmux server (${socket}) is gone`;
  if (!existsSync(root)) return `its store (${root}) is gone`;
  return null;
}

/** Runs the store's mailman in this process until a signal (SIGTERM, SIGINT, SIGHUP) stops it. */
export async function runMailmanHere(
  invocation: Invocation,
  settings: MailmanSettings,
  log: (line: string) => void,
): Promise<{ mailman: MailmanRecord; reminders: number }> {
  const root = ensureRoot(storeOf(invocation));
  const store = await storeAt(invocation);
  const starter = startedBy(invocation.env);
  const claim = () => claimMailman(root, store.label, starter);
  const mailman = starter.how === "hand" ? await byHand(root, claim) : await claim();
  if (starter.how === "hand") clearStoppedByHand(root);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  const signals = ["SIGTERM", "SIGINT", "SIGHUP"] as const;
  for (const signal of signals) process.on(signal, onSignal);
  // Only this project's panes, as send sees them: another project's window of the same name is not this agent.
  const project = await boundaryOf(invocation);
  try {
    await runMailman({
      store,
      root,
      env: invocation.env,
      project,
      intervalMs: settings.intervalSeconds * 1000,
      sweepMs: settings.sweepSeconds * 1000,
      typing: settings.typing ?? null,
      log,
      signal: stop.signal,
      // Bridged directories (FEAT-124, Roo, D-Mail) are synced first on every sweep, then dead letters go back.
      eachSweep: sweeps(bridgeSyncer(root, store, log), deadLetterSweeper(store, invocation.env, project, log)),
      // One brought up by a session start or a send ends with what it served; one started by hand runs until stopped.
      ...(starter.how === "hand" ? {} : { done: () => sessionMailmanDone(root, invocation.env) }),
    });
  } finally {
    releaseMailman(root);
    for (const signal of signals) process.off(signal, onSignal);
  }
  return { mailman, reminders: readMailmanState(root)?.reminders ?? 0 };
}

/** Who started this mailman: a session start says so in its environment (bringUpMailman); otherwise by hand. */
function startedBy(env: Invocation["env"]): Starter {
  const text = env[STARTER_VARIABLE];
  if (text === undefined) return { how: "hand" };
  try {
    return parseStarter(JSON.parse(text)) ?? { how: "hand" };
  } catch {
    return { how: "hand" };
  }
}

/** Runs each sweep's work in turn. */
const sweeps =
  (...works: (() => Promise<void>)[]) =>
  async (): Promise<void> => {
    for (const work of works) await work();
  };

/**
 * Every sweep returns dead letters to their senders (dead-letters/dead-letters.ts): expired mail, and mail of agents
 * gone longer than AGENTMAIL_GONE_AFTER. Logs each bounce, and a failure once until it changes; never throws.
 */
function deadLetterSweeper(
  store: Store,
  env: Invocation["env"],
  project: ProjectBoundary | null,
  log: (line: string) => void,
): () => Promise<void> {
  let lastFailure = "";
  let lastKept = "";
  return async () => {
    try {
      const { goneLimitMs, presenceOnThisHost, sweepDeadLetters } = await import("../dead-letters/dead-letters.ts");
      const { bounced, failed, forwarded, waiting } = await sweepDeadLetters(store, {
        presence: await presenceOnThisHost(env, project),
        goneMs: goneLimitMs(env),
      });
      const quoted = (name: string) => `"${displayName(name)}"`;
      for (const each of bounced)
        log(
          each.kept === null
            ? `returned ${each.id} of ${quoted(each.mailbox)} to ${quoted(each.to)}: ${each.reason}`
            : `kept the bounce of ${each.id} of ${quoted(each.mailbox)} here for ${quoted(each.to)}: ${each.kept}; it goes on once that store takes it`,
        );
      for (const each of forwarded) log(`sent on the bounce ${each.id} kept here for ${quoted(each.mailbox)}`);
      const stillKept = waiting.map((each) => `${each.id} for ${quoted(each.mailbox)} (${each.why})`).join("; ");
      if (stillKept !== "" && stillKept !== lastKept) log(`still keeping bounces here: ${stillKept}; each goes on once its store takes it`);
      lastKept = stillKept;
      // A mailbox that is no file agentmail may read (a symlink, a FIFO) is the reminder loop's to report, once.
      const failure = failed
        .map(({ mailbox, error }) => ({ mailbox, error: toAgentmailError(error) }))
        .filter(({ error }) => error.code !== "unsafe_path")
        .map(({ mailbox, error }) => `${quoted(mailbox)}: ${error.message}`)
        .join("; ");
      if (failure !== "" && failure !== lastFailure) log(`could not return dead letters of ${failure}`);
      lastFailure = failure;
    } catch (error) {
      const failure = toAgentmailError(error).message;
      if (failure !== lastFailure) log(`could not return dead letters: ${failure}`);
      lastFailure = failure;
    }
  };
}

/**
 * Stops the store's mailman, if one runs (SIGTERM, then SIGKILL after 5 s), and notes it was stopped by hand: agents'
 * session starts leave it stopped until it is started by hand again.
 */
export async function stopMailman(invocation: Invocation): Promise<{ stopped: boolean; pid: number | null }> {
  const root = storeOf(invocation);
  const running = runningMailman(root);
  if (running) await stopDaemon(running);
  forgetMailman(root);
  if (existsSync(root)) noteStoppedByHand(root);
  return { stopped: running !== null, pid: running?.pid ?? null };
}

interface AgentReminderReport {
  name: string;
  outcome: ReminderOutcome;
  detail: string;
  since: string;
  last_reminded_at: string | null;
  /** The agent CLI's own channel its mail last went through (claude-inbox, codex-steer, codex-queue), or null. */
  channel: string | null;
}

/** The `mailman status` document. */
export interface MailmanStatus {
  running: boolean;
  pid: number | null;
  /** The store the running mailman serves (null: none runs, or an older one that does not say). */
  store: string | null;
  since: string | null;
  /** Who started the running one: by hand, or an agent's session start (null: none runs, or an older one). */
  started_by: Starter | null;
  /** When `mailman stop` stopped it, so session starts leave it stopped (null: it was not). */
  stopped_by_hand: string | null;
  last_action: string | null;
  last_action_at: string | null;
  /** When it last looked at every mailbox (to within 10 s), and its last failure: what the mail room shows. */
  last_sweep_at: string | null;
  last_failure: string | null;
  last_failure_at: string | null;
  reminders: number;
  /** Frames put in front of agents through their agent CLI's own channel. */
  frames: number;
  /** Each agent with a mailbox the running mailman has looked at: its last reminder and the last attempt's outcome. */
  agents: AgentReminderReport[];
  log: string;
}

export function mailmanStatus(invocation: Invocation): MailmanStatus {
  const root = storeOf(invocation);
  const running = runningMailman(root);
  const state = running ? readMailmanState(root) : null;
  const agents = Object.entries(state?.agents ?? {})
    .map(([name, { outcome, detail, since, last_reminded_at, channel }]) => ({
      name,
      outcome,
      detail,
      since,
      last_reminded_at,
      channel: channel ?? null,
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    running: running !== null,
    pid: running?.pid ?? null,
    store: running?.store ?? null,
    since: running?.started_at ?? null,
    started_by: running?.started_by ?? null,
    stopped_by_hand: running ? null : stoppedByHand(root),
    last_action: state?.last_action ?? null,
    last_action_at: state?.last_action_at ?? null,
    last_sweep_at: state?.last_sweep_at ?? null,
    last_failure: state?.last_failure ?? null,
    last_failure_at: state?.last_failure_at ?? null,
    reminders: state?.reminders ?? 0,
    frames: state?.frames ?? 0,
    agents,
    log: mailmanLogPath(root),
  };
}
