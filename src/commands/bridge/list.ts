import { listBridges } from "../../actions/bridge.ts";
import { currentInvocation } from "../../identity/invocation.ts";
import { displayName } from "../../mail/names.ts";
import { defineCommand, output } from "../../cli/definitions.ts";

export default defineCommand({
  meta: {
    name: "list",
    description: "The configured bridges: name, kind, directory, D-Mail routes, queued Roo messages, a team's lead and members",
    examples: ["agentmail bridge list", "agentmail bridge list --json"],
  },
  async run() {
    const bridges = await listBridges(currentInvocation());
    return output(bridges, () => {
      if (bridges.length === 0) return "No bridges; add one with 'agentmail bridge add feat124|roo|dmail|claude-team'\n";
      const lines = bridges.map((bridge) => {
        const parts = [displayName(bridge.name), bridge.kind, displayName(bridge.dir)];
        for (const [kind, recipient] of Object.entries(bridge.routes ?? {})) parts.push(`${kind}=${displayName(recipient)}`);
        if (bridge.to !== undefined) parts.push(`to=${displayName(bridge.to)}`);
        if (bridge.lead !== undefined) parts.push(`lead=${displayName(bridge.lead)}`);
        for (const [member, recipient] of Object.entries(bridge.members ?? {}))
          parts.push(`member:${displayName(member)}=${displayName(recipient)}`);
        if (bridge.queued) parts.push(`queued=${bridge.queued}`);
        return parts.join(" ") + "\n";
      });
      return lines.join("");
    });
  },
});
