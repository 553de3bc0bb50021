import { removeBridge } from "../actions/bridge.ts";
import { currentInvocation } from "../actions/context.ts";
import { displayName } from "../core/names.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { defineCommand } from "../cli/definitions.ts";

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
    const json = args.json === true;
    const removed = await removeBridge(currentInvocation(), args.name);
    if (json) printJson({ removed: removed.name });
    else writeStdout(`removed ${displayName(removed.name)}\n`);
  },
});
