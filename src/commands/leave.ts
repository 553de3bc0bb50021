import { currentInvocation } from "../actions/context.ts";
import { leaveRole } from "../actions/roles.ts";
import { AgentmailError } from "../core/errors.ts";
import { defineCommand, stringArg } from "../cli/definitions.ts";
import { printMembership } from "./membership-print.ts";

export default defineCommand({
  meta: {
    name: "leave",
    description: "Leave a role; mail waiting in its queue stays for the other members",
    examples: ["agentmail leave triage"],
  },
  args: { role: { type: "positional", required: false, valueHint: "role", description: "The role's name" } },
  async run({ args }) {
    const json = args.json === true;
    const role = stringArg(args, "role");
    if (role === undefined) throw new AgentmailError("usage", "missing role; usage: agentmail leave <role>");
    await printMembership("left", await leaveRole(currentInvocation(), role), json);
  },
});
