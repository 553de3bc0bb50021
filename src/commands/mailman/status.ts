import { currentInvocation } from "../../identity/invocation.ts";
import { mailmanStatus, startedByText, type MailmanStatus } from "../../actions/mailman.ts";
import { displayName } from "../../mail/names.ts";
import { terminalText } from "../../mail/terminal-text.ts";
import { defineCommand, output } from "../../cli/definitions.ts";

function statusText(report: MailmanStatus): string {
  if (!report.running) {
    const stopped =
      report.stopped_by_hand === null
        ? " (an agent's session start brings it up when agentmail's hooks are installed)"
        : ` (stopped by hand ${displayName(report.stopped_by_hand)}: session starts leave it stopped)`;
    return `mailman is not running${stopped}; start it with: agentmail mailman --daemon\n`;
  }
  const last = report.last_action ? `${report.last_action} at ${report.last_action_at}` : "nothing yet";
  const agents = report.agents.map((agent) => {
    const name = displayName(agent.name);
    if (agent.outcome === "reminded") return `  ${name}: reminded ${agent.detail} at ${agent.since}\n`;
    if (agent.outcome === "notified") return `  ${name}: notified, ${agent.detail} at ${agent.since}\n`;
    const reminded = agent.last_reminded_at ? `last reminded ${agent.last_reminded_at}` : "never reminded";
    return `  ${name}: ${agent.outcome} (${agent.detail}) since ${agent.since}; ${reminded}\n`;
  });
  const store = report.store === null ? "" : ` for ${report.store}`;
  const by = startedByText(report.started_by ?? undefined);
  const head = `mailman is running (pid ${report.pid})${store} since ${report.since}${by === null ? "" : `, started ${by}`}\nlast: ${last}\n`;
  return terminalText(`${head}${agents.join("")}log: ${report.log}\n`);
}

export default defineCommand({
  meta: {
    name: "status",
    description: "Say whether the mailman runs, since when, what it last did, and how each agent's mail last reached it (or why not)",
  },
  async run() {
    const report = mailmanStatus(currentInvocation());
    return output(report, () => statusText(report));
  },
});
