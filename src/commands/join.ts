import { currentInvocation } from "../identity/invocation.ts";
import { joinRole } from "../actions/roles.ts";
import { defineCommand } from "../cli/definitions.ts";
import { membershipOutput } from "./_membership.ts";

export default defineCommand({
  meta: {
    name: "join",
    description: "Join a role: your receive also takes mail sent to role:ROLE, each message by exactly one member",
    examples: ["agentmail join triage", "agentmail join triage --json"],
  },
  args: { role: { type: "positional", required: true, valueHint: "role", description: "The role's name" } },
  async run({ args }) {
    return membershipOutput("joined", await joinRole(currentInvocation(), args.role));
  },
});
