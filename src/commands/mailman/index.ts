import { defineCommand, lazy, numberArg, output } from "../../cli/definitions.ts";
import { restoreNormalJit } from "../../cli/jit-policy.ts";
import { currentInvocation } from "../../identity/invocation.ts";
import { runMailmanHere, startMailman } from "../../actions/mailman.ts";
import { log } from "../../output/log.ts";

export default defineCommand({
  meta: {
    name: "mailman",
    description: "Remind ready agents of unread mail, typed into their agent CLI at its prompt (foreground, or --daemon)",
    examples: ["agentmail mailman --daemon", "agentmail mailman status", "agentmail mailman stop"],
  },
  args: {
    daemon: { type: "boolean", description: "Run in the background; logs go to <store>/.mailman/log" },
    interval: {
      type: "string",
      valueHint: "seconds",
      default: "60",
      description: "Remind again while mail stays unread, at most this often",
    },
    sweep: {
      type: "string",
      valueHint: "seconds",
      default: "5",
      description: "Look at every mailbox this often even without a change event",
    },
  },
  subCommands: {
    stop: lazy(() => import("./stop.ts")),
    status: lazy(() => import("./status.ts")),
  },
  async run({ args }) {
    const settings = {
      intervalSeconds: numberArg("--interval", args.interval, "seconds", { positive: true }),
      sweepSeconds: numberArg("--sweep", args.sweep, "seconds", { positive: true }),
    };
    if (args.daemon) {
      const { mailman, log } = await startMailman(currentInvocation(), settings);
      return output(
        { running: true, pid: mailman.pid, since: mailman.started_at, log },
        `mailman started (pid ${mailman.pid}); log: ${log}\n`,
      );
    }
    restoreNormalJit();
    const { mailman, reminders } = await runMailmanHere(currentInvocation(), settings, (line) =>
      log.info(`${new Date().toISOString()} ${line}`),
    );
    // Foreground: what it did was logged as it happened; --json sums it up.
    return output({ running: false, pid: mailman.pid, since: mailman.started_at, reminders }, "");
  },
});
