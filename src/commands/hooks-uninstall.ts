import { here } from "../actions/context.ts";
import { defineCommand } from "./command.ts";
import { hooksArgs } from "./hooks-args.ts";

export default defineCommand({
  meta: { name: "uninstall", description: "Remove agentmail's hooks and MCP server from an agent's settings, and nothing else (backed up first)" },
  args: hooksArgs("uninstall"),
  examples: ["agentmail hooks uninstall claude", "agentmail hooks uninstall codex --user --dry-run"],
  async run({ args, json }) {
    const { runHooks } = await import("./hooks-run.ts");
    return runHooks("uninstall", args, json, here());
  },
});
