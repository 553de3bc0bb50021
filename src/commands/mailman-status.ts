import { defineCommand } from "../cli/definitions.ts";
import { here } from "../actions/context.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { mailmanLogPath, readMailmanState, runningMailman } from "../store/mailman-files.ts";
import { mailRoot } from "../store/paths.ts";

export default defineCommand({
  meta: { name: "status", description: "Say whether the mailman runs, since when, and what it last did" },
  async run({ args }) {
    const json = args.json === true;
    const place = here();
    const root = mailRoot(place.cwd, place.env);
    const running = runningMailman(root);
    const state = running ? readMailmanState(root) : null;
    const report = {
      running: running !== null,
      pid: running?.pid ?? null,
      since: running?.started_at ?? null,
      last_action: state?.last_action ?? null,
      last_action_at: state?.last_action_at ?? null,
      reminders: state?.reminders ?? 0,
      log: mailmanLogPath(root),
    };
    if (json) return printJson(report);
    if (!running) return writeStdout("mailman is not running; start it with: agentmail mailman --daemon\n");
    const last = report.last_action ? `${report.last_action} at ${report.last_action_at}` : "nothing yet";
    writeStdout(`mailman is running (pid ${report.pid}) since ${report.since}\nlast: ${last}\nlog: ${report.log}\n`);
  },
});
