import { defineCommand } from "../../cli/definitions.ts";
import { currentInvocation } from "../../identity/invocation.ts";
import { autoClaimArg, binaryArg, hooksArgs, hooksRequest, trustArg } from "./_args.ts";

export default defineCommand({
  meta: {
    name: "install",
    description:
      "Add agentmail's hooks and MCP server to an agent's settings (merged in, backed up first; running it again changes nothing)",
    examples: [
      "agentmail hooks install claude",
      "agentmail hooks install codex --user",
      "agentmail hooks install codex --trust",
      "agentmail hooks install gemini --dry-run",
      "agentmail hooks install claude --binary /opt/agentmail/agentmail",
      "agentmail hooks install claude --auto-claim",
      "agentmail hooks install git",
    ],
  },
  args: { ...hooksArgs, binary: binaryArg, trust: trustArg, "auto-claim": autoClaimArg },
  async run({ args }) {
    const invocation = currentInvocation();
    const request = hooksRequest("install", args, invocation.cwd, {
      binary: args.binary,
      trust: args.trust,
      autoClaim: args["auto-claim"],
    });
    if (request.agent === "git") {
      const [{ editGitHook }, { gitHookOutput }] = await Promise.all([import("../../actions/hooks.ts"), import("./_print.ts")]);
      return gitHookOutput("install", request, editGitHook(invocation, "install", request.binary, request.dryRun));
    }
    const agentRequest = { ...request, agent: request.agent };
    const [{ editHookSettings }, { hooksOutput }] = await Promise.all([import("../../actions/hooks.ts"), import("./_print.ts")]);
    return hooksOutput("install", agentRequest, editHookSettings(invocation, "install", agentRequest));
  },
});
