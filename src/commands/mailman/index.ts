import { defineCommand, lazy, output } from "../../cli/definitions.ts";
import { restoreNormalJit } from "../../cli/jit-policy.ts";
import { currentInvocation } from "../../identity/invocation.ts";
import { DEFAULT_MAILMAN_SETTINGS, runMailmanHere, startMailman } from "../../actions/mailman.ts";
import { log } from "../../output/log.ts";

/** `--typing` alone is every agent; `--typing a,b` those; left out, nobody. */
function typingArg(value: string | undefined): "all" | string[] | null {
  if (value === undefined) return null;
  if (value === "") return "all";
  const names = value.split(",").filter((name) => name !== "");
  return names.length > 0 ? names : "all";
}

export default defineCommand({
  meta: {
    name: "mailman",
    description:
      "Put agents' mail in front of them through their agent CLI's own channel, idle or busy; typed reminders only with --typing (foreground, or --daemon)",
    examples: [
      "agentmail mailman --daemon",
      "agentmail mailman --daemon --typing gemini-1",
      "agentmail mailman status",
      "agentmail mailman stop",
    ],
  },
  args: {
    daemon: { type: "boolean", description: "Run in the background; logs go to <store>/.mailman/log" },
    interval: {
      type: "string",
      unit: "seconds",
      positive: true,
      valueHint: "seconds",
      default: String(DEFAULT_MAILMAN_SETTINGS.intervalSeconds),
      description: "Remind again while mail stays unread, at most this often",
    },
    sweep: {
      type: "string",
      unit: "seconds",
      positive: true,
      valueHint: "seconds",
      default: String(DEFAULT_MAILMAN_SETTINGS.sweepSeconds),
      description: "Look at every mailbox this often even without a change event",
    },
    typing: {
      type: "string",
      optionalValue: true,
      valueHint: "agents",
      description:
        "The last resort: type a reminder into the agent CLI at its prompt when it has no channel of its own (every agent, or these: a,b)",
    },
  },
  subCommands: {
    stop: lazy(() => import("./stop.ts")),
    status: lazy(() => import("./status.ts")),
  },
  async run({ args }) {
    const settings = {
      intervalSeconds: args.interval,
      sweepSeconds: args.sweep,
      typing: typingArg(args.typing),
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
