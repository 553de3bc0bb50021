import { currentInvocation } from "../../identity/invocation.ts";
import { stopMailman } from "../../actions/mailman.ts";
import { defineCommand, output } from "../../cli/definitions.ts";

export default defineCommand({
  meta: { name: "stop", description: "Stop the mailman of this store (SIGTERM, then SIGKILL after 5 s)" },
  async run() {
    const result = await stopMailman(currentInvocation());
    return output(result, result.stopped ? `mailman stopped (pid ${result.pid})\n` : "mailman is not running\n");
  },
});
