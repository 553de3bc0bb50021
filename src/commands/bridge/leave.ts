import { currentInvocation } from "../../identity/invocation.ts";
import { displayName } from "../../mail/names.ts";
import { defineCommand, output } from "../../cli/definitions.ts";
import { teamArg } from "./_team.ts";

export default defineCommand({
  meta: {
    name: "leave",
    description: "Leave a Claude Code team you joined: you are taken out of its config.json",
    examples: ["agentmail bridge leave claude-team:session-1a2b3c4d", "agentmail bridge leave claude-team:session-1a2b3c4d --as codex"],
  },
  args: {
    team: teamArg,
    as: { type: "string", valueHint: "name", description: "The member's name in the team (default: the one you joined as)" },
  },
  async run({ args }) {
    const { leaveTeamAs } = await import("../../actions/team-bridge.ts");
    const left = await leaveTeamAs(currentInvocation(), args.team, args.as);
    return output(left, `${left.state === "left" ? "left" : "was not in"} ${displayName(left.team)} as ${displayName(left.member)}\n`);
  },
});
