import { displayName } from "../core/names.ts";
import { here } from "../actions/context.ts";
import { runMailmanHere, startMailman } from "../actions/mailman.ts";
import { AgentmailError } from "../core/errors.ts";
import { log } from "../output/log.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { defineCommand, stringArg } from "./command.ts";

function seconds(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (value.trim() === "" || !Number.isFinite(number) || number <= 0) throw new AgentmailError("usage", `${flag} takes a positive number of seconds, not '${displayName(value)}'`);
  return number;
}

export default defineCommand({
  meta: { name: "mailman", description: "Remind ready agents of unread mail by typing into their panes (foreground, or --daemon)" },
  args: {
    daemon: { type: "boolean", description: "Run in the background; logs go to <store>/.mailman/log" },
    interval: { type: "string", valueHint: "seconds", description: "Remind again while mail stays unread, at most this often (default 60)" },
    sweep: { type: "string", valueHint: "seconds", description: "Look at every mailbox this often even without a change event (default 5)" },
    "all-panes": { type: "boolean", description: "Also remind panes that are not agents' (the active pane of a window with the name)" },
  },
  examples: ["agentmail mailman --daemon", "agentmail mailman status", "agentmail mailman stop"],
  subCommands: {
    stop: () => import("./mailman-stop.ts").then((module) => module.default),
    status: () => import("./mailman-status.ts").then((module) => module.default),
  },
  async run({ args, json }) {
    const settings = {
      intervalSeconds: seconds(stringArg(args, "interval"), "--interval", 60),
      sweepSeconds: seconds(stringArg(args, "sweep"), "--sweep", 5),
      allPanes: args["all-panes"] === true,
    };
    if (args.daemon) {
      const { mailman, log } = await startMailman(here(), settings);
      if (json) printJson({ running: true, pid: mailman.pid, since: mailman.started_at, log });
      else writeStdout(`mailman started (pid ${mailman.pid}); log: ${log}\n`);
      return;
    }
    const { mailman, reminders } = await runMailmanHere(here(), settings, (line) => log.info(`${new Date().toISOString()} ${line}`));
    if (json) printJson({ running: false, pid: mailman.pid, since: mailman.started_at, reminders });
  },
});
