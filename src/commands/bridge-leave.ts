import { currentInvocation } from "../actions/context.ts";
import { displayName } from "../core/names.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { defineCommand, stringArg } from "../cli/definitions.ts";

export default defineCommand({
  meta: {
    name: "leave",
    description: "Leave a Claude Code team you joined: you are taken out of its config.json",
    examples: ["agentmail bridge leave claude-team:session-1a2b3c4d", "agentmail bridge leave claude-team:session-1a2b3c4d --as codex"],
  },
  args: {
    team: {
      type: "positional",
      required: true,
      valueHint: "claude-team:team",
      description: "The team, as claude-team:TEAM",
      hintWhenMissing: "'agentmail bridge list' shows the bridged teams",
    },
    as: { type: "string", valueHint: "name", description: "The member's name in the team (default: the one you joined as)" },
  },
  async run({ args }) {
    const { leaveTeamAs } = await import("../actions/team-bridge.ts");
    const left = await leaveTeamAs(currentInvocation(), args.team, stringArg(args, "as"));
    if (args.json === true) printJson(left);
    else writeStdout(`${left.state === "left" ? "left" : "was not in"} ${displayName(left.team)} as ${displayName(left.member)}\n`);
  },
});
