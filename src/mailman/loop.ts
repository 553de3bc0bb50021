import { AgentmailError } from "../mail/errors.ts";
import { displayName } from "../mail/names.ts";
import { reminderStillTyped, reminderText, urgentReminderText, targetPanes, wantsReminder, type MailboxView } from "./rules.ts";
import type { ForegroundView } from "../tmux/foreground.ts";
import { foregroundRefusal, paneAgent, typingRefusal } from "./typing-gate.ts";
import { countedNotices } from "../mail/arrival.ts";
import { isUrgent } from "../mail/fields.ts";
import { roleAddress } from "../mail/addresses.ts";
import { writeMailmanState, type MailmanState, type ReminderOutcome } from "./files.ts";
import { agentHost } from "../identity/invocation.ts";
import type { Store } from "../store/store.ts";
import { foregroundOf, lineBeforeCursorNow, listAllPanes, pressEnter, textBeforeCursor, typeLine, type Pane } from "../tmux/windows.ts";

type Env = Record<string, string | undefined>;

export interface MailmanOptions {
  /** Where the mail is. */
  store: Store;
  /** The local mail directory: the mailman's own files and the bridges' configuration. */
  root: string;
  env: Env;
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
}

/** After a change event, wait this long so a burst of messages is counted (and reminded) once. */
const SETTLE_MS = 200;
/** How long a pane gets to take a typed line and Enter before the mailman looks whether it was submitted. */
const SUBMIT_CHECK_MS = 300;

const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

type Landing = "submitted" | "submitted after a second Enter" | "not submitted";

const quoted = (name: string) => `"${displayName(name)}"`;

/** A reminder typed into an agent's panes, and what became of it in each (by pane id). */
interface Typed {
  view: MailboxView;
  text: string;
  panes: Map<string, { pane: Pane; landing: Landing }>;
}

/** A pane with who holds its terminal. */
type SeenPane = Pane & { foreground: ForegroundView | null; agent: string | null };

/** What one mailman keeps between sweeps; every step below reads and updates it. */
interface Run {
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
}

/** An error's text, with what to do when it does not say so itself (ours always do). */
function explain(error: unknown): string {
  if (error instanceof AgentmailError) return error.message;
  const text = error instanceof Error ? error.message : String(error);
  return `${text}; check its owner and mode, or move it out of the store`;
}

/**
 * Why a pane may not be typed into now: the typing gate, asked with the pane's cursor line and who holds its terminal
 * read just before typing (the foreground last, as it changes fastest: a program started or ended).
 */
async function refusalOf(pane: Pane, env: Env): Promise<string | null> {
  const line = await textBeforeCursor(pane, env);
  return typingRefusal({ inMode: pane.inMode, foreground: foregroundOf(pane) }, line);
}

/**
 * Records what became of an agent's reminder. The log gets `line` only when the outcome or its detail changed,
 * so a pane that stays busy is reported once, not on every sweep; a reminder typed is always logged.
 */
function note(run: Run, name: string, outcome: ReminderOutcome, detail: string, line: string | null): void {
  const { state } = run;
  const now = new Date().toISOString();
  const previous = state.agents[name];
  const changed = outcome === "reminded" || previous?.outcome !== outcome || previous.detail !== detail;
  if (!changed) return;
  const lastReminded = outcome === "reminded" ? now : (previous?.last_reminded_at ?? null);
  state.agents[name] = { outcome, detail, since: now, last_reminded_at: lastReminded };
  if (line === null) return;
  run.options.log(line);
  state.last_action = line;
  state.last_action_at = now;
}

/** A problem that is not one agent's, logged once until it changes or clears. */
function reportOnce(run: Run, key: string, line: string): void {
  if (run.problems.get(key) === line) return;
  run.problems.set(key, line);
  run.options.log(line);
}

/**
 * Types the reminder into the agent's panes that may take it, and returns what was typed (to be checked once the
 * panes have had time to submit it); an agent with nothing typed gets its outcome noted here.
 */
