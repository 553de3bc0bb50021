import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A throwaway git repository (real `git init`), removed by `remove()`. */
export function tempRepo(prefix = "agentmail-repo-"): { dir: string; mailDir: string; remove(): void } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const init = Bun.spawnSync(["git", "init", "-q", dir]);
  if (init.exitCode !== 0) throw new Error(`git init failed: ${init.stderr.toString()}`);
  return { dir, mailDir: join(dir, ".git", "mail"), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export const BINARY = join(import.meta.dir, "..", "..", "dist", "agentmail");
