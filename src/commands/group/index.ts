import { defineCommand, lazy } from "../../cli/definitions.ts";

export default defineCommand({
  meta: {
    name: "group",
    description: "Manage groups: named lists of windows that 'send @GROUP' reaches at once",
    examples: ["agentmail group add reviewers alice bob", "agentmail group remove reviewers bob", "agentmail group list --json"],
  },
  subCommands: {
    add: lazy(() => import("./add.ts")),
    remove: lazy(() => import("./remove.ts")),
    list: lazy(() => import("./list.ts")),
  },
});