async function typeReminder(run: Run, view: MailboxView, panes: Pane[]): Promise<Typed | null> {
  const { env } = run.options;
  const name = quoted(view.name);
  const named = panes.filter((pane) => pane.windowName === view.name);
  if (named.length === 0) {
    note(run, view.name, "no_window", "no window with that name", `dropped ${name}: no window with that name`);
    return null;
  }
  const seen: SeenPane[] = named.map((pane) => {
    const foreground = foregroundOf(pane);
    return { ...pane, foreground, agent: paneAgent(foreground) };
  });
  const targets = targetPanes(view, seen);
  if (targets.length === 0) {
    const detail = seen.map((pane) => `pane ${pane.paneId} ${foregroundRefusal(pane.foreground)}`).join("; ");
    const rule = "reminders are typed only into an agent CLI (claude, codex, gemini) at its prompt; will retry";
    note(run, view.name, "no_agent_pane", detail, `not reminding ${name}: ${detail}; ${rule}`);
    return null;
  }
  const reminder = view.urgent ? urgentReminderText(view.unread, view.urgent) : reminderText(view.unread);
  const reasons: string[] = [];
  const typed: Typed = { view, text: reminder, panes: new Map() };
  for (const pane of targets) {
    const refusal = await refusalOf(pane, env);
    if (refusal) reasons.push(`pane ${pane.paneId} ${refusal}`);
    else if (await typeLine(pane.paneId, typed.text, env)) typed.panes.set(pane.paneId, { pane, landing: "not submitted" });
    else reasons.push(`pane ${pane.paneId} vanished`);
  }
  if (typed.panes.size > 0) return typed;
  const detail = reasons.join("; ");
  note(run, view.name, "waiting", detail, `waiting to remind ${name}: ${detail}; will retry`);
  return null;
}

/**
 * A reminder lands only once it is submitted. After typing every reminder of a sweep (and Enter), look whether
 * each input line still holds its reminder; if so, press Enter once more; look again after the same wait. A
 * reminder still there is given up for this interval: typing it again would only lengthen the line.
 */
async function land(run: Run, typed: readonly Typed[]): Promise<void> {
  const { env, intervalMs } = run.options;
  let pending = typed.flatMap((each) => [...each.panes.values()].map((typing) => ({ text: each.text, typing })));
  for (const landing of ["submitted", "submitted after a second Enter"] as const) {
    if (pending.length === 0) break;
    await pause(SUBMIT_CHECK_MS);
    const still: typeof pending = [];
    for (const entry of pending) {
      const line = await lineBeforeCursorNow(entry.typing.pane.paneId, env);
      if (line === null || !reminderStillTyped(line, entry.text)) entry.typing.landing = landing;
      else still.push(entry);
    }
    if (landing === "submitted") {
      // The second Enter is a keystroke too: only while an agent CLI still holds the terminal alone.
      for (const { typing } of still) if (foregroundRefusal(foregroundOf(typing.pane)) === null) await pressEnter(typing.pane.paneId, env);
    }
    pending = still;
  }
  for (const { view, panes: landed } of typed) {
    const name = quoted(view.name);
    run.lastReminded.set(view.name, Date.now());
    const unsent = [...landed].filter(([, { landing }]) => landing === "not submitted").map(([paneId]) => paneId);
    const sent = [...landed].filter(([, { landing }]) => landing !== "not submitted");
    if (sent.length === 0) {
      const detail = `pane ${unsent.join(", ")} still shows the reminder on its input line after a second Enter`;
      const line = `reminder for ${name} not submitted: ${detail}; will try again in ${intervalMs / 1000} s`;
      note(run, view.name, "not_submitted", detail, line);
      continue;
    }
    const where = sent.map(([paneId, { landing }]) => (landing === "submitted" ? paneId : `${paneId} (${landing})`)).join(", ");
    run.state.reminders += sent.length;
    // Their senders' `sent` says notified (typed); a record that cannot be written only leaves them at stored.
    await run.options.store.recordDelivery(view.name, countedNotices(view.ids ?? [], "typed", new Date(), sent[0]![0])).catch(() => {});
    note(run, view.name, "reminded", `in ${where}`, `reminded ${name} in ${where} (${view.unread} unread)`);
  }
}

/** The mailbox as the mailman sees it, or null when it cannot be read (reported once, then skipped). */
async function look(run: Run, name: string, roleUnread: number): Promise<MailboxView | null> {
  const { store } = run.options;
  try {
    const status = await store.status(name);
    // On a store shared by hosts, an agent registered on another host is that host's mailman's to remind.
    if (store.engine !== "file" && status?.host !== undefined && status.host !== run.host) {
      delete run.state.agents[name];
      return null;
    }
    const unread = (await store.countUnread(name)) + roleUnread;
    return { name, unread, status: status?.status ?? null, statusPane: status?.pane ?? null };
  } catch (error) {
    const detail = explain(error);
    note(run, name, "unreadable", detail, `skipping the mailbox of ${quoted(name)}: ${detail}`);
    return null;
  }
}

