/**
 * One adapter per agent CLI behind one interface: `find` the CLI's own channel into the agent running in a pane
 * (its process, as the pane's foreground shows it); deliver.ts sends a frame along the route found. Gemini CLI has none: nothing runs
 * while its prompt waits, and its hooks (AfterTool mid-turn, AfterAgent at the end of a turn) bring the mail.
 */
import type { AgentCli } from "../tmux/foreground.ts";
import { findClaude } from "./claude.ts";
import { findCodex } from "./codex.ts";
import type { Found } from "../mail/route.ts";

type Env = Record<string, string | undefined>;

export interface DeliveryAdapter {
  find(pid: number, paneId: string, env: Env): Found | Promise<Found>;
}

export const GEMINI_IDLE =
  "Gemini CLI cannot be reached while idle (nothing runs while its prompt waits); its AfterTool hook brings mail after " +
  "its next tool call and its AfterAgent hook at the end of its next turn";

/**
 * What `doctor` says once when Gemini CLI's hooks are installed, whether or not a Gemini CLI runs: an idle one cannot
 * be woken without keystrokes, and what the one keystroke way does.
 */
export const GEMINI_NO_WAKE =
  "Gemini CLI: an idle Gemini CLI cannot be woken without keystrokes: nothing of it runs while its prompt waits, so " +
  "mail sent to it then waits for its hooks, after its next tool call (AfterTool) or at the end of its next turn " +
  "(AfterAgent); a send to it meanwhile says stored, unreachable";

/** What `mailman --typing` would do for a Gemini CLI: the only way to wake it, by keystrokes at its idle prompt. */
export const geminiTyping = (agent: string): string =>
  `agentmail mailman --daemon --typing ${agent} (types a fixed reminder into Gemini CLI at its idle prompt and presses ` +
  "Enter: a new turn, whose hooks then bring the mail; only there, never into a shell)";

export const ADAPTERS: Record<AgentCli, DeliveryAdapter> = {
  claude: { find: findClaude },
  codex: { find: findCodex },
  gemini: { find: () => ({ route: null, none: { reason: GEMINI_IDLE, hooks: true } }) },
};
