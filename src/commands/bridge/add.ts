import { addBridge } from "../../actions/bridge.ts";
import { currentInvocation } from "../../identity/invocation.ts";
import { displayName } from "../../mail/names.ts";
import { defineCommand, output } from "../../cli/definitions.ts";

export default defineCommand({
  meta: {
    name: "add",
    description: "Bridge a FEAT-124 .mail/ directory, the Roo mailbox, a D-Mail endpoint, or a Claude Code agent team (kept in the store)",
    examples: [
      "agentmail bridge add feat124",
      "agentmail bridge add roo --dir .roo/mailbox",
      "agentmail bridge add dmail paintress --dir ../paintress/.expedition --route report=reviewer --to lead",
      "agentmail bridge add claude-team --lead lead",
      "agentmail bridge add claude-team session-1a2b3c4d --member codex=reviewer",
    ],
  },
  args: {
    kind: {
      type: "positional",
      required: true,
      valueHint: "kind",
      options: ["feat124", "roo", "dmail", "claude-team"],
      description: "Which peer",
    },
    name: {
      type: "positional",
      required: false,
      valueHint: "name",
      description:
        "dmail: the endpoint's name, used in dmail:NAME addresses; claude-team: the team (default: the one whose lead runs in --lead's window, or the only one running)",
    },
    dir: {
      type: "string",
      valueHint: "dir",
      description:
        "feat124: the .mail directory (default: .mail at the repository's top); roo: the mailbox (default: .roo/mailbox); " +
        "dmail: the tool's directory with inbox/, outbox/, archive/; claude-team: the team's directory (default: ~/.claude/teams/TEAM, $CLAUDE_CONFIG_DIR honoured)",
    },
    route: {
      type: "string",
      multiple: true,
      valueHint: "kind=recipient",
      description: "dmail: deliver this D-Mail kind to this agent; repeat for several kinds",
    },
    to: { type: "string", valueHint: "recipient", description: "dmail: deliver every other kind to this agent" },
    lead: {
      type: "string",
      valueHint: "window",
      description: "claude-team: the tmux window the lead runs in: finds its team, and gets mail for the lead while it does not poll",
    },
    member: {
      type: "string",
      multiple: true,
      valueHint: "name=agent",
      description: "claude-team: deliver this member's inbox to this agent (@GROUP, role:ROLE); repeat for several",
    },
  },
  async run({ args }) {
    const { kind, name, dir, to, lead, member: members } = args;
    const warnings: string[] = [];
    const warn = (warning: string) => void warnings.push(warning);
    const bridge = await addBridge(currentInvocation(), { kind, name, dir, routes: args.route, to, lead, members, warn });
    return output(bridge, `${displayName(bridge.name)} ${displayName(bridge.dir)}\n`, {
      async after() {
        if (warnings.length === 0) return;
        const { log } = await import("../../output/log.ts");
        for (const warning of warnings) log.warn(warning);
      },
    });
  },
});
