import { currentInvocation } from "../identity/caller.ts";
import { removeFromGroup } from "../actions/groups.ts";
import { displayName } from "../mail/names.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { defineCommand } from "../cli/definitions.ts";
import { groupLine } from "./group-print.ts";

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
    const json = args.json === true;
    const group = await removeFromGroup(currentInvocation(), args.group, (args.member as string[] | undefined) ?? []);
    if (json) printJson(group);
    else writeStdout(group.members.length === 0 ? `removed group ${displayName(group.name)}\n` : groupLine(group));
  },
});
