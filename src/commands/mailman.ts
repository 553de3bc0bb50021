import { defineCommand, numberArg } from "../cli/definitions.ts";
import { here } from "../actions/context.ts";
import { startDaemon } from "../mailman/daemon.ts";
import { runMailman } from "../mailman/service.ts";
import { log } from "../output/log.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { claimMailman, mailmanLogPath, readMailmanState, releaseMailman } from "../store/mailman-files.ts";
import { ensureRoot, mailRoot } from "../store/paths.ts";

export default defineCommand({
  meta: {
    name: "mailman",
    description: "Remind ready agents of unread mail by typing into their panes (foreground, or --daemon)",
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
    stop: () => import("./mailman-stop.ts").then((module) => module.default),
    status: () => import("./mailman-status.ts").then((module) => module.default),
  },
  async run({ args }) {
    const json = args.json === true;
    const intervalSeconds = numberArg("--interval", args.interval, "seconds", { positive: true });
    const sweepSeconds = numberArg("--sweep", args.sweep, "seconds", { positive: true });
    const place = here();
    const root = ensureRoot(mailRoot(place.cwd, place.env));
    if (args.daemon) {
      const started = await startDaemon(root, ["--interval", String(intervalSeconds), "--sweep", String(sweepSeconds)], place.env);
      if (json) printJson({ running: true, pid: started.pid, since: started.started_at, log: mailmanLogPath(root) });
      else writeStdout(`mailman started (pid ${started.pid}); log: ${mailmanLogPath(root)}\n`);
      return;
    }
    const mailman = await claimMailman(root);
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
    process.on("SIGHUP", onSignal);
    try {
      await runMailman({
        root,
        env: place.env,
        intervalMs: intervalSeconds * 1000,
        sweepMs: sweepSeconds * 1000,
        log: (line) => log.info(`${new Date().toISOString()} ${line}`),
        signal: stop.signal,
      });
    } finally {
      releaseMailman(root);
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
      process.off("SIGHUP", onSignal);
    }
    if (json) printJson({ running: false, pid: mailman.pid, since: mailman.started_at, reminders: readMailmanState(root)?.reminders ?? 0 });
  },
});
