import { currentInvocation } from "../identity/caller.ts";
import { listRoles } from "../actions/roles.ts";
import { displayName } from "../mail/names.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { defineCommand } from "../cli/definitions.ts";

export default defineCommand({
  meta: {
    name: "roles",
    description: "List the roles, their members and how many of their messages no member has taken yet",
    examples: ["agentmail roles", "agentmail roles --json"],
  },
  async run({ args }) {
    const json = args.json === true;
    const roles = await listRoles(currentInvocation());
    if (json) return void printJson(roles);
    const members = (list: string[]) => (list.length > 0 ? list.map(displayName).join(", ") : "no members");
    writeStdout(roles.map((role) => `${displayName(role.role)}: ${members(role.members)} (${role.unread} unread)\n`).join(""));
  },
});
