import { defineCommand } from "citty";
import { VERSION } from "../core/version.ts";
import type { AgentmailCommand } from "./command.ts";

/** Each command is imported only when it runs, so `send` and `receive` pay for nothing else at start-up. */
export const commands: Record<string, () => Promise<AgentmailCommand>> = {
  send: () => import("./send.ts").then((module) => module.default),
  receive: () => import("./receive.ts").then((module) => module.default),
};

export const root = defineCommand({
  meta: { name: "agentmail", version: VERSION, description: "Mail between AI coding agents in tmux windows" },
});
