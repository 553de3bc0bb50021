/**
 * One adapter per agent CLI behind one interface: `find` the CLI's own channel into the agent running in a pane
 * (its process, as the pane's foreground shows it), and `send` a frame along it. Gemini CLI has none: nothing runs
 * while its prompt waits, and its hooks (AfterTool mid-turn, AfterAgent at the end of a turn) bring the mail.
 */
import type { AgentCli } from "../core/typing-gate.ts";
import { findClaude, sendToClaude } from "./claude.ts";
import { findCodex, sendToCodex } from "./codex.ts";
import type { Found, Route, Sent } from "../core/route.ts";

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

/** Sends `text` along a route; `receipts` (Claude Code only) asks for receipts on a socket this process listens on. */
export function sendAlong(route: Route, text: string, receipts?: { from: string; msgId: string }): Promise<Sent> {
  return route.channel === "claude-inbox" ? sendToClaude(route, text, receipts) : sendToCodex(route, text);
}
