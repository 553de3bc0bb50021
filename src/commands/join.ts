import { currentInvocation } from "../actions/context.ts";
import { joinRole } from "../actions/roles.ts";
import { AgentmailError } from "../core/errors.ts";
import { defineCommand, stringArg } from "../cli/definitions.ts";
import { printMembership } from "./membership-print.ts";

export default defineCommand({
  meta: {
    name: "join",
    description: "Join a role: your receive also takes mail sent to role:ROLE, each message by exactly one member",
    examples: ["agentmail join triage", "agentmail join triage --json"],
  },
  args: { role: { type: "positional", required: false, valueHint: "role", description: "The role's name" } },
  async run({ args }) {
    const json = args.json === true;
    const role = stringArg(args, "role");
    if (role === undefined) throw new AgentmailError("usage", "missing role; usage: agentmail join <role>");
    await printMembership("joined", await joinRole(currentInvocation(), role), json);
  },
});
