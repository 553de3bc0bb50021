import { defineCommand } from "../cli/definitions.ts";
import { currentInvocation } from "../actions/context.ts";
import { hooksArgs, hooksFlags } from "./hooks-args.ts";

export default defineCommand({
  meta: {
    name: "uninstall",
    description: "Remove agentmail's hooks and MCP server from an agent's settings, and nothing else (backed up first)",
    examples: ["agentmail hooks uninstall claude", "agentmail hooks uninstall codex --user --dry-run"],
  },
  args: hooksArgs,
  async run({ args }) {
    const { runHooks } = await import("./hooks-edit-settings.ts");
    return runHooks("uninstall", hooksFlags(args), currentInvocation());
  },
});
