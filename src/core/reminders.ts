/**
 * The mailman's rules, free of I/O: who gets a reminder now, into which pane, whether that pane may be typed into,
 * and with what text. Keystrokes go only into panes that belong to agents: a pane is an agent's when the agent
 * registered it (status, onboard, the hooks and the plugin write the pane into the store) or when its foreground
 * program is a known agent CLI.
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

/**
 * The agent CLIs known by their program. tmux shows a pane's foreground program (`#{pane_current_command}`):
 * Claude Code sets its process title to `claude`; Codex from npm and Gemini CLI are node scripts (`node …/codex`,
 * `node …/gemini`), shown as `node`, so for an interpreter the script's name counts.
 */
const AGENT_PROGRAMS = new Set(["claude", "codex", "gemini"]);
const INTERPRETERS = new Set(["node", "nodejs", "bun", "deno"]);

export const isInterpreter = (command: string): boolean => INTERPRETERS.has(command);

const baseName = (path: string): string => path.slice(path.lastIndexOf("/") + 1);

/**
 * The known agent CLI a pane runs, or null: its foreground command itself, or, for an interpreter, the script it
 * runs (the first argument after the interpreter's own options) when its command line is known.
 */
export function agentProgram(currentCommand: string, commandLine: readonly string[] | null): string | null {
  if (AGENT_PROGRAMS.has(currentCommand)) return currentCommand;
  if (!isInterpreter(currentCommand) || !commandLine) return null;
  const script = commandLine.slice(1).find((arg) => !arg.startsWith("-"));
  const name = script === undefined ? "" : baseName(script).replace(/\.[cm]?js$/, "");
  return AGENT_PROGRAMS.has(name) ? name : null;
}

export interface PaneView {
  paneId: string;
  windowId: string;
  windowName: string;
  active: boolean;
  /** The known agent CLI in the foreground of this pane, or null. */
  agent: string | null;
}

/**
 * The panes to remind. The registered pane, if it still sits in a window of that name. Otherwise, in each window of
 * that name, the panes running a known agent CLI (only the active one if it is one of them); with `allPanes`, the
 * active pane of each such window whatever it runs.
 */
export function targetPanes<P extends PaneView>(view: MailboxView, panes: readonly P[], allPanes = false): P[] {
  const named = panes.filter((pane) => pane.windowName === view.name);
  const registered = named.find((pane) => pane.paneId === view.statusPane);
  if (registered) return [registered];
  if (allPanes) return named.filter((pane) => pane.active);
  const targets: P[] = [];
  for (const windowId of new Set(named.map((pane) => pane.windowId))) {
    const agents = named.filter((pane) => pane.windowId === windowId && pane.agent !== null);
    const active = agents.find((pane) => pane.active);
    targets.push(...(active ? [active] : agents));
  }
  return targets;
}

/** Why a pane may not be typed into before its line is read, or null when the line decides. */
export function paneRefusal(pane: { inMode: boolean; alternateScreen: boolean; agent: string | null }): string | null {
  if (pane.inMode) return "is in copy mode";
  if (pane.alternateScreen && pane.agent === null) return "shows a full-screen program (alternate screen)";
  return null;
}

/** `[y/N]`, `(yes/no)`, `(Y/n)`, `[yes/no/[fingerprint]]`: a choice between yes and no. */
const YES_NO = /[[(]\s*(y|yes|n|no)\s*\/\s*(y|yes|n|no)\b/i;
/** A secret being asked for: `Password:`, `Password for 'https://…':`, `Enter passphrase for key …:`, `PIN:`. */
const SECRET = /\b(password|passphrase|passcode|pin|otp|one-time code|verification code)\b/i;

const trimLine = (text: string): string => text.replace(/[\s\u00a0│|]+$/u, "");

/**
 * Whether the cursor line looks like a question or a password prompt: it ends with `?` (possibly then `:` or `>`),
 * offers a yes/no choice, or asks for a secret and ends like an input prompt. Case-insensitive. Such a line is never
 * typed into, whatever else is true: a reminder would answer it.
 */
export function looksLikeQuestion(textBeforeCursor: string): boolean {
  const line = trimLine(textBeforeCursor);
  if (/\?[\s:>]*$/.test(line) || YES_NO.test(line)) return true;
  return SECRET.test(line) && /[:?]$/.test(line);
}

/**
 * Characters an empty prompt ends with: the shell's `$ # %`, and the `>`-style prompts of agent TUIs. Not `:`,
 * which ends questions (`Name:`, `[y/N]:`) far more often than prompts.
 */
const PROMPT_END = /[$#%>❯›»λ]$/u;

/**
 * Whether the cursor line looks like an empty prompt, so typing will not land on a half-typed command or in a
 * program that reads raw input: the text before the cursor ends with a prompt character. A blank line counts only
 * for a known agent CLI, whose TUI may leave the terminal's cursor below its input box. A heuristic that errs on the
 * side of waiting.
 */
export function looksIdle(textBeforeCursor: string, isAgent: boolean): boolean {
  const line = trimLine(textBeforeCursor);
  if (looksLikeQuestion(line)) return false;
  return line === "" ? isAgent : PROMPT_END.test(line);
}
