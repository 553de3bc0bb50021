import { currentInvocation } from "../identity/invocation.ts";
import { listRoles } from "../actions/roles.ts";
import { displayName } from "../mail/names.ts";
import { defineCommand, output } from "../cli/definitions.ts";

export default defineCommand({
  meta: {
    name: "roles",
    description: "List the roles, their members and how many of their messages no member has taken yet",
    examples: ["agentmail roles", "agentmail roles --json"],
  },
  async run() {
    const roles = await listRoles(currentInvocation());
    const members = (list: string[]) => (list.length > 0 ? list.map(displayName).join(", ") : "no members");
    return output(roles, () =>
      roles.map((role) => `${displayName(role.role)}: ${members(role.members)} (${role.unread} unread)\n`).join(""),
    );
  },
});
