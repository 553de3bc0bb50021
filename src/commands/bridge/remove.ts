import { removeBridge } from "../../actions/bridge.ts";
import { currentInvocation } from "../../identity/invocation.ts";
import { displayName } from "../../mail/names.ts";
import { defineCommand, output } from "../../cli/definitions.ts";

export default defineCommand({
  meta: {
    name: "remove",
    description: "Stop bridging: feat124, roo, a D-Mail endpoint's name or a team's (files in its directories stay)",
    examples: ["agentmail bridge remove feat124", "agentmail bridge remove paintress"],
  },
  args: {
    name: {
      type: "positional",
      required: true,
      valueHint: "name",
      description: "feat124, roo, the D-Mail endpoint's name, or the Claude Code team's",
      hintWhenMissing: "'agentmail bridge list' shows them",
    },
  },
  async run({ args }) {
    const removed = await removeBridge(currentInvocation(), args.name);
    return output({ removed: removed.name }, `removed ${displayName(removed.name)}\n`);
  },
});
