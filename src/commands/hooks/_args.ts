/** The arguments `hooks install` and `hooks uninstall` take; kept apart from the work so --help loads nothing more. */
import { isAbsolute, resolve } from "node:path";
import type { ArgSpec, ArgSpecs, ParsedArgs } from "../../cli/args.ts";
import type { HooksChange, HooksRequest } from "../../actions/hooks.ts";
import { AgentmailError } from "../../mail/errors.ts";
import { AGENTS } from "../../mail/agents.ts";

export const hooksArgs = {
  agent: {
    type: "positional",
    required: true,
    valueHint: "agent",
    options: [...AGENTS, "git"],
    description: "Which agent's settings: claude (Claude Code), codex (Codex CLI) or gemini (Gemini CLI); or git, the pre-commit guard",
  },
  project: { type: "boolean", description: "The project's settings, at the top of the git work tree (the default)" },
  user: { type: "boolean", description: "Your user settings (~/.claude, ~/.codex or $CODEX_HOME, ~/.gemini) instead" },
  "dry-run": { type: "boolean", description: "Print what would change, as a diff, and write nothing" },
} as const satisfies ArgSpecs;

export const binaryArg = {
  type: "string",
  valueHint: "path",
  default: "agentmail",
  description: "How hooks and the MCP server call agentmail: a name found on PATH, or a path to the binary",
} as const satisfies ArgSpec;

export const autoClaimArg = {
  type: "boolean",
  description: "The pre-edit guard also claims each file the agent edits (released when its session ends)",
} as const satisfies ArgSpec;

export const trustArg = {
  type: "boolean",
  description: "Codex CLI: also trust the hooks (and the project) in your ~/.codex/config.toml; Codex runs only trusted hooks",
} as const satisfies ArgSpec;

/** --binary as the settings should hold it: a name stays a name; a relative path is pinned now, since agents run
 * hooks in whatever directory they are in. */
export function binaryPath(binary: string, cwd: string): string {
  if (binary.trim() === "") throw new AgentmailError("usage", "--binary needs a path to the agentmail binary");
  return binary.includes("/") && !isAbsolute(binary) ? resolve(cwd, binary) : binary;
}

/**
 * The request the two commands hand to the action: the flags checked and resolved, with errors in the flags' terms.
 * `binary` and `trust` are install's (uninstall takes out whatever an install wrote).
 */
export function hooksRequest(
  change: HooksChange,
  args: ParsedArgs<typeof hooksArgs>,
  cwd: string,
  { binary = "agentmail", trust = false, autoClaim = false }: { binary?: string; trust?: boolean; autoClaim?: boolean } = {},
): HooksRequest {
  const { agent } = args;
  if (agent === "git") {
    if (args.user || trust || autoClaim) {
      throw new AgentmailError("usage", "git takes only --binary and --dry-run: its hook lives in the repository's hooks directory");
    }
  }
  if (args.project && args.user) {
    throw new AgentmailError("usage", `give --project or --user, not both; run 'agentmail hooks ${change} --help'`);
  }
  if (trust && agent !== "codex") {
    const instead = agent === "gemini" ? "Gemini CLI asks you to trust the folder itself" : "Claude Code needs no trust entries";
    throw new AgentmailError("usage", `--trust is for codex (Codex CLI skips hooks you have not trusted); ${instead}`);
  }
  return {
    agent,
    scope: args.user ? "user" : "project",
    dryRun: args["dry-run"],
    binary: binaryPath(binary, cwd),
    trust,
    autoClaim,
  };
}
