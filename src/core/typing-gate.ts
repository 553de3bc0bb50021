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

import { displayName } from "./names.ts";

/** A process as /proc shows it. */
export interface ProcessView {
  /** Its pid, where its cwd and environment are read (delivery finds the agent CLI's own channel from them). */
  pid?: number;
  /** The executable file it runs (`/proc/PID/exe`), which the process cannot rename; null when unreadable. */
  exe: string | null;
  /** Its command line (`/proc/PID/cmdline`), which a process may rewrite (its process title). */
  argv: readonly string[];
  /** Its short name (`/proc/PID/comm`). */
  comm: string;
}

/** Who holds a pane's terminal: its foreground process group. */
export interface ForegroundView {
  /** The group's leader: the program the terminal was handed to. */
  leader: ProcessView;
  /**
   * The group's other processes whose standard input is the pane's terminal: they read the keys too. Looked for only
   * when the leader is an agent CLI (otherwise the pane is refused whoever reads).
   */
  readers: readonly ProcessView[];
}

/** What the gate needs to know of a pane. */
export interface PaneFacts {
  /** In copy mode or another tmux mode: keys go to tmux, not to the program. */
  inMode: boolean;
  /** Its terminal's foreground process group, or null when it cannot be read (off Linux, or the processes gone). */
  foreground: ForegroundView | null;
}

/** The agent CLIs agentmail knows: what may be typed into, and what has a delivery adapter (src/delivery). */
export type AgentCli = "claude" | "codex" | "gemini";
const AGENT_CLIS = new Set<string>(["claude", "codex", "gemini"]);
const isAgentCli = (name: string): name is AgentCli => AGENT_CLIS.has(name);
/** Agent CLIs that are scripts run by one of these: Codex from npm (`node …/codex.js`), Gemini CLI (`node …/gemini`). */
const INTERPRETERS = new Set(["node", "nodejs", "bun", "deno"]);

const baseName = (path: string): string => path.slice(path.lastIndexOf("/") + 1);
/** The kernel marks the executable of a process whose file was replaced since (an agent CLI that updated itself). */
const withoutDeleted = (path: string): string => path.replace(/ \(deleted\)$/, "");
const programName = (path: string): string => baseName(withoutDeleted(path)).replace(/\.(exe|[cm]?js)$/, "");

/**
 * The agent CLI a process is, or null. Its executable decides: one named `claude`, `codex` or `gemini` (the native
 * binaries; npm's Claude Code installs `bin/claude.exe`), or one in Claude Code's native install, named for its
 * version (`~/.local/share/claude/versions/2.1.3`). For an interpreter (node, bun, deno), the script it runs
 * (`node …/codex.js`), or its process title when it has rewritten its whole command line (Claude Code from npm
 * titles itself `claude`). A shell, python or an editor is never one, whatever it calls itself.
 */
export function agentCli(process: ProcessView): AgentCli | null {
  if (process.exe === null) return null;
  const executable = programName(process.exe);
  if (isAgentCli(executable)) return executable;
  if (/\/claude\/versions\/[^/]+$/.test(withoutDeleted(process.exe))) return "claude";
  if (!INTERPRETERS.has(executable)) return null;
  const [first = "", ...rest] = process.argv;
  const script = rest.length === 0 ? first : rest.find((arg) => !arg.startsWith("-"));
  const name = script === undefined ? "" : programName(script);
  return isAgentCli(name) ? name : null;
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
