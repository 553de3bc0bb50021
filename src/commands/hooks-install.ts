import { defineCommand } from "../cli/definitions.ts";
import { currentInvocation } from "../actions/context.ts";
import { autoClaimArg, binaryArg, hooksArgs, hooksRequest, trustArg } from "./hooks-args.ts";

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
      trust: args.trust === true,
      autoClaim: args["auto-claim"] === true,
    });
    if (request.agent === "git") {
      const [{ editGitHook }, { printGitHookResult }] = await Promise.all([import("../actions/git-hook.ts"), import("./hooks-print.ts")]);
      return printGitHookResult("install", request, editGitHook(invocation, "install", request.binary, request.dryRun), args.json === true);
    }
    const agentRequest = { ...request, agent: request.agent };
    const [{ editHookSettings }, { printHooksResult }] = await Promise.all([import("../actions/hooks.ts"), import("./hooks-print.ts")]);
    printHooksResult("install", agentRequest, editHookSettings(invocation, "install", agentRequest), args.json === true);
  },
});