/** Unread role mail per member: each member that is ready is reminded of it (one of them will take it). */
async function roleMailByMember(run: Run): Promise<Map<string, number>> {
  const { store } = run.options;
  const byMember = new Map<string, number>();
  let roles: Map<string, string[]>;
  try {
    roles = await store.memberships("roles");
  } catch (error) {
    reportOnce(run, "roles", `cannot read the roles: ${explain(error)}`);
    return byMember;
  }
  for (const [role, members] of roles) {
    let unread: number;
    try {
      unread = await store.countUnread(roleAddress(role));
    } catch (error) {
      reportOnce(run, `role:${role}`, `skipping the queue of role ${quoted(role)}: ${explain(error)}`);
      continue;
    }
    run.problems.delete(`role:${role}`);
    if (unread > 0) for (const member of members) byMember.set(member, (byMember.get(member) ?? 0) + unread);
  }
  run.problems.delete("roles");
  return byMember;
}

/** The mailboxes due a reminder now; every other agent's outcome is noted or cleared. */
async function dueReminders(run: Run): Promise<MailboxView[]> {
  const { store, intervalMs } = run.options;
  const { state, lastReminded } = run;
  const roleMail = await roleMailByMember(run);
  const names = [...new Set([...(await store.mailboxes()), ...roleMail.keys()])].sort();
  for (const name of Object.keys(state.agents)) if (!names.includes(name)) delete state.agents[name];
  const due: MailboxView[] = [];
  for (const name of names) {
    const view = await look(run, name, roleMail.get(name) ?? 0);
    if (view === null) continue;
    if (view.unread === 0) {
      lastReminded.delete(name);
      if (state.agents[name] && state.agents[name].outcome !== "reminded") delete state.agents[name];
      continue;
    }
    if (view.status !== null && view.status !== "ready") note(run, name, "not_ready", `status ${view.status}`, null);
    else if (wantsReminder(view, lastReminded.get(name), Date.now(), intervalMs)) {
      // Counted only for a reminder about to be typed: it reads the whole mailbox, where countUnread starts at the cursor.
      const unread = await store.unread(name);
      view.urgent = unread.filter(isUrgent).length;
      view.ids = unread.map((message) => message.id);
      due.push(view);
    }
  }
  return due;
}

/** Types the reminders that are due into the panes that may take them, and sees that they land. */
async function remind(run: Run, due: readonly MailboxView[]): Promise<void> {
  const panes = await listAllPanes(run.options.env);
  if (panes === null) {
    if (!run.tmuxSilent) run.options.log("tmux is not answering; will retry");
    run.tmuxSilent = true;
    return;
  }
  run.tmuxSilent = false;
  const typed: Typed[] = [];
  for (const view of due) {
    try {
      const reminder = await typeReminder(run, view, panes);
      if (reminder) typed.push(reminder);
    } catch (error) {
      note(run, view.name, "waiting", explain(error), `reminding ${quoted(view.name)} failed: ${explain(error)}; will retry`);
    }
  }
  await land(run, typed);
}

/** One sweep: the work passed in, then every mailbox looked at, the due reminders typed, the state written. */
async function sweep(run: Run): Promise<void> {
  await run.options.eachSweep?.();
  const due = await dueReminders(run);
  if (due.length > 0) await remind(run, due);
  writeMailmanState(run.options.root, run.state);
}

/**
 * The mailman: watches the store (and sweeps it periodically, so a missed event or a dead watcher never silences
 * it) and types a fixed reminder into the pane of each agent that has unread mail and is ready (or never said).
 * Each mailbox is handled on its own: one that cannot be read is reported once and skipped, never stopping the rest.
 */
export async function runMailman(options: MailmanOptions): Promise<void> {
  const { store, log, signal } = options;
  const run: Run = {
    options,
    host: agentHost(options.env),
    lastReminded: new Map(),
    // Keyed by window names, which are hostile: no prototype, so `__proto__` or `constructor` is just a name.
    state: { last_action: null, last_action_at: null, reminders: 0, agents: Object.create(null) },
    tmuxSilent: false,
    problems: new Map(),
  };
  // Every mailbox, role queues included, so role mail wakes the mailman like any other.
  const watch = await store.watch(null);
  signal.addEventListener("abort", () => watch.close());
  log(`watching ${store.location}`);
  let lastFailure: string | null = null;
  try {
    while (!signal.aborted) {
      try {
        await sweep(run);
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
      await watch.changed(options.sweepMs);
      if (!signal.aborted && Date.now() - started < options.sweepMs) await new Promise((done) => setTimeout(done, SETTLE_MS));
    }
  } finally {
    watch.close();
  }
}
