import { defineCommand } from "../cli/definitions.ts";

export default defineCommand({
  meta: {
    name: "group",
    description: "Manage groups: named lists of windows that 'send @GROUP' reaches at once",
    examples: ["agentmail group add reviewers alice bob", "agentmail group remove reviewers bob", "agentmail group list --json"],
  },
  subCommands: {
    add: () => import("./group-add.ts").then((module) => module.default),
    remove: () => import("./group-remove.ts").then((module) => module.default),
    list: () => import("./group-list.ts").then((module) => module.default),
  },
});
