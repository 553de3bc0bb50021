/**
 * The mailman's loop: `runMailman` watches the store and sweeps it (sweep.ts) after every change (SETTLE_MS later,
 * so a burst is handled once) and at least every `sweepMs`, so a missed event or a dead watcher never silences it.
 *
 * Contract: it returns only when `signal` is aborted or its `done` check gives a reason (logged); it never exits on
 * its own because of the store. A sweep that fails is logged once per distinct failure (and written to the state
 * `mailman status` shows) and tried again on the next turn; a store that stops answering mid-wait (a Redis restart,
 * a Sentinel failover) is watched again after 1 s, 2 s, … at most RETRY_MOST_MS. Before the first sweep, the routes
 * an earlier mailman kept for `send` are kept only where they still lead into this project's agent (channels.ts).
 * On return, its watch is closed and so are the sockets it listened on for Claude Code's receipts (native.ts).
 */
import { budgetOf } from "../mail/frame.ts";
import { agentHost } from "../identity/invocation.ts";
import type { MailWatch } from "../store/store.ts";
import { keepRoutesInProject } from "./channels.ts";
import { writeMailmanState } from "./files.ts";
import { NativeDeliveries } from "./native.ts";
import { explain, note, type MailmanOptions, type Run } from "./run-state.ts";
import { sweep } from "./sweep.ts";

/** How often a mailman with a `done` check asks it while waiting for a change. */
const DONE_CHECK_MS = 1_000;

/** After a change event, wait this long so a burst of messages is counted (and reminded) once. */
const SETTLE_MS = 200;
/** The longest pause between attempts while the store does not answer. */
const RETRY_MOST_MS = 30_000;

/** How long to wait for a change before sweeping again: a frame's receipt time, or a paced agent, may come first. */
async function nextWaitMs(run: Run): Promise<number> {
  const settleDue = await run.native.settle();
  const due = [settleDue, run.paceDue].filter((time): time is number => time !== null);
  if (due.length === 0) return run.options.sweepMs;
  return Math.max(50, Math.min(run.options.sweepMs, Math.min(...due) - Date.now() + 10));
}

/** Whether the mailman's `done` check says it should end (logged, as it ends). */
function ended(options: MailmanOptions): boolean {
  const why = options.done?.() ?? null;
  if (why !== null) options.log(`stopping: ${why}`);
  return why !== null;
}

/**
 * Waits for a change, at most `waitMs`; with a `done` check, in steps of DONE_CHECK_MS, so an end is noticed within
 * one. Returns false when the mailman should end.
 */
async function waitForChange(watch: { changed(ms: number): Promise<void> }, waitMs: number, options: MailmanOptions): Promise<boolean> {
  if (!options.done) {
    await watch.changed(waitMs);
    return true;
  }
  const started = Date.now();
  for (let left = waitMs; left > 0; left = waitMs - (Date.now() - started)) {
    const step = Math.min(left, DONE_CHECK_MS);
    const stepStarted = Date.now();
    await watch.changed(step);
    if (options.signal.aborted) return true;
    if (ended(options)) return false;
    // Woken before the step was up: something changed.
    if (Date.now() - stepStarted < step) return true;
  }
  return true;
}

/** A mailman's state at its start: nothing reminded, routed or noted yet; each frame's receipt noted and saved. */
export function newRun(options: MailmanOptions): Run {
  const run: Run = {
    options,
    host: agentHost(options.env),
    lastReminded: new Map(),
    // Keyed by window names, which are hostile: no prototype, so `__proto__` or `constructor` is just a name.
    state: { last_action: null, last_action_at: null, reminders: 0, agents: Object.create(null) },
    tmuxSilent: false,
    problems: new Map(),
    native: new NativeDeliveries({
      store: options.store,
      root: options.root,
      budget: options.budget ?? budgetOf(options.env),
      log: options.log,
      report: (name, outcome, detail) => {
        note(run, name, outcome, detail, null, "claude-inbox");
        writeMailmanState(options.root, run.state);
      },
    }),
    routes: new Map(),
    unreachableNoted: new Map(),
    paceDue: null,
  };
  return run;
}

/**
 * The mailman: watches the store (and sweeps it periodically, so a missed event or a dead watcher never silences
 * it) and puts each agent's fresh mail (unread, and announced by no arrival yet) in front of it through its agent
 * CLI's own channel (Claude Code's inbox, Codex's control socket: adapters.ts), in a frame within the budget,
 * whether the agent is idle or busy; where there is none, it records why (the hooks bring that mail) and, for an
 * agent that opted in, types a fixed reminder into its agent CLI at its prompt. Each mailbox is handled on its own:
 * one that cannot be read is reported once and skipped, never stopping the rest.
 */
export async function runMailman(options: MailmanOptions): Promise<void> {
  const { store, log, signal } = options;
  const run = newRun(options);
  await keepRoutesInProject(run);
  // Every mailbox, role queues included, so role mail wakes the mailman like any other. Opened again after the store
  // stopped answering (a Redis server restarting, a Sentinel failover): the mailman never exits on its own.
  let watch: MailWatch | null = null;
  signal.addEventListener("abort", () => watch?.close());
  log(`watching ${store.location}`);
  let lastFailure: string | null = null;
  let retryMs = 0;
  try {
    while (!signal.aborted) {
      let waitMs = options.sweepMs;
      try {
        watch ??= await store.watch(null);
        await sweep(run);
        waitMs = await nextWaitMs(run);
        if (lastFailure !== null) log(`the store at ${store.location} answers again; sweeping as before`);
        lastFailure = null;
        retryMs = 0;
      } catch (error) {
        // A store that cannot be written fails every sweep the same way: say so once, and again when it changes
        // (a system error is compared by its code and call: its text names a fresh temp file each time).
        const { code, syscall } = error as NodeJS.ErrnoException;
        const failure = syscall ? `${code} ${syscall}` : explain(error);
        if (failure !== lastFailure) log(`sweep failed: ${explain(error)}`);
        lastFailure = failure;
        Object.assign(run.state, { last_failure: explain(error), last_failure_at: new Date().toISOString() });
        try {
          writeMailmanState(options.root, run.state);
        } catch {
          // The store's disk is what failed: the log says so.
        }
      }
      if (signal.aborted || ended(options)) break;
      const started = Date.now();
      let carryOn: boolean;
      try {
        if (!watch) throw new Error("no watch");
        carryOn = await waitForChange(watch, waitMs, options);
      } catch {
        // The store went away mid-wait: wait longer each time (1 s, 2 s, … 30 s) before the next sweep tries again.
        watch?.close();
        watch = null;
        retryMs = Math.min(Math.max(1_000, retryMs * 2), RETRY_MOST_MS);
        await pauseUnless(signal, retryMs);
        continue;
      }
      if (!carryOn) break;
      if (!signal.aborted && Date.now() - started < waitMs) await new Promise((done) => setTimeout(done, SETTLE_MS));
    }
  } finally {
    watch?.close();
    await run.native.close();
  }
}

/** Waits `ms`, or less when the mailman is told to stop. */
function pauseUnless(signal: AbortSignal, ms: number): Promise<void> {
  return new Promise((done) => {
    const timer = setTimeout(finish, ms);
    function finish() {
      clearTimeout(timer);
      signal.removeEventListener("abort", finish);
      done();
    }
    signal.addEventListener("abort", finish);
  });
}
