import { bridgeSyncer } from "../bridges/mailman-hook.ts";
import { AgentmailError } from "../core/errors.ts";
import { displayName } from "../core/names.ts";
import {
  looksIdle,
  looksLikeQuestion,
  paneRefusal,
  reminderText,
  urgentReminderText,
  targetPanes,
  wantsReminder,
  type MailboxView,
} from "../core/reminders.ts";
import { isUrgent } from "../core/mail-fields.ts";
import { countUnread, listMailboxes } from "../store/mailbox.ts";
import { unreadMail } from "../store/mail-view.ts";
import { writeMailmanState, type MailmanState, type ReminderOutcome } from "../store/mailman-files.ts";
import { readStatus } from "../store/status.ts";
import { watchStore } from "../store/watch.ts";
import { listAllPanes, textBeforeCursor, typeLine, type Pane } from "../tmux/windows.ts";

type Env = Record<string, string | undefined>;

export interface MailmanOptions {
  root: string;
  env: Env;
  /** Remind again after this long while mail stays unread. */
  intervalMs: number;
  /** Look at every mailbox this often even without a change event. */
  sweepMs: number;
  /** Remind the active pane of a window with the agent's name whatever runs in it (the old rule), not only agents. */
  allPanes: boolean;
  log: (line: string) => void;
  signal: AbortSignal;
}

/** After a change event, wait this long so a burst of messages is counted (and reminded) once. */
const SETTLE_MS = 200;

const quoted = (name: string) => `"${displayName(name)}"`;

/** An error's text, with what to do when it does not say so itself (ours always do). */
function explain(error: unknown): string {
  if (error instanceof AgentmailError) return error.message;
  const text = error instanceof Error ? error.message : String(error);
  return `${text}; check its owner and mode, or move it out of the store`;
}

/** Why a pane may not be typed into now, reading its cursor line only when nothing else already says no. */
async function refusalOf(pane: Pane, env: Env): Promise<string | null> {
  const refusal = paneRefusal(pane);
  if (refusal) return refusal;
  const text = await textBeforeCursor(pane, env);
  if (text === null) return "vanished";
  if (looksLikeQuestion(text)) return "shows a question or password prompt";
  if (!looksIdle(text, pane.agent !== null)) return "has a half-typed line";
  return null;
}

/**
 * The mailman: watches the store (and sweeps it periodically, so a missed event or a dead watcher never silences
 * it) and types a fixed reminder into the pane of each agent that has unread mail and is ready (or never said).
 * Each mailbox is handled on its own: one that cannot be read is reported once and skipped, never stopping the rest.
 */
