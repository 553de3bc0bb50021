import { here } from "../actions/context.ts";
import { leaveRole } from "../actions/roles.ts";
import { AgentmailError } from "../core/errors.ts";
import { defineCommand, stringArg } from "./command.ts";
import { printMembership } from "./membership-print.ts";

export default defineCommand({
  meta: { name: "leave", description: "Leave a role; mail waiting in its queue stays for the other members" },
  args: { role: { type: "positional", valueHint: "role", description: "The role's name" } },
  examples: ["agentmail leave triage"],
  async run({ args, json }) {
    const role = stringArg(args, "role");
    if (role === undefined) throw new AgentmailError("usage", "missing role; usage: agentmail leave <role>");
    await printMembership("left", await leaveRole(here(), role), json);
  },
});
