/**
 * The Go AgentMail, the reference the benchmarks set agentmail against where it does the same work: a static build
 * of the program the spec describes, kept in `../shared/anchors/` beside the project (or beside the directory of a
 * worktree of it); AGENTMAIL_GO names another. Never a dependency: without it the benchmarks leave its rows out.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";

export function findGo(): string | null {
  if (process.env.AGENTMAIL_GO) return existsSync(process.env.AGENTMAIL_GO) ? process.env.AGENTMAIL_GO : null;
  for (let dir = join(import.meta.dir, ".."); dir !== dirname(dir); dir = dirname(dir)) {
    const candidate = join(dirname(dir), "shared", "anchors", "agentmail-go-linux-x64");
    if (existsSync(candidate)) return candidate;
  }
  return null;
}