export async function runMailman(options: MailmanOptions): Promise<void> {
  const { root, env, log, signal } = options;
  const lastReminded = new Map<string, number>();
  // Keyed by window names, which are hostile: no prototype, so `__proto__` or `constructor` is just a name.
  const state: MailmanState = { last_action: null, last_action_at: null, reminders: 0, agents: Object.create(null) };
  let tmuxSilent = false;

  /**
   * Records what became of an agent's reminder. The log gets `line` only when the outcome or its detail changed,
   * so a pane that stays busy is reported once, not on every sweep; a reminder typed is always logged.
   */
  function note(name: string, outcome: ReminderOutcome, detail: string, line: string | null): void {
    const now = new Date().toISOString();
    const previous = state.agents[name];
    const changed = outcome === "reminded" || previous?.outcome !== outcome || previous.detail !== detail;
    if (!changed) return;
    const lastReminded = outcome === "reminded" ? now : (previous?.last_reminded_at ?? null);
    state.agents[name] = { outcome, detail, since: now, last_reminded_at: lastReminded };
    if (line === null) return;
    log(line);
    state.last_action = line;
    state.last_action_at = now;
  }

  async function remind(view: MailboxView, panes: Pane[]): Promise<void> {
    const name = quoted(view.name);
    const targets = targetPanes(view, panes, options.allPanes);
    if (targets.length === 0) {
      if (!panes.some((pane) => pane.windowName === view.name)) {
        return note(view.name, "no_window", "no window with that name", `dropped ${name}: no window with that name`);
      }
      const detail = "no pane in a window of that name belongs to an agent";
      const advice = "run 'agentmail status ready' in the agent's pane, or start the mailman with --all-panes";
      return note(view.name, "no_agent_pane", detail, `not reminding ${name}: ${detail}; ${advice}`);
    }
    const reminder = view.urgent ? urgentReminderText(view.unread, view.urgent) : reminderText(view.unread);
    const reasons: string[] = [];
    const typedInto: string[] = [];
    for (const pane of targets) {
      const refusal = await refusalOf(pane, env);
      if (refusal) reasons.push(`pane ${pane.paneId} ${refusal}`);
      else if (await typeLine(pane.paneId, reminder, env)) typedInto.push(pane.paneId);
      else reasons.push(`pane ${pane.paneId} vanished`);
    }
    if (typedInto.length === 0) {
      const detail = reasons.join("; ");
      return note(view.name, "waiting", detail, `waiting to remind ${name}: ${detail}; will retry`);
    }
    lastReminded.set(view.name, Date.now());
    state.reminders += typedInto.length;
    note(view.name, "reminded", `in ${typedInto.join(", ")}`, `reminded ${name} in ${typedInto.join(", ")} (${view.unread} unread)`);
  }

  /** The mailbox as the mailman sees it, or null when it cannot be read (reported once, then skipped). */
  function look(name: string): MailboxView | null {
    try {
      const unread = countUnread(root, name);
      const status = readStatus(root, name);
      return { name, unread, status: status?.status ?? null, statusPane: status?.pane ?? null };
    } catch (error) {
      const detail = explain(error);
      note(name, "unreadable", detail, `skipping the mailbox of ${quoted(name)}: ${detail}`);
      return null;
    }
  }

  // Bridged directories (FEAT-124, Roo, D-Mail) are synced first on every sweep; it logs its own failures, never throws.
  const syncBridges = bridgeSyncer(root, log);

  async function sweep(): Promise<void> {
    await syncBridges();
    const names = listMailboxes(root);
    for (const name of Object.keys(state.agents)) if (!names.includes(name)) delete state.agents[name];
    const due: MailboxView[] = [];
    for (const name of names) {
      const view = look(name);
      if (view === null) continue;
      if (view.unread === 0) {
        lastReminded.delete(name);
        if (state.agents[name] && state.agents[name].outcome !== "reminded") delete state.agents[name];
        continue;
      }
      if (view.status !== null && view.status !== "ready") note(name, "not_ready", `status ${view.status}`, null);
      else if (wantsReminder(view, lastReminded.get(name), Date.now(), options.intervalMs)) {
        // Counted only for a reminder about to be typed: it reads the whole mailbox, where countUnread starts at the cursor.
        view.urgent = unreadMail(root, name).filter(isUrgent).length;
        due.push(view);
      }
    }
    if (due.length > 0) {
      const panes = await listAllPanes(env);
      if (panes === null) {
        if (!tmuxSilent) log("tmux is not answering; will retry");
        tmuxSilent = true;
      } else {
        tmuxSilent = false;
        for (const view of due) {
          try {
            await remind(view, panes);
          } catch (error) {
            note(view.name, "waiting", explain(error), `reminding ${quoted(view.name)} failed: ${explain(error)}; will retry`);
          }
        }
      }
    }
    writeMailmanState(root, state);
  }

  const watcher = watchStore(root, (name) => name.endsWith(".jsonl") || name === ".agents");
  signal.addEventListener("abort", () => watcher.close());
  log(`watching ${root}`);
  let lastFailure: string | null = null;
  try {
    while (!signal.aborted) {
      try {
        await sweep();
        lastFailure = null;
      } catch (error) {
        // A store that cannot be written fails every sweep the same way: say so once, and again when it changes
        // (a system error is compared by its code and call: its text names a fresh temp file each time).
        const { code, syscall } = error as NodeJS.ErrnoException;
        const failure = syscall ? `${code} ${syscall}` : explain(error);
        if (failure !== lastFailure) log(`sweep failed: ${explain(error)}`);
        lastFailure = failure;
      }
      if (signal.aborted) break;
      const started = Date.now();
      await watcher.changed(options.sweepMs);
      if (!signal.aborted && Date.now() - started < options.sweepMs) await new Promise((done) => setTimeout(done, SETTLE_MS));
    }
  } finally {
    watcher.close();
  }
}
