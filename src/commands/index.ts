import { defineCommand } from "../cli/definitions.ts";
import { run } from "../cli/run.ts";
import { VERSION } from "../core/version.ts";

/** The command tree. Each command is imported only when it runs, so `send` and `receive` pay for nothing else. */
export const root = defineCommand({
  meta: { name: "agentmail", version: VERSION, description: "Mail between AI coding agents in tmux windows" },
  args: {
    version: { type: "boolean", alias: "v", description: "Print the version" },
  },
  subCommands: {
    send: () => import("./send.ts").then((module) => module.default),
    receive: () => import("./receive.ts").then((module) => module.default),
    reply: () => import("./reply.ts").then((module) => module.default),
    inbox: () => import("./inbox.ts").then((module) => module.default),
    read: () => import("./read.ts").then((module) => module.default),
    thread: () => import("./thread.ts").then((module) => module.default),
    sent: () => import("./sent.ts").then((module) => module.default),
    search: () => import("./search.ts").then((module) => module.default),
    archive: () => import("./archive.ts").then((module) => module.default),
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
    migrate: () => import("./migrate.ts").then((module) => module.default),
    mailman: () => import("./mailman.ts").then((module) => module.default),
    mcp: () => import("./mcp.ts").then((module) => module.default),
    hooks: () => import("./hooks.ts").then((module) => module.default),
    bridge: () => import("./bridge.ts").then((module) => module.default),
  },
});

/** agentmail's command line: this tree, run by the CLI layer (one import for the entry, so one chunk less to load). */
export const main = (argv: readonly string[]): Promise<number> => run(root, argv);
