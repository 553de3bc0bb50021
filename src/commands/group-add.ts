import { here } from "../actions/context.ts";
import { addToGroup } from "../actions/groups.ts";
import { AgentmailError } from "../core/errors.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { defineCommand, stringArg } from "./command.ts";
import { groupLine } from "./group-print.ts";

export default defineCommand({
  meta: { name: "add", description: "Add windows of your tmux session to a group (created if new); prints the group" },
  args: {
    group: { type: "positional", valueHint: "group", description: "The group's name (send to it as @GROUP)" },
    member: { type: "positional", multiple: true, valueHint: "member...", description: "Window names to add" },
  },
  examples: ["agentmail group add reviewers alice bob"],
  async run({ args, json }) {
    const name = stringArg(args, "group");
    if (name === undefined) throw new AgentmailError("usage", "missing group; usage: agentmail group add <group> <member>...");
    const group = await addToGroup(here(), name, (args.member as string[] | undefined) ?? []);
    if (json) printJson(group);
    else writeStdout(groupLine(group));
  },
});
