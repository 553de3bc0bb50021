import { defineCommand, lazy } from "../cli/definitions.ts";

export default defineCommand({
  meta: {
    name: "hooks",
    description: "Install or remove agentmail's hooks and MCP server in Claude Code, Codex CLI or Gemini CLI settings",
    examples: ["agentmail hooks install claude", "agentmail hooks install codex --user --dry-run", "agentmail hooks uninstall gemini"],
  },
  subCommands: {
    install: lazy(() => import("./hooks-install.ts")),
    uninstall: lazy(() => import("./hooks-uninstall.ts")),
  },
});
