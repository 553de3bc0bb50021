import { currentInvocation } from "../identity/caller.ts";
import { stopMailman } from "../actions/mailman.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { defineCommand } from "../cli/definitions.ts";

export default defineCommand({
  meta: { name: "stop", description: "Stop the mailman of this store (SIGTERM, then SIGKILL after 5 s)" },
  async run({ args }) {
    const json = args.json === true;
    const result = await stopMailman(currentInvocation());
    if (json) printJson(result);
    else writeStdout(result.stopped ? `mailman stopped (pid ${result.pid})\n` : "mailman is not running\n");
  },
});
