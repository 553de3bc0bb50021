/**
 * The mailman's rules, free of I/O: who gets a reminder now, into which pane, and with what text. Whether a pane may
 * be typed into at all is not decided here but by the one typing rule, mailman/typing-gate.ts.
 */

/**
 * The reminder: fixed, so it never carries a message body, a sender or a window name into a live pane; no shell
 * metacharacter (`;`, `&`, `|`, `$`, quotes…), so typed into a shell it runs nothing; and it starts with
 * `agentmail:`, so a prompt that reads one letter takes no `y` from it. More counts (", 1 urgent") go before the
 * full stop.
 */
export function reminderText(unread: number): string {
  return `agentmail: ${unread} unread message${unread === 1 ? "" : "s"}. Run agentmail receive.`;
}

/**
 * The reminder when some of the unread mail is urgent: counts both (same rules as reminderText: fixed words and
 * numbers only), so an agent knows to stop and read now.
 */
export function urgentReminderText(unread: number, urgent: number): string {
  return `agentmail: ${unread} unread, ${urgent} urgent. Run agentmail receive.`;
}

/**
 * Whether a typed reminder still sits on the input line, unsent: the text before the cursor ends with the
 * reminder, or (the line wrapped) is the reminder's tail. After a submitted line the cursor is on a fresh prompt or
 * a blank line, which ends with neither.
 */
export function reminderStillTyped(textBeforeCursor: string, reminder: string): boolean {
  const line = textBeforeCursor.replace(/\s+$/u, "");
  if (line === "") return false;
  // A tail too short ("." alone) says nothing: a prompt could end like that.
  return line.endsWith(reminder) || (line.length >= 4 && reminder.endsWith(line));
}

export interface MailboxView {
  name: string;
  unread: number;
  /** How many of the unread messages are urgent (0 when not counted). */
  urgent?: number;
  /** The ids of the agent's own unread messages, when read (a reminder notifies them: mail/arrival.ts). */
  ids?: string[];
  /** The agent's status, or null when it never set one (treated as ready). */
  status: string | null;
  /** The pane the agent registered (the one that last set its status), or null when it never registered. */
  statusPane: string | null;
}

export function wantsReminder(view: MailboxView, lastRemindedAt: number | undefined, now: number, intervalMs: number): boolean {
  if (view.unread === 0) return false;
  if (view.status !== null && view.status !== "ready") return false;
  return lastRemindedAt === undefined || now - lastRemindedAt >= intervalMs;
}

export interface PaneView {
  paneId: string;
  windowId: string;
  windowName: string;
  active: boolean;
  /** The agent CLI that holds this pane's terminal (typing-gate's paneAgent), or null. */
  agent: string | null;
}

/**
 * The panes to remind: in each window with the agent's name, the panes an agent CLI holds (only the active one if it
 * is one of them), or the registered pane alone when it is one of those. A registration chooses among agent CLIs'
 * panes; it never makes another pane one: the agent may have exited and left its shell there.
 */
export function targetPanes<P extends PaneView>(view: MailboxView, panes: readonly P[]): P[] {
  const agents = panes.filter((pane) => pane.windowName === view.name && pane.agent !== null);
  const registered = agents.find((pane) => pane.paneId === view.statusPane);
  if (registered) return [registered];
  const targets: P[] = [];
  for (const windowId of new Set(agents.map((pane) => pane.windowId))) {
    const inWindow = agents.filter((pane) => pane.windowId === windowId);
    const active = inWindow.find((pane) => pane.active);
    targets.push(...(active ? [active] : inWindow));
  }
  return targets;
}
