import { defineCommand, lazy } from "../../cli/definitions.ts";

export default defineCommand({
  meta: {
    name: "hooks",
    description:
      "Install or remove agentmail's hooks and MCP server in Claude Code, Codex CLI or Gemini CLI settings, or its git pre-commit guard",
    examples: [
      "agentmail hooks install claude",
      "agentmail hooks install codex --user --dry-run",
      "agentmail hooks uninstall gemini",
      "agentmail hooks install git",
    ],
  },
  subCommands: {
    install: lazy(() => import("./install.ts")),
    uninstall: lazy(() => import("./uninstall.ts")),
  },
});
