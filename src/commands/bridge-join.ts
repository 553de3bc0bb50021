import { currentInvocation } from "../actions/context.ts";
import { displayName } from "../core/names.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { defineCommand, stringArg } from "../cli/definitions.ts";

export default defineCommand({
  meta: {
    name: "join",
    description: "Join a bridged Claude Code team as a member its lead can message; its inbox comes to you",
    examples: ["agentmail bridge join claude-team:session-1a2b3c4d", "agentmail bridge join claude-team:session-1a2b3c4d --as codex"],
  },
  args: {
    team: {
      type: "positional",
      required: true,
      valueHint: "claude-team:team",
      description: "The team, as claude-team:TEAM",
      hintWhenMissing: "'agentmail bridge list' shows the bridged teams",
    },
    as: { type: "string", valueHint: "name", description: "The member's name in the team (default: your window's name)" },
  },
  async run({ args }) {
    const { joinTeamAs } = await import("../actions/team-bridge.ts");
    const joined = await joinTeamAs(currentInvocation(), args.team, stringArg(args, "as"));
    if (args.json === true) printJson(joined);
    else
      writeStdout(`${joined.state === "joined" ? "joined" : "already in"} ${displayName(joined.team)} as ${displayName(joined.member)}\n`);
  },
});
