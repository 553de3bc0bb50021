/** `hooks install git` and `hooks uninstall git`: the pre-commit guard in the hooks directory git uses for this repository. */
import { gitHooksDir } from "../hooks/git.ts";
import { installGitHook, uninstallGitHook, type GitHookReport } from "../hooks/git-hook.ts";
import type { Invocation } from "./context.ts";
import type { HooksChange } from "./hooks.ts";

export interface GitHookResult {
  hook: GitHookReport;
  /** The hook runs `agentmail` by name, and no agentmail is on PATH: commits will fail until one is. */
  notOnPath: boolean;
}

export function editGitHook(invocation: Invocation, change: HooksChange, binary: string, dryRun: boolean): GitHookResult {
  const dir = gitHooksDir(invocation.cwd, invocation.env);
  if (change === "uninstall") return { hook: uninstallGitHook(dir, dryRun), notOnPath: false };
  const hook = installGitHook(dir, binary, dryRun);
  const notOnPath = !dryRun && binary === "agentmail" && !Bun.which("agentmail", { PATH: invocation.env.PATH ?? "" });
  return { hook, notOnPath };
}
