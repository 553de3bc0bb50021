import { currentInvocation } from "../actions/context.ts";
import { mailmanStatus } from "../actions/mailman.ts";
import { displayName } from "../core/names.ts";
import { terminalText } from "../core/terminal-text.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { defineCommand } from "../cli/definitions.ts";

export default defineCommand({
  meta: {
    name: "status",
    description: "Say whether the mailman runs, since when, what it last did, and how each agent's mail last reached it (or why not)",
  },
  async run({ args }) {
    const json = args.json === true;
    const report = mailmanStatus(currentInvocation());
    if (json) return printJson(report);
    if (!report.running) return writeStdout("mailman is not running; start it with: agentmail mailman --daemon\n");
    const last = report.last_action ? `${report.last_action} at ${report.last_action_at}` : "nothing yet";
    const agents = report.agents.map((agent) => {
      const name = displayName(agent.name);
      if (agent.outcome === "reminded") return `  ${name}: reminded ${agent.detail} at ${agent.since}\n`;
      if (agent.outcome === "notified") return `  ${name}: notified, ${agent.detail} at ${agent.since}\n`;
      const reminded = agent.last_reminded_at ? `last reminded ${agent.last_reminded_at}` : "never reminded";
      return `  ${name}: ${agent.outcome} (${agent.detail}) since ${agent.since}; ${reminded}\n`;
    });
    const store = report.store === null ? "" : ` for ${report.store}`;
    const head = `mailman is running (pid ${report.pid})${store} since ${report.since}\nlast: ${last}\n`;
    writeStdout(terminalText(`${head}${agents.join("")}log: ${report.log}\n`));
  },
});
