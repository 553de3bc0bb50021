import { defineCommand, lazy } from "../../cli/definitions.ts";

export default defineCommand({
  meta: {
    name: "bridge",
    description: "Exchange mail with fugue FEAT-124 .mail/, D-Mail endpoints, the Roo mailbox and Claude Code agent teams, both ways",
    examples: [
      "agentmail bridge add feat124",
      "agentmail bridge add roo",
      "agentmail bridge add dmail paintress --dir ../paintress/.expedition --route report=reviewer --to lead",
      "agentmail bridge add claude-team --lead lead",
      "agentmail bridge join claude-team:session-1a2b3c4d --as codex",
      "agentmail bridge sync",
      "agentmail bridge run",
    ],
  },
  subCommands: {
    add: lazy(() => import("./add.ts")),
    list: lazy(() => import("./list.ts")),
    remove: lazy(() => import("./remove.ts")),
    join: lazy(() => import("./join.ts")),
    leave: lazy(() => import("./leave.ts")),
    sync: lazy(() => import("./sync.ts")),
    run: lazy(() => import("./run.ts")),
  },
});
