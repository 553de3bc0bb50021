/**
 * Whether Codex CLI will run the agentmail hooks installed for a project or a user: Codex skips hooks the user has
 * not trusted without a word, so `doctor` reports them (with the step that fixes it: `hooks install codex --trust`).
 */
import { homedir } from "node:os";
import { join } from "node:path";
import type { Scope } from "../hooks/agent-names.ts";
import { agentmailCodexHooks, codexTrustReport, type CodexTrustReport } from "../hooks/codex-trust.ts";
import { readConfigFile } from "../store/config-files.ts";
import { findRepository } from "../store/paths.ts";
import type { Invocation } from "../identity/caller.ts";

export interface CodexHookTrust extends CodexTrustReport {
  /** The hooks.json looked at, and the user's config.toml whose trust counts. */
  hooksPath: string;
  configPath: string;
  /** How many agentmail hooks the hooks file holds (0: nothing installed there). */
  hooks: number;
}

export function codexHookTrust(invocation: Invocation, scope: Scope): CodexHookTrust {
  const home = invocation.env.HOME || homedir();
  const userDir = invocation.env.CODEX_HOME || join(home, ".codex");
  const projectRoot = scope === "project" ? (findRepository(invocation.cwd, invocation.env)?.workTree ?? invocation.cwd) : null;
  const hooksPath = join(projectRoot === null ? userDir : join(projectRoot, ".codex"), "hooks.json");
  const configPath = join(userDir, "config.toml");
  const hooks = agentmailCodexHooks(hooksPath, readConfigFile(hooksPath).text);
  return { hooksPath, configPath, hooks: hooks.length, ...codexTrustReport(readConfigFile(configPath).text, hooks, projectRoot) };
}
