/**
 * Typed reminders, the last resort for an agent whose CLI has no channel of its own, and only for the agents that
 * opted in (mailman --typing): a fixed text (rules.ts) typed into the agent's panes that the typing gate allows
 * (typing-gate.ts, asked again just before typing), then Enter; a reminder counts only once it was submitted
 * (looked at after SUBMIT_CHECK_MS, with one more Enter), and its messages' senders then see notified (typed).
 */
import { countedNotices } from "../mail/arrival.ts";
import { foregroundOf, lineBeforeCursorNow, pressEnter, textBeforeCursor, typeLine, type Pane } from "../tmux/windows.ts";
import { panesOf } from "./panes.ts";
import { reminderStillTyped, reminderText, targetPanes, urgentReminderText, type MailboxView } from "./rules.ts";
import { note, quoted, type Run } from "./run-state.ts";
import { foregroundRefusal, typingRefusal } from "./typing-gate.ts";

type Env = Record<string, string | undefined>;

/** How long a pane gets to take a typed line and Enter before the mailman looks whether it was submitted. */
const SUBMIT_CHECK_MS = 300;

const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

type Landing = "submitted" | "submitted after a second Enter" | "not submitted";

/** A reminder typed into an agent's panes, and what became of it in each (by pane id). */
export interface Typed {
  view: MailboxView;
  text: string;
  panes: Map<string, { pane: Pane; landing: Landing }>;
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
 * Types the reminder into the agent's panes that may take it, and returns what was typed (to be checked once the
 * panes have had time to submit it); an agent with nothing typed gets its outcome noted here.
 */
export async function typeReminder(run: Run, view: MailboxView, panes: Pane[]): Promise<Typed | null> {
  const { env } = run.options;
  const name = quoted(view.name);
  const seen = panesOf(panes, view.name);
  if (seen.length === 0) {
    note(run, view.name, "no_window", "no window with that name", `dropped ${name}: no window with that name`);
    return null;
  }
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
export async function land(run: Run, typed: readonly Typed[]): Promise<void> {
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
