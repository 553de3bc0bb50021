/**
 * Where each agent CLI keeps its settings, per scope: the one place the paths are worked out, for `hooks install`
 * (settings-edits.ts) and for a send that asks whether the hooks are installed (installed.ts), which must not load
 * the rest of the hooks' code.
 */
import { join } from "node:path";
import type { AgentName, Scope } from "../mail/agents.ts";

export interface SettingsDirs {
  /** The top of the project (the git work tree), for --project. */
  projectRoot: string;
  home: string;
  env: Record<string, string | undefined>;
}

/** Claude Code's config directory: the project's `.claude`, or the user's (CLAUDE_CONFIG_DIR, else ~/.claude). */
export const claudeDir = (scope: Scope, where: SettingsDirs): string =>
  scope === "user" ? where.env.CLAUDE_CONFIG_DIR || join(where.home, ".claude") : join(where.projectRoot, ".claude");

/** Codex CLI's user directory (CODEX_HOME, else ~/.codex). */
export const codexUserDir = (where: SettingsDirs): string => where.env.CODEX_HOME || join(where.home, ".codex");

/** Codex CLI's directory of a scope: the project's `.codex`, or the user's. */
export const codexDir = (scope: Scope, where: SettingsDirs): string =>
  scope === "user" ? codexUserDir(where) : join(where.projectRoot, ".codex");

/** The file that holds an agent CLI's hooks in a scope. */
export function hooksFile(agent: AgentName, scope: Scope, where: SettingsDirs): string {
  if (agent === "claude") return join(claudeDir(scope, where), "settings.json");
  if (agent === "codex") return join(codexDir(scope, where), "hooks.json");
  // Gemini CLI keeps its user settings under $GEMINI_CLI_HOME when set, like its trusted folders.
  return join(scope === "user" ? where.env.GEMINI_CLI_HOME || where.home : where.projectRoot, ".gemini", "settings.json");
}
