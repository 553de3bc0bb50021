import { defineCommand } from "../cli/definitions.ts";
import { here } from "../actions/context.ts";
import { stopDaemon } from "../mailman/daemon.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { forgetMailman, runningMailman } from "../store/mailman-files.ts";
import { mailRoot } from "../store/paths.ts";

export default defineCommand({
  meta: { name: "stop", description: "Stop the mailman of this store (SIGTERM, then SIGKILL after 5 s)" },
  async run({ args }) {
    const json = args.json === true;
    const place = here();
    const root = mailRoot(place.cwd, place.env);
    const running = runningMailman(root);
    if (running) await stopDaemon(running);
    forgetMailman(root);
    if (json) printJson({ stopped: running !== null, pid: running?.pid ?? null });
    else writeStdout(running ? `mailman stopped (pid ${running.pid})\n` : "mailman is not running\n");
  },
});
