import { currentInvocation } from "../identity/caller.ts";
import { listGroups } from "../actions/groups.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { defineCommand } from "../cli/definitions.ts";
import { groupLine } from "./group-print.ts";

export default defineCommand({
  meta: {
    name: "list",
    description: "List the groups and their members, one group per line",
    examples: ["agentmail group list", "agentmail group list --json"],
  },
  async run({ args }) {
    const json = args.json === true;
    const groups = await listGroups(currentInvocation());
    if (json) printJson(groups);
    else writeStdout(groups.map(groupLine).join(""));
  },
});
