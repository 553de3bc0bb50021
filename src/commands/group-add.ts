import { currentInvocation } from "../identity/caller.ts";
import { addToGroup } from "../actions/groups.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { defineCommand } from "../cli/definitions.ts";
import { groupLine } from "./group-print.ts";

export default defineCommand({
  meta: {
    name: "add",
    description: "Add windows of your tmux session to a group (created if new); prints the group",
    examples: ["agentmail group add reviewers alice bob"],
  },
  args: {
    group: { type: "positional", required: true, valueHint: "group", description: "The group's name (send to it as @GROUP)" },
    member: { type: "positional", required: false, multiple: true, valueHint: "member", description: "Window names to add" },
  },
  async run({ args }) {
    const json = args.json === true;
    const group = await addToGroup(currentInvocation(), args.group, (args.member as string[] | undefined) ?? []);
    if (json) printJson(group);
    else writeStdout(groupLine(group));
  },
});
