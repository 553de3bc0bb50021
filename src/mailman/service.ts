import { isUrgent } from "../core/mail-fields.ts";
import { looksIdle, reminderText, targetPanes, urgentReminderText, wantsReminder, type MailboxView } from "../core/reminders.ts";
import { countUnread, listMailboxes } from "../store/mailbox.ts";
import { unreadMail } from "../store/mail-view.ts";
import { writeMailmanState, type MailmanState } from "../store/mailman-files.ts";
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
  log: (line: string) => void;
  signal: AbortSignal;
}

/** After a change event, wait this long so a burst of messages is counted (and reminded) once. */
const SETTLE_MS = 200;

/**
 * The mailman: watches the store (and sweeps it periodically, so a missed event or a dead watcher never silences
 * it) and types a fixed reminder into the pane of each agent that has unread mail and is ready (or never said).
 */
export async function runMailman(options: MailmanOptions): Promise<void> {
  const { root, env, log, signal } = options;
  const lastReminded = new Map<string, number>();
  const waiting = new Map<string, string>();
  const state: MailmanState = { last_action: null, last_action_at: null, reminders: 0 };
  const record = (action: string) => {
    log(action);
    state.last_action = action;
    state.last_action_at = new Date().toISOString();
    writeMailmanState(root, state);
  };
  /** Logs why an agent is waiting only when the reason changes, not on every sweep. */
  const hold = (name: string, reason: string) => {
    if (waiting.get(name) !== reason) log(`${reason}; will retry`);
    waiting.set(name, reason);
  };

  async function remind(view: MailboxView, panes: Pane[]): Promise<void> {
    const targets = targetPanes(view, panes);
    if (targets.length === 0) {
      if (waiting.get(view.name) !== "gone") record(`dropped ${JSON.stringify(view.name)}: no window with that name`);
      waiting.set(view.name, "gone");
      return;
    }
    let reminded = false;
    for (const pane of targets) {
      if (pane.inMode) {
        hold(view.name, `pane ${pane.paneId} of ${JSON.stringify(view.name)} is in copy mode`);
        continue;
      }
      const text = await textBeforeCursor(pane, env);
      if (text === null || !looksIdle(text)) {
        hold(view.name, `pane ${pane.paneId} of ${JSON.stringify(view.name)} has a half-typed line`);
        continue;
      }
      const reminder = view.urgent ? urgentReminderText(view.unread, view.urgent) : reminderText(view.unread);
      if (await typeLine(pane.paneId, reminder, env)) {
        reminded = true;
        state.reminders++;
        record(`reminded ${JSON.stringify(view.name)} in ${pane.paneId} (${view.unread} unread)`);
      } else {
        record(`dropped pane ${pane.paneId} of ${JSON.stringify(view.name)}: it vanished`);
      }
    }
    if (reminded) {
      lastReminded.set(view.name, Date.now());
      waiting.delete(view.name);
    }
  }

  async function sweep(): Promise<void> {
    const due: MailboxView[] = [];
    for (const name of listMailboxes(root)) {
      const unread = countUnread(root, name);
      if (unread === 0) {
        lastReminded.delete(name);
        waiting.delete(name);
        continue;
      }
      const status = readStatus(root, name);
      const view: MailboxView = { name, unread, status: status?.status ?? null, statusPane: status?.pane ?? null };
      if (!wantsReminder(view, lastReminded.get(name), Date.now(), options.intervalMs)) continue;
      // Counted only for a reminder about to be typed: it reads the whole mailbox, where countUnread starts at the cursor.
      view.urgent = unreadMail(root, name).filter(isUrgent).length;
      due.push(view);
    }
    if (due.length === 0) return;
    const panes = await listAllPanes(env);
    if (panes === null) {
      hold("(tmux)", "tmux is not answering");
      return;
    }
    for (const view of due) await remind(view, panes);
  }

  const watcher = watchStore(root, (name) => name.endsWith(".jsonl") || name === ".agents");
  signal.addEventListener("abort", () => watcher.close());
  log(`watching ${root}`);
  try {
    while (!signal.aborted) {
      try {
        await sweep();
      } catch (error) {
        log(`sweep failed: ${error instanceof Error ? error.message : String(error)}`);
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
