import { currentInvocation } from "../identity/invocation.ts";
import { nameAgent } from "../actions/name.ts";
import { displayName } from "../mail/names.ts";
import { defineCommand, output } from "../cli/definitions.ts";

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
    const naming = await nameAgent(currentInvocation(), args.name);
    const warnings = naming.lookAlikes.map(
      (other) =>
        `"${displayName(naming.name)}" looks like "${displayName(other)}", another agent's name: mail meant for one may reach the ` +
        `other; to avoid that, pick a name that differs in plain letters: agentmail name <other-name>`,
    );
    const json = warnings.length > 0 ? { name: naming.name, pane: naming.pane, warnings } : { name: naming.name, pane: naming.pane };
    return output(json, `${displayName(naming.name)}\n`, {
      async after() {
        if (naming.moved === 0 && warnings.length === 0) return;
        const { log } = await import("../output/log.ts");
        const count = `${naming.moved} unread message${naming.moved === 1 ? "" : "s"}`;
        if (naming.moved > 0) {
          log.info(`moved ${count} sent to your previous name "${displayName(naming.previous ?? "")}" to "${displayName(naming.name)}"`);
        }
        for (const warning of warnings) log.warn(warning);
      },
    });
  },
});
