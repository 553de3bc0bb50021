import { defineCommand } from "../cli/definitions.ts";

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
    add: () => import("./bridge-add.ts").then((module) => module.default),
    list: () => import("./bridge-list.ts").then((module) => module.default),
    remove: () => import("./bridge-remove.ts").then((module) => module.default),
    sync: () => import("./bridge-sync.ts").then((module) => module.default),
    run: () => import("./bridge-run.ts").then((module) => module.default),
  },
});
