/**
 * May this pane be typed into? The one rule for every keystroke agentmail sends into a pane (the mailman's typed
 * reminders, the opt-in last resort for an agent CLI without a channel of its own): only into a known agent CLI
 * (Claude Code, Codex CLI, Gemini CLI) that holds the pane's terminal and sits at its prompt. Pure: the caller reads
 * the pane (tmux) and its terminal's foreground process group (/proc, src/tmux/foreground.ts) and asks here.
 *
 * What runs decides, never what a pane once said: a registration (`status`, `onboard`, the hooks) names the pane an
 * agent was in, and the agent may have exited and left its shell there. Nor what a program calls itself alone: tmux's
 * `#{pane_current_command}` is the foreground program's argv[0], which `exec -a claude bash` sets. A shell, a REPL, a
 * heredoc being typed, an editor, a pager, or an agent CLI with a program of its own reading the terminal would each
 * take a typed line as input of their own.
 */

import { displayName } from "../mail/names.ts";
import { agentCli, baseName, type AgentCli, type ForegroundView, type ProcessView } from "../tmux/foreground.ts";

/** What the gate needs to know of a pane. */
export interface PaneFacts {
  /** In copy mode or another tmux mode: keys go to tmux, not to the program. */
  inMode: boolean;
  /** Its terminal's foreground process group, or null when it cannot be read (off Linux, or the processes gone). */
  foreground: ForegroundView | null;
}

/** The agent CLI that holds a pane's terminal (the leader of its foreground process group), or null. */
export function paneAgent(foreground: ForegroundView | null): AgentCli | null {
  return foreground === null ? null : agentCli(foreground.leader);
}

/** A process's name for a message: what it calls itself, free text, so on one line with control characters escaped. */
const shownName = (process: ProcessView): string => displayName(process.comm || baseName(process.argv[0] ?? "")) || "an unnamed program";

/**
 * Why keys may not go to what runs in the pane, or null when an agent CLI holds the terminal alone: no readable
 * foreground, a foreground that is no agent CLI, or an agent CLI with another program reading the terminal too.
 */
export function foregroundRefusal(foreground: ForegroundView | null): string | null {
  if (foreground === null) return "has no foreground process that can be read (agentmail reads /proc, on Linux only)";
  const agent = agentCli(foreground.leader);
  if (agent === null) return `runs ${shownName(foreground.leader)}, not an agent CLI`;
  const other = foreground.readers.find((reader) => agentCli(reader) === null);
  return other ? `runs ${shownName(other)} in the foreground of ${agent}` : null;
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
 * Characters an empty prompt ends with: the `>`-style prompts of agent TUIs (`> ❯ › » λ`) and `$ # %`. Not `:`,
 * which ends questions (`Name:`, `[y/N]:`) far more often than prompts.
 */
const PROMPT_END = /[$#%>❯›»λ]$/u;

/**
 * Whether the cursor line of an agent CLI looks like its empty prompt, so typing will not land on a half-typed
 * line: the text before the cursor ends with a prompt character, or is blank (an agent TUI may leave the terminal's
 * cursor below its input box). A heuristic that errs on the side of waiting.
 */
export function looksIdle(textBeforeCursor: string): boolean {
  const line = trimLine(textBeforeCursor);
  if (looksLikeQuestion(line)) return false;
  return line === "" || PROMPT_END.test(line);
}

/**
 * Why a pane may not be typed into now, or null when it may: the whole rule. `textBeforeCursor` is the pane's
 * cursor line up to the cursor, or null when the pane could not be read (it vanished).
 */
export function typingRefusal(pane: PaneFacts, textBeforeCursor: string | null): string | null {
  const foreground = foregroundRefusal(pane.foreground);
  if (foreground) return foreground;
  if (pane.inMode) return "is in copy mode";
  if (textBeforeCursor === null) return "vanished";
  if (looksLikeQuestion(textBeforeCursor)) return "shows a question or password prompt";
  if (!looksIdle(textBeforeCursor)) return "has a half-typed line";
  return null;
}
