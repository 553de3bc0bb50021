import { removeBridge } from "../actions/bridge.ts";
import { currentInvocation } from "../actions/context.ts";
import { AgentmailError } from "../core/errors.ts";
import { displayName } from "../core/names.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { defineCommand, stringArg } from "../cli/definitions.ts";

export default defineCommand({
  meta: {
    name: "remove",
    description: "Stop bridging: feat124, roo, or a D-Mail endpoint's name (files in its directories stay)",
    examples: ["agentmail bridge remove feat124", "agentmail bridge remove paintress"],
  },
  args: { name: { type: "positional", required: false, valueHint: "name", description: "feat124, roo, or the D-Mail endpoint's name" } },
  async run({ args }) {
    const json = args.json === true;
    const name = stringArg(args, "name");
    if (name === undefined) {
      throw new AgentmailError("usage", "missing name; usage: agentmail bridge remove NAME ('agentmail bridge list' shows them)");
    }
    const removed = await removeBridge(currentInvocation(), name);
    if (json) printJson({ removed: removed.name });
    else writeStdout(`removed ${displayName(removed.name)}\n`);
  },
});
