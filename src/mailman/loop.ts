import { countedNotices, type DeliveryEvent } from "../mail/arrival.ts";
import { AgentmailError } from "../mail/errors.ts";
import { budgetOf, FRAME_PACE_MS, type Budget } from "../mail/frame.ts";
import type { Message } from "../mail/message.ts";
import { displayName } from "../mail/names.ts";
import type { Found as RouteFound, Route } from "../mail/route.ts";
import { reminderStillTyped, reminderText, urgentReminderText, targetPanes, wantsReminder, type MailboxView } from "./rules.ts";
import type { AgentCli, ForegroundView } from "../tmux/foreground.ts";
import { foregroundRefusal, paneAgent, typingRefusal } from "./typing-gate.ts";
import { isUrgent } from "../mail/fields.ts";
import { roleAddress } from "../mail/addresses.ts";
import { isAgentMailbox } from "../mail/bounce.ts";
import { ADAPTERS } from "./adapters.ts";
import { sessionAlive } from "./claude-inbox.ts";
import { SWEEP_NOTED_MS, writeMailmanState, type MailmanState, type ReminderOutcome } from "./files.ts";
import { NativeDeliveries } from "./native.ts";
import { agentHost } from "../identity/invocation.ts";
import { lastFramed } from "../store/routes-file.ts";
import type { MailWatch, Store } from "../store/store.ts";
import { foregroundOf, lineBeforeCursorNow, pressEnter, textBeforeCursor, typeLine, type Pane } from "../tmux/windows.ts";
import type { ProjectBoundary } from "../identity/projects.ts";
import { projectPanes, routeInPanes } from "./panes.ts";

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

/** How often a mailman with a `done` check asks it while waiting for a change. */
const DONE_CHECK_MS = 1_000;

/** After a change event, wait this long so a burst of messages is counted (and reminded) once. */
const SETTLE_MS = 200;
/** The longest pause between attempts while the store does not answer. */
const RETRY_MOST_MS = 30_000;
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

/** Urgent mail first, then the rest, each in the order given (oldest first). */
const urgentFirst = (messages: Message[]): Message[] => [...messages.filter(isUrgent), ...messages.filter((message) => !isUrgent(message))];

/** A route found into an agent, and the process and pane it was found for. */
interface KnownRoute {
  cli: AgentCli;
  pid: number;
  paneId: string;
  route: Route;
}

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

