/**
 * Whether agentmail's hooks are installed for an agent CLI that has a channel of its own (Claude Code, Codex CLI), in
 * the user's settings or the project's: what lets a send bring up the store's mailman for an idle agent
 * (mailman/bring-up.ts). A look for the end-of-turn hook's command in the text of each settings file, no parse: a
 * few small reads, on a send that found no mailman running.
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { hooksFile } from "./settings-paths.ts";

type Env = Record<string, string | undefined>;

export function channelHooksInstalled(env: Env, projectRoot: string): boolean {
  const where = { projectRoot, home: env.HOME || homedir(), env };
  for (const agent of ["claude", "codex"] as const)
    for (const scope of ["project", "user"] as const) {
      try {
        if (readFileSync(hooksFile(agent, scope, where), "utf8").includes(" receive --hook")) return true;
      } catch {
        // No such settings.
      }
    }
  return false;
}
