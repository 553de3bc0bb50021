import { defineCommand, lazy } from "../cli/definitions.ts";
import { run } from "../cli/run.ts";
import { closeKeptStores } from "../identity/lifetime.ts";
import { BUILD, VERSION } from "../mail/version.ts";

/** The command tree. Each command is imported only when it runs, so `send` and `receive` pay for nothing else. */
export const root = defineCommand({
  meta: { name: "agentmail", version: VERSION, build: BUILD, description: "Mail between AI coding agents in tmux windows" },
  args: {
    version: { type: "boolean", alias: "v", description: "Print the version, the commit and the time it was built from" },
  },
  subCommands: {
    send: lazy(() => import("./send.ts")),
    receive: lazy(() => import("./receive.ts")),
    reply: lazy(() => import("./reply.ts")),
    inbox: lazy(() => import("./inbox.ts")),
    read: lazy(() => import("./read.ts")),
    thread: lazy(() => import("./thread.ts")),
    sent: lazy(() => import("./sent.ts")),
    ack: lazy(() => import("./ack.ts")),
    search: lazy(() => import("./search.ts")),
    archive: lazy(() => import("./archive.ts")),
    recipients: lazy(() => import("./recipients.ts")),
    name: lazy(() => import("./name.ts")),
    group: lazy(() => import("./group/index.ts")),
    join: lazy(() => import("./join.ts")),
    leave: lazy(() => import("./leave.ts")),
    roles: lazy(() => import("./roles.ts")),
    setup: lazy(() => import("./setup.ts")),
    doctor: lazy(() => import("./doctor.ts")),
    status: lazy(() => import("./status.ts")),
    onboard: lazy(() => import("./onboard.ts")),
    cleanup: lazy(() => import("./cleanup.ts")),
    migrate: lazy(() => import("./migrate.ts")),
    mailman: lazy(() => import("./mailman/index.ts")),
    mcp: lazy(() => import("./mcp.ts")),
    hooks: lazy(() => import("./hooks/index.ts")),
    bridge: lazy(() => import("./bridge/index.ts")),
    claim: lazy(() => import("./claim.ts")),
    release: lazy(() => import("./release.ts")),
    claims: lazy(() => import("./claims.ts")),
    guard: lazy(() => import("./guard.ts")),
    watch: lazy(() => import("./watch.ts")),
    web: lazy(() => import("./web.ts")),
  },
  // A store kept open (a Redis connection) would keep the process alive after the command.
  cleanup: closeKeptStores,
});

/** agentmail's command line: this tree, run by the CLI layer (one import for the entry, so one chunk less to load). */
export const main = (argv: readonly string[]): Promise<number> => run(root, argv);
