import { defineCommand } from "../../cli/definitions.ts";
import { currentInvocation } from "../../identity/invocation.ts";
import { hooksArgs, hooksRequest } from "./_args.ts";

export default defineCommand({
  meta: {
    name: "uninstall",
    description: "Remove agentmail's hooks and MCP server from an agent's settings, and nothing else (backed up first)",
    examples: ["agentmail hooks uninstall claude", "agentmail hooks uninstall codex --user --dry-run", "agentmail hooks uninstall git"],
  },
  args: hooksArgs,
  async run({ args }) {
    const invocation = currentInvocation();
    const request = hooksRequest("uninstall", args, invocation.cwd);
    if (request.agent === "git") {
      const [{ editGitHook }, { gitHookOutput }] = await Promise.all([import("../../actions/hooks.ts"), import("./_print.ts")]);
      return gitHookOutput("uninstall", request, editGitHook(invocation, "uninstall", request.binary, request.dryRun));
    }
    const agentRequest = { ...request, agent: request.agent };
    const [{ editHookSettings }, { hooksOutput }] = await Promise.all([import("../../actions/hooks.ts"), import("./_print.ts")]);
    return hooksOutput("uninstall", agentRequest, editHookSettings(invocation, "uninstall", agentRequest));
  },
});
