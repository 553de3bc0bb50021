/**
 * What one mailman keeps between sweeps (Run), and how each step of a sweep notes what became of an agent: the
 * outcome `mailman status` shows (files.ts writes it), and a log line only when the outcome or its detail changed.
 * The loop (loop.ts) makes the Run; the sweep (sweep.ts), the channels (channels.ts) and the typed reminders
 * (reminders.ts) read and update it, one sweep at a time.
 */
import { AgentmailError } from "../mail/errors.ts";
import type { Budget } from "../mail/frame.ts";
import { displayName } from "../mail/names.ts";
import type { Route } from "../mail/route.ts";
import type { ProjectBoundary } from "../identity/projects.ts";
import type { Store } from "../store/store.ts";
import type { AgentCli } from "../tmux/foreground.ts";
import type { MailmanState, ReminderOutcome } from "./files.ts";
import type { NativeDeliveries } from "./native.ts";

type Env = Record<string, string | undefined>;

export interface MailmanOptions {
  /** Where the mail is. */
  store: Store;
  /** The local mail directory: the mailman's own files and the bridges' configuration. */
  root: string;
  env: Env;
  /**
   * Which panes are this store's agents' (identity/projects.ts): only those are framed, typed into or kept as routes;
   * null when every pane is (a store set by AGENTMAIL_DIR or AGENTMAIL_NAMESPACE, as `send` sees it).
   */
  project: ProjectBoundary | null;
  /** Remind again after this long while mail stays unread. */
  intervalMs: number;
  /** Look at every mailbox this often even without a change event. */
  sweepMs: number;
  log: (line: string) => void;
  signal: AbortSignal;
  /**
   * Work done first on every sweep by another part of agentmail (the bridges' sync), passed in so the mailman
   * imports none of it; it logs its own failures and never throws.
   */
  eachSweep?: () => Promise<void>;
  /**
   * Who may get a typed reminder, the last resort for an agent CLI with no channel of its own: nobody (null, the
   * default), every agent ("all"), or these agents.
   */
  typing?: "all" | readonly string[] | null;
  /** What one frame may carry (mail/frame.ts); by default from the environment (budgetOf). */
  budget?: Budget;
  /**
   * Why this mailman should end now (a mailman a session start brought up ends with its tmux server), or null; asked
   * after each sweep and at least every DONE_CHECK_MS while it waits.
   */
  done?: () => string | null;
}

/** A route found into an agent, and the process and pane it was found for. */
interface KnownRoute {
  cli: AgentCli;
  pid: number;
  paneId: string;
  route: Route;
}

/** What one mailman keeps between sweeps; every step of a sweep reads and updates it. */
export interface Run {
  options: MailmanOptions;
  /** The host whose agents this mailman reminds (on a store shared by hosts). */
  host: string;
  /** When each agent was last reminded, so it is not reminded again before the interval. */
  lastReminded: Map<string, number>;
  /** What `mailman status` shows, written after every sweep. */
  state: MailmanState;
  /** tmux did not answer on the last sweep: said once until it answers again. */
  tmuxSilent: boolean;
  /** Problems that are not one agent's (the roles file, a role's queue), by what they are about. */
  problems: Map<string, string>;
  /** The frames sent through agent CLIs' own channels, and the receipts they are waiting for. */
  native: NativeDeliveries;
  /**
   * The routes found, by agent, reused while the same process holds the same pane: finding Codex's thread takes a
   * few calls on its control socket. A frame that fails forgets its route, so the next sweep finds it afresh.
   */
  routes: Map<string, KnownRoute>;
  /** The reason each message was last recorded unreachable for, so the record gets one event per change. */
  unreachableNoted: Map<string, string>;
  /** When the next frame is due for an agent that a pace held back (ms since the epoch), or null. */
  paceDue: number | null;
}

export const quoted = (name: string) => `"${displayName(name)}"`;

/** Whether `name` opted into typed reminders (mailman --typing). */
export function typingFor(run: Run, name: string): boolean {
  const { typing } = run.options;
  return typing === "all" || (Array.isArray(typing) && (typing as readonly string[]).includes(name));
}

/** An error's text, with what to do when it does not say so itself (ours always do). */
export function explain(error: unknown): string {
  if (error instanceof AgentmailError) return error.message;
  const text = error instanceof Error ? error.message : String(error);
  return `${text}; check its owner and mode, or move it out of the store`;
}

/**
 * Records what became of an agent's reminder. The log gets `line` only when the outcome or its detail changed,
 * so a pane that stays busy is reported once, not on every sweep; a reminder typed is always logged.
 */
export function note(run: Run, name: string, outcome: ReminderOutcome, detail: string, line: string | null, channel?: string | null): void {
  const { state } = run;
  const now = new Date().toISOString();
  const previous = state.agents[name];
  const changed = outcome === "reminded" || outcome === "notified" || previous?.outcome !== outcome || previous.detail !== detail;
  if (!changed) return;
  const lastReminded = outcome === "reminded" ? now : (previous?.last_reminded_at ?? null);
  state.agents[name] = { outcome, detail, since: now, last_reminded_at: lastReminded, channel: channel ?? previous?.channel ?? null };
  if (line === null) return;
  run.options.log(line);
  state.last_action = line;
  state.last_action_at = now;
}
