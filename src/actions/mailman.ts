import { bridgeSyncer } from "../bridges/loop.ts";
import { selfCommand, startDaemon, stopDaemon } from "../mailman/daemon.ts";
import { runMailman } from "../mailman/loop.ts";
import {
  claimMailman,
  forgetMailman,
  mailmanLogPath,
  readMailmanState,
  releaseMailman,
  runningMailman,
  type MailmanRecord,
  type ReminderOutcome,
} from "../mailman/files.ts";
import { ensureRoot, localRoot } from "../store/paths.ts";
import { storeAt } from "../identity/caller.ts";
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

/** The store whose mailman a command means: the same lookup for start, stop and status. */
const storeOf = (invocation: Invocation): string => localRoot(invocation.cwd, invocation.env);

/** The arguments that make a child run the mailman with these settings. */
function settingsArgs(settings: MailmanSettings): string[] {
  const args = ["--interval", String(settings.intervalSeconds), "--sweep", String(settings.sweepSeconds)];
  if (settings.typing === "all") args.push("--typing");
  else if (settings.typing) args.push(`--typing=${settings.typing.join(",")}`);
  return args;
}

/**
 * Starts the store's mailman in the background (`self` is the command line that runs agentmail); refused before
 * anything is written when one already runs.
 */
export async function startMailman(
  invocation: Invocation,
  settings: MailmanSettings,
  self = selfCommand(),
): Promise<{ mailman: MailmanRecord; log: string }> {
  const root = ensureRoot(storeOf(invocation));
  const store = await storeAt(invocation);
  const mailman = await startDaemon(root, settingsArgs(settings), invocation.env, self, store.label);
  return { mailman, log: mailmanLogPath(root) };
}

/** Runs the store's mailman in this process until a signal (SIGTERM, SIGINT, SIGHUP) stops it. */
export async function runMailmanHere(
  invocation: Invocation,
  settings: MailmanSettings,
  log: (line: string) => void,
): Promise<{ mailman: MailmanRecord; reminders: number }> {
  const root = ensureRoot(storeOf(invocation));
  const store = await storeAt(invocation);
  const mailman = await claimMailman(root, store.label);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  const signals = ["SIGTERM", "SIGINT", "SIGHUP"] as const;
  for (const signal of signals) process.on(signal, onSignal);
  try {
    await runMailman({
      store,
      root,
      env: invocation.env,
      intervalMs: settings.intervalSeconds * 1000,
      sweepMs: settings.sweepSeconds * 1000,
      typing: settings.typing ?? null,
      log,
      signal: stop.signal,
      // Bridged directories (FEAT-124, Roo, D-Mail) are synced first on every sweep, then dead letters go back.
      eachSweep: sweeps(bridgeSyncer(root, store, log), deadLetterSweeper(store, invocation.env, log)),
    });
  } finally {
    releaseMailman(root);
    for (const signal of signals) process.off(signal, onSignal);
  }
  return { mailman, reminders: readMailmanState(root)?.reminders ?? 0 };
}

/** Runs each sweep's work in turn. */
const sweeps =
  (...works: (() => Promise<void>)[]) =>
  async (): Promise<void> => {
    for (const work of works) await work();
  };

/**
 * Every sweep returns dead letters to their senders (delivery/dead-letters.ts): expired mail, and mail of agents
 * gone longer than AGENTMAIL_GONE_AFTER. Logs each bounce, and a failure once until it changes; never throws.
 */
function deadLetterSweeper(store: Store, env: Invocation["env"], log: (line: string) => void): () => Promise<void> {
  let lastFailure = "";
  return async () => {
    try {
      const { goneLimitMs, presenceOnThisHost, sweepDeadLetters } = await import("../delivery/dead-letters.ts");
      const { bounced, failed } = await sweepDeadLetters(store, { presence: await presenceOnThisHost(env), goneMs: goneLimitMs(env) });
      const quoted = (name: string) => `"${displayName(name)}"`;
      for (const each of bounced) log(`returned ${each.id} of ${quoted(each.mailbox)} to ${quoted(each.to)}: ${each.reason}`);
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

/** Stops the store's mailman, if one runs (SIGTERM, then SIGKILL after 5 s). */
export async function stopMailman(invocation: Invocation): Promise<{ stopped: boolean; pid: number | null }> {
  const root = storeOf(invocation);
  const running = runningMailman(root);
  if (running) await stopDaemon(running);
  forgetMailman(root);
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
