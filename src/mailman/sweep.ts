/**
 * One sweep of the mailman: the work passed in (the bridges' sync), then every mailbox looked at (unread mail, role
 * queues counted to their members), each agent's fresh mail framed through its channel (channels.ts), the typed
 * reminders due typed (reminders.ts), and the state `mailman status` shows written. One mailbox that cannot be read
 * is noted and skipped; it never stops the others.
 */
import { roleAddress } from "../mail/addresses.ts";
import { isAgentMailbox } from "../mail/bounce.ts";
import { isUrgent } from "../mail/fields.ts";
import type { Message } from "../mail/message.ts";
import { frameMail } from "./channels.ts";
import { SWEEP_NOTED_MS, writeMailmanState } from "./files.ts";
import { projectPanes } from "./panes.ts";
import { land, typeReminder, type Typed } from "./reminders.ts";
import { wantsReminder, type MailboxView } from "./rules.ts";
import { explain, note, quoted, typingFor, type Run } from "./run-state.ts";

/** Urgent mail first, then the rest, each in the order given (oldest first). */
const urgentFirst = (messages: Message[]): Message[] => [...messages.filter(isUrgent), ...messages.filter((message) => !isUrgent(message))];

/** A problem that is not one agent's, logged once until it changes or clears. */
function reportOnce(run: Run, key: string, line: string): void {
  if (run.problems.get(key) === line) return;
  run.problems.set(key, line);
  run.options.log(line);
}

/** The mailbox as the mailman sees it, or null when it cannot be read (reported once, then skipped). */
async function look(run: Run, name: string, roleUnread: number): Promise<MailboxView | null> {
  const { store } = run.options;
  try {
    const status = await store.status(name);
    // On a store shared by hosts, an agent registered on another host is that host's mailman's to remind.
    if (store.sharedAcrossHosts && status?.host !== undefined && status.host !== run.host) {
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

/**
 * Puts fresh mail in front of each agent through its agent CLI's channel, then types the due reminders, the last
 * resort, never into an agent that has a channel of its own, into the panes that may take them, and sees that they land.
 */
async function putInFront(run: Run, { due, fresh }: Found): Promise<void> {
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
      if (await frameMail(run, view, messages, panes)) reached.add(view.name);
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
export async function sweep(run: Run): Promise<void> {
  await run.options.eachSweep?.();
  const found = await lookAtMailboxes(run);
  run.paceDue = null;
  if (found.due.length > 0 || found.fresh.length > 0) await putInFront(run, found);
  const now = new Date();
  const noted = run.state.last_sweep_at ? Date.parse(run.state.last_sweep_at) : Number.NEGATIVE_INFINITY;
  if (now.getTime() - noted >= SWEEP_NOTED_MS) run.state.last_sweep_at = now.toISOString();
  writeMailmanState(run.options.root, run.state);
}
