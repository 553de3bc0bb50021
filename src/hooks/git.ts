/**
 * What the git guard needs of git itself: where the repository's hooks live and which paths a commit touches. Asked
 * of git (`git rev-parse`, `git diff`): only git knows core.hooksPath from every config layer, the hooks directory a
 * linked worktree shares with the main one, and the index a commit is made from (GIT_INDEX_FILE for `git commit -a`
 * or a commit of named paths). Not on any hot path: an install, and one commit.
 */
import { AgentmailError } from "../mail/errors.ts";

type Env = Record<string, string | undefined>;

function git(args: string[], cwd: string, env: Env): string {
  let result: ReturnType<typeof Bun.spawnSync>;
  try {
    result = Bun.spawnSync(["git", ...args], { cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: 30_000 });
  } catch (error) {
    throw new AgentmailError(
      "io",
      `cannot run git (${(error as NodeJS.ErrnoException).code ?? error}); install git and put it on the PATH`,
    );
  }
  if (result.exitCode !== 0) {
    const said = (result.stderr?.toString() ?? "").trim().split("\n")[0] ?? "";
    throw new AgentmailError("no_store", `git ${args[0]} failed (${said || `exit ${result.exitCode}`}); run this inside a git repository`);
  }
  return result.stdout?.toString() ?? "";
}

/** The directory git runs this repository's hooks from: core.hooksPath when set, else the common git dir's hooks/. */
export function gitHooksDir(cwd: string, env: Env): string {
  return git(["rev-parse", "--path-format=absolute", "--git-path", "hooks"], cwd, env).trim();
}

/** The paths the commit being made changes (added, modified, deleted; both sides of a rename), from the repository root. */
export function stagedPaths(cwd: string, env: Env): string[] {
  const out = git(["diff", "--cached", "--name-only", "--no-renames", "-z"], cwd, env);
  return out.split("\0").filter((path) => path !== "");
}
