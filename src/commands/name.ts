import { currentInvocation } from "../actions/context.ts";
import { nameAgent } from "../actions/name.ts";
import { displayName } from "../core/names.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { defineCommand } from "../cli/definitions.ts";

export default defineCommand({
  meta: {
    name: "name",
    description: "Name your agent: rename your tmux window for good (tmux will not rename it) and register the name",
    examples: ["agentmail name reviewer", 'agentmail name "bob smith" --json'],
  },
  args: {
    name: {
      type: "positional",
      required: true,
      valueHint: "name",
      description: "The name; up to 64 characters, no control characters, ',' or ':', not starting with '-' or '@'",
    },
  },
  async run({ args }) {
    const json = args.json === true;
    const naming = await nameAgent(currentInvocation(), args.name);
    const warnings = naming.lookAlikes.map(
      (other) =>
        `"${displayName(naming.name)}" looks like "${displayName(other)}", another agent's name: mail meant for one may reach the ` +
        `other; to avoid that, pick a name that differs in plain letters: agentmail name <other-name>`,
    );
    if (json)
      printJson(warnings.length > 0 ? { name: naming.name, pane: naming.pane, warnings } : { name: naming.name, pane: naming.pane });
    else writeStdout(`${displayName(naming.name)}\n`);
    if (naming.moved > 0 || warnings.length > 0) {
      const { log } = await import("../output/log.ts");
      const count = `${naming.moved} unread message${naming.moved === 1 ? "" : "s"}`;
      if (naming.moved > 0) {
        log.info(`moved ${count} sent to your previous name "${displayName(naming.previous ?? "")}" to "${displayName(naming.name)}"`);
      }
      for (const warning of warnings) log.warn(warning);
    }
  },
});
