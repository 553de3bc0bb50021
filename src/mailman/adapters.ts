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

export const ADAPTERS: Record<AgentCli, DeliveryAdapter> = {
  claude: { find: findClaude },
  codex: { find: findCodex },
  gemini: { find: () => ({ route: null, none: { reason: GEMINI_IDLE, hooks: true } }) },
};