/** Whether `name` opted into typed reminders (mailman --typing). */
function typingFor(run: Run, name: string): boolean {
  const { typing } = run.options;
  return typing === "all" || (Array.isArray(typing) && (typing as readonly string[]).includes(name));
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
function note(run: Run, name: string, outcome: ReminderOutcome, detail: string, line: string | null, channel?: string | null): void {
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

/** Unread role mail per member (each member is told of it; one of them will take it), and each member's roles. */
async function roleMailByMember(run: Run): Promise<{ unread: Map<string, number>; roles: Map<string, string[]> }> {
  const { store } = run.options;
  const byMember = new Map<string, number>();
  const rolesOf = new Map<string, string[]>();
  let roles: Map<string, string[]>;
  try {
    roles = await store.memberships("roles");
  } catch (error) {
    reportOnce(run, "roles", `cannot read the roles: ${explain(error)}`);
    return { unread: byMember, roles: rolesOf };
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
    if (unread === 0) continue;
    for (const member of members) {
      byMember.set(member, (byMember.get(member) ?? 0) + unread);
      rolesOf.set(member, [...(rolesOf.get(member) ?? []), role]);
    }
  }
  run.problems.delete("roles");
  return { unread: byMember, roles: rolesOf };
}

/** The agent's fresh mail: unread in its mailbox and its roles' queues, and announced by no arrival; urgent first. */
async function freshMail(run: Run, name: string, roles: readonly string[]): Promise<Message[]> {
  const { store } = run.options;
  const fresh: Message[] = [];
  for (const mailbox of [name, ...roles.map(roleAddress)]) {
    if ((await store.countUnread(mailbox)) === 0) continue;
    const announced = await store.announced(mailbox);
    for (const message of await store.unread(mailbox)) if (!announced.has(message.id)) fresh.push(message);
  }
  return urgentFirst(fresh);
}

/** What a sweep found: the agents due a typed reminder, and each agent's fresh mail to frame. */
interface Found {
  due: MailboxView[];
  fresh: { view: MailboxView; messages: Message[] }[];
}

/**
 * Every mailbox looked at: the agents with fresh mail (to frame through their agent CLI's channel), and of those who
 * opted into typing, the ones due a reminder now; every other agent's outcome is noted or cleared.
 */
async function lookAtMailboxes(run: Run): Promise<Found> {
  const { store, intervalMs } = run.options;
  const { state, lastReminded } = run;
  const roleMail = await roleMailByMember(run);
  // Bounces kept for another project's sender wait for its store, no agent (doctor and the sweep's log say so).
  const names = [...new Set([...(await store.mailboxes()).filter(isAgentMailbox), ...roleMail.unread.keys()])].sort();
  for (const name of Object.keys(state.agents)) if (!names.includes(name)) delete state.agents[name];
  const found: Found = { due: [], fresh: [] };
  for (const name of names) {
    const view = await look(run, name, roleMail.unread.get(name) ?? 0);
    if (view === null) continue;
    if (view.unread === 0) {
      lastReminded.delete(name);
      const outcome = state.agents[name]?.outcome;
      if (outcome !== undefined && outcome !== "reminded" && outcome !== "notified") delete state.agents[name];
      continue;
    }
    try {
      const messages = await freshMail(run, name, roleMail.roles.get(name) ?? []);
      if (messages.length > 0) found.fresh.push({ view, messages });
    } catch (error) {
      note(run, name, "unreadable", explain(error), `skipping the mailbox of ${quoted(name)}: ${explain(error)}`);
      continue;
    }
    if (!typingFor(run, name)) continue;
    if (view.status !== null && view.status !== "ready") note(run, name, "not_ready", `status ${view.status}`, null);
    else if (wantsReminder(view, lastReminded.get(name), Date.now(), intervalMs)) {
      // Counted only for a reminder about to be typed: it reads the whole mailbox, where countUnread starts at the cursor.
      const unread = await store.unread(name);
      view.urgent = unread.filter(isUrgent).length;
      view.ids = unread.map((message) => message.id);
      found.due.push(view);
    }
  }
  return found;
}

/** Records why these messages cannot be put in front of their agent now (once per message and reason). */
async function unreachable(run: Run, messages: readonly Message[], reason: string): Promise<void> {
  const at = new Date().toISOString();
  const byMailbox = new Map<string, DeliveryEvent[]>();
  for (const message of messages) {
    const key = `${message.to}\n${message.id}`;
    if (run.unreachableNoted.get(key) === reason) continue;
    run.unreachableNoted.set(key, reason);
    byMailbox.set(message.to, [...(byMailbox.get(message.to) ?? []), { id: message.id, event: "unreachable", at, reason }]);
  }
  for (const [mailbox, events] of byMailbox) await run.options.store.recordDelivery(mailbox, events);
}

/** The route into an agent's CLI in its pane: the one found before while the same process holds the pane, else found afresh. */
async function findRoute(run: Run, name: string, cli: AgentCli, pid: number, paneId: string): Promise<RouteFound> {
  const known = run.routes.get(name);
  if (known && known.cli === cli && known.pid === pid && known.paneId === paneId && sessionAlive(known.route.pid, known.route.procStart))
    return { route: known.route };
  const found = await ADAPTERS[cli].find(pid, paneId, run.options.env);
  if (found.route) run.routes.set(name, { cli, pid, paneId, route: found.route });
  else run.routes.delete(name);
  return found;
}

/**
 * Frames an agent's fresh mail through its agent CLI's own channel in its pane. Returns whether the agent has such
 * a channel (then it is never typed into); otherwise records why not, and its hooks bring the mail.
 */
async function frame(run: Run, view: MailboxView, messages: Message[], panes: Pane[]): Promise<boolean> {
  const { root, log } = run.options;
  const name = quoted(view.name);
  const typing = typingFor(run, view.name);
  const named = panes.filter((pane) => pane.windowName === view.name);
  if (named.length === 0) {
    await unreachable(run, messages, "no tmux window of this project has its name");
    run.native.forget(view.name);
    if (!typing) note(run, view.name, "no_window", "no window with that name", `dropped ${name}: no window with that name`);
    return false;
  }
  const seen: SeenPane[] = named.map((pane) => {
    const foreground = foregroundOf(pane);
    return { ...pane, foreground, agent: paneAgent(foreground) };
  });
  const target = targetPanes(view, seen)[0];
  if (!target) {
    const detail = seen.map((pane) => `pane ${pane.paneId} ${foregroundRefusal(pane.foreground)}`).join("; ");
    await unreachable(run, messages, `no agent CLI runs in its window (${detail}); nothing is typed there`);
    run.native.forget(view.name);
    if (!typing) note(run, view.name, "no_agent_pane", detail, `not framing mail for ${name}: ${detail}; no agent CLI there; will retry`);
    return false;
  }
  let found = await findRoute(run, view.name, target.agent as AgentCli, target.foreground!.leader.pid!, target.paneId);
  const refusal = found.route ? run.native.refusal(found.route) : null;
  if (refusal !== null) found = { route: null, none: { reason: refusal, hooks: true } };
  if (found.route === null) {
    await unreachable(run, messages, found.none.reason);
    run.native.forget(view.name);
    if (!typing) note(run, view.name, "hooks", found.none.reason, `no channel into ${name}: ${found.none.reason}`, null);
    return false;
  }
  const due = lastFramed(root, view.name) + FRAME_PACE_MS;
  if (due > Date.now()) {
    run.paceDue = run.paceDue === null ? due : Math.min(run.paceDue, due);
    return true;
  }
  const delivered = await run.native.deliver(view.name, found.route, messages);
  // A frame that could only list mail waits for the burst to end (mail/arrival-window.ts).
  if (delivered.due !== undefined) {
    run.paceDue = run.paceDue === null ? delivered.due : Math.min(run.paceDue, delivered.due);
    return true;
  }
  if (delivered.channel === null) {
    run.routes.delete(view.name);
    note(run, view.name, "waiting", delivered.detail, `could not frame mail for ${name}: ${delivered.detail}; will retry`);
    return true;
  }
  const count = `${delivered.carried.length} message${delivered.carried.length === 1 ? "" : "s"}`;
  const detail = `${count} via ${delivered.channel} in ${found.route.pane} (${delivered.detail})`;
  run.state.frames = (run.state.frames ?? 0) + 1;
  const line = `framed ${count} for ${name} via ${delivered.channel} in ${found.route.pane}`;
  // A receipt may have come before the send returned: then the state says held, and stays so.
  if (delivered.held) log(line);
  else note(run, view.name, "notified", detail, line, delivered.channel);
  return true;
}

/**
 * Puts fresh mail in front of each agent through its agent CLI's channel, then types the due reminders, the last
 * resort, never into an agent that has a channel of its own, into the panes that may take them, and sees that they land.
 */
async function deliver(run: Run, { due, fresh }: Found): Promise<void> {
  const panes = await projectPanes(run.options.env, run.options.project);
  if (panes === null) {
    if (!run.tmuxSilent) run.options.log("tmux is not answering; will retry");
    run.tmuxSilent = true;
    return;
  }
  run.tmuxSilent = false;
  const reached = new Set<string>();
  for (const { view, messages } of fresh) {
    try {
      if (await frame(run, view, messages, panes)) reached.add(view.name);
    } catch (error) {
      note(run, view.name, "waiting", explain(error), `framing mail for ${quoted(view.name)} failed: ${explain(error)}; will retry`);
    }
  }
  const typed: Typed[] = [];
  for (const view of due) {
    if (reached.has(view.name)) continue;
    try {
      const reminder = await typeReminder(run, view, panes);
      if (reminder) typed.push(reminder);
    } catch (error) {
      note(run, view.name, "waiting", explain(error), `reminding ${quoted(view.name)} failed: ${explain(error)}; will retry`);
    }
  }
  await land(run, typed);
}

/** One sweep: the work passed in, then every mailbox looked at, fresh mail framed and due reminders typed, the state written. */
async function sweep(run: Run): Promise<void> {
  await run.options.eachSweep?.();
  const found = await lookAtMailboxes(run);
  run.paceDue = null;
  if (found.due.length > 0 || found.fresh.length > 0) await deliver(run, found);
  const now = new Date();
  const noted = run.state.last_sweep_at ? Date.parse(run.state.last_sweep_at) : Number.NEGATIVE_INFINITY;
  if (now.getTime() - noted >= SWEEP_NOTED_MS) run.state.last_sweep_at = now.toISOString();
  writeMailmanState(run.options.root, run.state);
}

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

/**
 * The routes an earlier mailman kept for `send` are kept only while they lead into this project's agent of that name
 * (an earlier version chose panes of any project, and pane ids repeat across tmux servers); the rest are forgotten
 * before `send` can use them again. Without tmux to ask, nothing can be checked and every route is forgotten.
 */
async function keepRoutesInProject(run: Run): Promise<void> {
  const panes = await projectPanes(run.options.env, run.options.project);
  run.native.keepRoutes((agent, route) => panes !== null && routeInPanes(agent, route, panes));
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
  const run: Run = {
    options,
    host: agentHost(options.env),
    lastReminded: new Map(),
    // Keyed by window names, which are hostile: no prototype, so `__proto__` or `constructor` is just a name.
    state: { last_action: null, last_action_at: null, reminders: 0, agents: Object.create(null) },
    tmuxSilent: false,
    problems: new Map(),
    native: new NativeDeliveries({
      store,
      root: options.root,
      budget: options.budget ?? budgetOf(options.env),
      log,
      report: (name, outcome, detail) => {
        note(run, name, outcome, detail, null, "claude-inbox");
        writeMailmanState(options.root, run.state);
      },
    }),
    routes: new Map(),
    unreachableNoted: new Map(),
    paceDue: null,
  };
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
