/** The arguments `hooks install` and `hooks uninstall` take; kept apart from the work so --help loads nothing more. */
import type { ParsedArgs } from "citty";
import { AGENTS } from "../hooks/agent-names.ts";

export type HooksAction = "install" | "uninstall";

export const hooksArgs = {
  agent: {
    type: "positional",
    required: true,
    valueHint: "agent",
    options: [...AGENTS],
    description: "Which agent's settings: claude (Claude Code), codex (Codex CLI) or gemini (Gemini CLI)",
  },
  project: { type: "boolean", description: "The project's settings, at the top of the git work tree (the default)" },
  user: { type: "boolean", description: "Your user settings (~/.claude, ~/.codex or $CODEX_HOME, ~/.gemini) instead" },
  "dry-run": { type: "boolean", description: "Print what would change, as a diff, and write nothing" },
} as const;

export const binaryArg = {
  type: "string",
  valueHint: "path",
  default: "agentmail",
  description: "How hooks and the MCP server call agentmail: a name found on PATH, or a path to the binary",
} as const;

export const trustArg = {
  type: "boolean",
  description: "Codex CLI: also trust the hooks (and the project) in your ~/.codex/config.toml; Codex runs only trusted hooks",
} as const;

/** What the two commands hand to the shared work, parsed. */
export interface HooksFlags {
  agent: string;
  project: boolean;
  user: boolean;
  dryRun: boolean;
  /** Left out by uninstall. */
  binary?: string;
  /** Install only: write Codex's trust entries too. */
  trust: boolean;
  json: boolean;
}

export const hooksFlags = (args: ParsedArgs<typeof hooksArgs>, binary?: string, trust = false): HooksFlags => ({
  agent: args.agent,
  project: args.project === true,
  user: args.user === true,
  dryRun: args["dry-run"] === true,
  json: args.json === true,
  trust,
  ...(binary === undefined ? {} : { binary }),
});
