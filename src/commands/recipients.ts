import { defineCommand } from "../cli/definitions.ts";
import { here, recipientsOf, whoAmI } from "../actions/context.ts";
import { displayName } from "../core/names.ts";
import { printJson, writeStdout } from "../output/streams.ts";

export default defineCommand({
  meta: {
    name: "recipients",
    description: "List the windows of your tmux session you can send to; yours is marked [you]",
    examples: ["agentmail recipients", "agentmail recipients --json"],
  },
  async run({ args }) {
    const json = args.json === true;
    const recipients = recipientsOf(await whoAmI(here()));
    if (json) printJson(recipients);
    else writeStdout(recipients.map((entry) => `${displayName(entry.name)}${entry.you ? " [you]" : ""}\n`).join(""));
  },
});
