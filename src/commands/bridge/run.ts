import { runBridges } from "../../actions/bridge.ts";
import { currentInvocation } from "../../identity/invocation.ts";
import { log } from "../../output/log.ts";
import { defineCommand, output } from "../../cli/definitions.ts";
import { restoreNormalJit } from "../../cli/jit-policy.ts";

export default defineCommand({
  meta: {
    name: "run",
    description: "Stay in the foreground and sync on every change in a bridged directory (Ctrl-C stops it)",
    examples: ["agentmail bridge run", "agentmail bridge run --sweep 2"],
  },
  args: {
    sweep: {
      type: "string",
      unit: "seconds",
      positive: true,
      valueHint: "seconds",
      default: "5",
      description: "Sync at least this often even without a change event",
    },
  },
  async run({ args }) {
    restoreNormalJit();
    const totals = await runBridges(currentInvocation(), args.sweep, (line) => log.info(`${new Date().toISOString()} ${line}`));
    // Foreground: what happened was logged as it happened; --json sums it up.
    return output({ running: false, ...totals }, "");
  },
});
