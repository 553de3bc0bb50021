import { defineCommand, lazy } from "../../cli/definitions.ts";

export default defineCommand({
  meta: {
    name: "bridge",
    description: "Exchange mail with fugue FEAT-124 .mail/, D-Mail endpoints and the Roo mailbox, both ways",
    examples: [
      "agentmail bridge add feat124",
      "agentmail bridge add roo",
      "agentmail bridge add dmail paintress --dir ../paintress/.expedition --route report=reviewer --to lead",
      "agentmail bridge sync",
      "agentmail bridge run",
    ],
  },
  subCommands: {
    add: lazy(() => import("./add.ts")),
    list: lazy(() => import("./list.ts")),
    remove: lazy(() => import("./remove.ts")),
    sync: lazy(() => import("./sync.ts")),
    run: lazy(() => import("./run.ts")),
  },
});
