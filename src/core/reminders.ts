/**
 * The mailman's rules, free of I/O: who gets a reminder now, into which pane, and with what text. The text is
 * fixed: it never carries a message body, a sender or a window name, since it is typed into a live pane; and it
 * holds no shell metacharacter (`;`, `&`, `|`, `$`, quotes…), so typed into a shell it runs nothing.
 */
export function reminderText(unread: number): string {
  return `You have ${unread} unread agentmail message${unread === 1 ? "" : "s"}. Run agentmail receive to read ${unread === 1 ? "it" : "them"}.`;
}

/**
 * The reminder when some of the unread mail is urgent: counts both (same rules as reminderText: fixed words and
 * numbers only), so an agent knows to stop and read now.
 */
export function urgentReminderText(unread: number, urgent: number): string {
  return `agentmail: ${unread} unread, ${urgent} urgent. Run agentmail receive.`;
}

export interface MailboxView {
  name: string;
  unread: number;
  /** How many of the unread messages are urgent (0 when not counted). */
  urgent?: number;
  /** The agent's status, or null when it never set one (treated as ready). */
  status: string | null;
  /** The pane that last set the status: the most precise target there is. */
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
}

/**
 * The panes to remind: the pane that set the status if it still sits in a window of that name; otherwise the
 * active pane of each window with that name.
 */
export function targetPanes<P extends PaneView>(view: MailboxView, panes: readonly P[]): P[] {
  const named = panes.filter((pane) => pane.windowName === view.name);
  const statusPane = named.find((pane) => pane.paneId === view.statusPane);
  if (statusPane) return [statusPane];
  return named.filter((pane) => pane.active);
}

/** Characters a prompt commonly ends with: the shell's `$ # %`, and `>`-style prompts of agent TUIs. */
const PROMPT_END = /[$#%>❯›»:λ]$/u;

/**
 * Whether the cursor line looks like an empty prompt, so typing will not land on a half-typed command: the text
 * before the cursor is blank or ends with a prompt character (a heuristic; it errs on the side of waiting).
 */
export function looksIdle(textBeforeCursor: string): boolean {
  const trimmed = textBeforeCursor.replace(/[\s\u00a0│|]+$/u, "");
  return trimmed === "" || PROMPT_END.test(trimmed);
}
