/** The arguments `hooks install` and `hooks uninstall` take; kept apart from the work so --help loads nothing more. */
import type { ArgsDef } from "../core/args.ts";
import { AGENTS } from "../core/agent-config/agent-names.ts";

export type HooksAction = "install" | "uninstall";

export const hooksArgs = (action: HooksAction): ArgsDef => ({
  agent: { type: "positional", valueHint: "agent", options: [...AGENTS], description: "Which agent's settings: claude (Claude Code), codex (Codex CLI) or gemini (Gemini CLI)" },
  project: { type: "boolean", description: "The project's settings, at the top of the git work tree (the default)" },
  user: { type: "boolean", description: "Your user settings (~/.claude, ~/.codex or $CODEX_HOME, ~/.gemini) instead" },
  "dry-run": { type: "boolean", description: "Print what would change, as a diff, and write nothing" },
  ...(action === "install"
    ? {
        binary: {
          type: "string" as const,
          valueHint: "path",
          description: "How hooks and the MCP server call agentmail (default: agentmail, found on PATH)",
        },
        trust: {
          type: "boolean" as const,
          description: "Codex CLI: also trust the hooks (and the project) in your ~/.codex/config.toml; Codex runs only trusted hooks",
        },
      }
    : {}),
});

