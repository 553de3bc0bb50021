import { currentInvocation } from "../../identity/invocation.ts";
import { displayName } from "../../mail/names.ts";
import { defineCommand, output } from "../../cli/definitions.ts";
import { teamArg } from "./_team.ts";

export default defineCommand({
  meta: {
    name: "join",
    description: "Join a bridged Claude Code team as a member its lead can message; its inbox comes to you",
    examples: ["agentmail bridge join claude-team:session-1a2b3c4d", "agentmail bridge join claude-team:session-1a2b3c4d --as codex"],
  },
  args: {
    team: teamArg,
    as: { type: "string", valueHint: "name", description: "The member's name in the team (default: your window's name)" },
  },
  async run({ args }) {
    const { joinTeamAs } = await import("../../actions/team-bridge.ts");
    const joined = await joinTeamAs(currentInvocation(), args.team, args.as);
    return output(
      joined,
      `${joined.state === "joined" ? "joined" : "already in"} ${displayName(joined.team)} as ${displayName(joined.member)}\n`,
    );
  },
});
