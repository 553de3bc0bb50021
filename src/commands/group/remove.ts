import { currentInvocation } from "../../identity/invocation.ts";
import { removeFromGroup } from "../../actions/groups.ts";
import { displayName } from "../../mail/names.ts";
import { defineCommand, output } from "../../cli/definitions.ts";
import { groupLine } from "./_line.ts";

export default defineCommand({
  meta: {
    name: "remove",
    description: "Remove members from a group, or the whole group when no member is named",
    examples: ["agentmail group remove reviewers bob", "agentmail group remove reviewers"],
  },
  args: {
    group: { type: "positional", required: true, valueHint: "group", description: "The group's name" },
    member: {
      type: "positional",
      required: false,
      multiple: true,
      valueHint: "member",
      description: "Members to remove; leave out to remove the group",
    },
  },
  async run({ args }) {
    const group = await removeFromGroup(currentInvocation(), args.group, args.member);
    return output(group, group.members.length === 0 ? `removed group ${displayName(group.name)}\n` : groupLine(group));
  },
});
