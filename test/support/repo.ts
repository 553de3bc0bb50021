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

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the compiled binary and waits for it. */
export async function runBinary(
  args: string[],
  options: { env: Record<string, string>; cwd: string; stdin?: string | "closed" },
): Promise<Run> {
  const child = Bun.spawn([BINARY, ...args], {
    env: options.env,
    cwd: options.cwd,
    stdin: options.stdin === undefined ? "ignore" : options.stdin === "closed" ? "ignore" : new Blob([options.stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}
