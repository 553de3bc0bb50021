import { here } from "../actions/context.ts";
import { defineCommand } from "./command.ts";
import { hooksArgs } from "./hooks-args.ts";

export default defineCommand({
  meta: { name: "install", description: "Add agentmail's hooks and MCP server to an agent's settings (merged in, backed up first; running it again changes nothing)" },
  args: hooksArgs("install"),
  examples: ["agentmail hooks install claude", "agentmail hooks install codex --user", "agentmail hooks install gemini --dry-run", "agentmail hooks install claude --binary /opt/agentmail/agentmail"],
  async run({ args, json }) {
    const { runHooks } = await import("./hooks-run.ts");
    return runHooks("install", args, json, here());
  },
});
