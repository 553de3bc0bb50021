import { runBridges } from "../actions/bridge.ts";
import { here } from "../actions/context.ts";
import { AgentmailError } from "../core/errors.ts";
import { displayName } from "../core/names.ts";
import { log } from "../output/log.ts";
import { printJson } from "../output/streams.ts";
import { defineCommand, stringArg } from "./command.ts";

export default defineCommand({
  meta: { name: "run", description: "Stay in the foreground and sync on every change in a bridged directory (Ctrl-C stops it)" },
  args: {
    sweep: { type: "string", valueHint: "seconds", description: "Sync at least this often even without a change event (default 5)" },
  },
  examples: ["agentmail bridge run", "agentmail bridge run --sweep 2"],
  async run({ args, json }) {
    const given = stringArg(args, "sweep");
    const sweep = given === undefined ? 5 : Number(given);
    if (given !== undefined && (given.trim() === "" || !Number.isFinite(sweep) || sweep <= 0)) {
      throw new AgentmailError("usage", `--sweep takes a positive number of seconds, not '${displayName(given)}'`);
    }
    const totals = await runBridges(here(), sweep, (line) => log.info(`${new Date().toISOString()} ${line}`));
    if (json) printJson({ running: false, ...totals });
  },
});
