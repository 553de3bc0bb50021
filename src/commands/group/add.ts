import { currentInvocation } from "../../identity/invocation.ts";
import { addToGroup } from "../../actions/groups.ts";
import { defineCommand, output } from "../../cli/definitions.ts";
import { groupLine } from "./_line.ts";

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
    const group = await addToGroup(currentInvocation(), args.group, args.member);
    return output(group, groupLine(group));
  },
});
