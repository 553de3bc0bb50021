import { defineCommand } from "../cli/definitions.ts";
import { currentInvocation } from "../actions/context.ts";
import { hooksArgs, hooksRequest } from "./hooks-args.ts";

export default defineCommand({
  meta: {
    name: "uninstall",
    description: "Remove agentmail's hooks and MCP server from an agent's settings, and nothing else (backed up first)",
    examples: ["agentmail hooks uninstall claude", "agentmail hooks uninstall codex --user --dry-run"],
  },
  args: hooksArgs,
  async run({ args }) {
    const invocation = currentInvocation();
    const request = hooksRequest("uninstall", args, invocation.cwd);
    const [{ editHookSettings }, { printHooksResult }] = await Promise.all([import("../actions/hooks.ts"), import("./hooks-print.ts")]);
    printHooksResult("uninstall", request, editHookSettings(invocation, "uninstall", request), args.json === true);
  },
});
