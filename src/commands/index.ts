import { defineCommand, type CommandDef } from "citty";
import { VERSION } from "../core/version.ts";
import type { CommandTable } from "./command.ts";

/** Each command is imported only when it runs, so `send` and `receive` pay for nothing else at start-up. */
const commands: CommandTable = {
  send: () => import("./send.ts").then((module) => module.default),
  receive: () => import("./receive.ts").then((module) => module.default),
  recipients: () => import("./recipients.ts").then((module) => module.default),
  name: () => import("./name.ts").then((module) => module.default),
  group: () => import("./group.ts").then((module) => module.default),
  join: () => import("./join.ts").then((module) => module.default),
  leave: () => import("./leave.ts").then((module) => module.default),
  roles: () => import("./roles.ts").then((module) => module.default),
  doctor: () => import("./doctor.ts").then((module) => module.default),
  status: () => import("./status.ts").then((module) => module.default),
  onboard: () => import("./onboard.ts").then((module) => module.default),
  cleanup: () => import("./cleanup.ts").then((module) => module.default),
  mailman: () => import("./mailman.ts").then((module) => module.default),
  mcp: () => import("./mcp.ts").then((module) => module.default),
  hooks: () => import("./hooks.ts").then((module) => module.default),
};

export const ROOT_DESCRIPTION = "Mail between AI coding agents in tmux windows";

/** The citty command tree; the dispatcher walks it with strict parsing of its own. */
export const root: CommandDef = defineCommand({
  meta: { name: "agentmail", version: VERSION, description: ROOT_DESCRIPTION },
  subCommands: commands as unknown as CommandDef["subCommands"],
});

export const topLevelCommands = (): CommandTable => root.subCommands as unknown as CommandTable;
