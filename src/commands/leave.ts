import { currentInvocation } from "../identity/invocation.ts";
import { leaveRole } from "../actions/roles.ts";
import { defineCommand } from "../cli/definitions.ts";
import { membershipOutput } from "./_membership.ts";

export default defineCommand({
  meta: {
    name: "leave",
    description: "Leave a role; mail waiting in its queue stays for the other members",
    examples: ["agentmail leave triage"],
  },
  args: { role: { type: "positional", required: true, valueHint: "role", description: "The role's name" } },
  async run({ args }) {
    return membershipOutput("left", await leaveRole(currentInvocation(), args.role));
  },
});
