/**
 * Another revision of agentmail, built for a before/after in one run: `git archive` of the revision into a temp dir,
 * this checkout's node_modules linked in, `bun build.ts` there. The caller removes `dir` when done.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export function buildRevision(rev: string): { binary: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), "agentmail-before-"));
  execFileSync("bash", ["-c", `git archive ${JSON.stringify(rev)} | tar -x -C ${JSON.stringify(dir)}`], { stdio: "inherit" });
  symlinkSync(join(process.cwd(), "node_modules"), join(dir, "node_modules"));
  execFileSync(join(process.cwd(), "node_modules", ".bin", "bun"), ["build.ts"], { cwd: dir, stdio: "ignore" });
  return { binary: join(dir, "dist", "agentmail"), dir };
}
