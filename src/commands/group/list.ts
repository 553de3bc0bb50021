import { currentInvocation } from "../../identity/invocation.ts";
import { listGroups } from "../../actions/groups.ts";
import { defineCommand, output } from "../../cli/definitions.ts";
import { groupLine } from "./_line.ts";

export default defineCommand({
  meta: {
    name: "list",
    description: "List the groups and their members, one group per line",
    examples: ["agentmail group list", "agentmail group list --json"],
  },
  async run() {
    const groups = await listGroups(currentInvocation());
    return output(groups, () => groups.map(groupLine).join(""));
  },
});
