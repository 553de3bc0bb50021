import { defineCommand } from "../cli/definitions.ts";
import { currentInvocation } from "../actions/context.ts";
import { hooksArgs, hooksRequest } from "./hooks-args.ts";

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
      const [{ editGitHook }, { printGitHookResult }] = await Promise.all([import("../actions/git-hook.ts"), import("./hooks-print.ts")]);
      return printGitHookResult(
        "uninstall",
        request,
        editGitHook(invocation, "uninstall", request.binary, request.dryRun),
        args.json === true,
      );
    }
    const agentRequest = { ...request, agent: request.agent };
    const [{ editHookSettings }, { printHooksResult }] = await Promise.all([import("../actions/hooks.ts"), import("./hooks-print.ts")]);
    printHooksResult("uninstall", agentRequest, editHookSettings(invocation, "uninstall", agentRequest), args.json === true);
  },
});
