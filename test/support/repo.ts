import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A throwaway git repository (real `git init`), removed by `remove()`. */
export function tempRepo(prefix = "agentmail-repo-"): { dir: string; mailDir: string; remove(): void } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const init = Bun.spawnSync(["git", "init", "-q", dir]);
  if (init.exitCode !== 0) throw new Error(`git init failed: ${init.stderr.toString()}`);
  return { dir, mailDir: join(dir, ".git", "mail"), remove: () => removeDir(dir) };
}

/**
 * Removes a test's directory, again while something still writes into it: the processes of a tmux server just
 * killed end a moment later, and some write as they go (vim saves its swap file on SIGHUP, Claude Code its debug
 * log), so one pass could leave the directory behind. Gives up quietly after 2 s: a leftover is no test's failure.
 */
export function removeDir(dir: string): void {
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // Written into while being removed (ENOTEMPTY): try again.
    }
    if (!existsSync(dir)) return;
    Bun.sleepSync(20);
  }
}

export const BINARY = join(import.meta.dir, "..", "..", "dist", "agentmail");
