/**
 * What the git guard needs of git itself: where the repository's hooks live and which paths a commit touches. Asked
 * of git (`git rev-parse`, `git diff`): only git knows core.hooksPath from every config layer, the hooks directory a
 * linked worktree shares with the main one, and the index a commit is made from (GIT_INDEX_FILE for `git commit -a`
 * or a commit of named paths). Not on any hot path: an install, and one commit.
 */
import { AgentmailError } from "../mail/errors.ts";
import { shellQuote } from "../mail/next-steps.ts";

type Env = Record<string, string | undefined>;

/** git's answer: its stdout, or why it failed (the first line of its stderr, else its exit code). */
function run(args: string[], cwd: string, env: Env): { stdout: string; failure: string | null } {
  let result: ReturnType<typeof Bun.spawnSync>;
  try {
    result = Bun.spawnSync(["git", ...args], { cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: 30_000 });
  } catch (error) {
    throw new AgentmailError(
      "io",
      `cannot run git (${(error as NodeJS.ErrnoException).code ?? error}); install git and put it on the PATH`,
    );
  }
  if (result.exitCode === 0) return { stdout: result.stdout?.toString() ?? "", failure: null };
  const said = (result.stderr?.toString() ?? "").trim().split("\n")[0] ?? "";
  return { stdout: "", failure: said || `exit ${result.exitCode}` };
}

function git(args: string[], cwd: string, env: Env): string {
  const { stdout, failure } = run(args, cwd, env);
  if (failure !== null) throw new AgentmailError("no_store", `git ${args[0]} failed (${failure}); run this inside a git repository`);
  return stdout;
}

/**
 * The directory git runs this repository's hooks from: core.hooksPath when set, else the common git dir's hooks/. A
 * core.hooksPath git cannot resolve is refused in its own terms: the setting, where it is set, and how to change it.
 */
export function gitHooksDir(cwd: string, env: Env): string {
  const args = ["rev-parse", "--path-format=absolute", "--git-path", "hooks"];
  const { stdout, failure } = run(args, cwd, env);
  if (failure === null) return stdout.trim();
  const setting = hooksPathSetting(cwd, env);
  if (setting === null) return git(args, cwd, env);
  throw new AgentmailError(
    "io",
    `git cannot use ${settingShown(setting)} (${scopeShown(setting)}) as its hooks directory: ${failure}; ${hooksPathFix(setting, "the same command")}`,
  );
}

/** core.hooksPath as git reads it: the value, and the config it is set in (`local`, `global`, `system`, `worktree`, `command`). */
export interface HooksPathSetting {
  value: string;
  scope: string;
}

/** The `git config` options that name the config core.hooksPath is set in. */
const SCOPE_OPTIONS: Record<string, string> = { local: "", global: " --global", system: " --system", worktree: " --worktree" };

const settingShown = (setting: HooksPathSetting) => `core.hooksPath ${shellQuote(setting.value)}`;
const scopeShown = (setting: HooksPathSetting) => `set in the ${setting.scope} git config`;

/** What to do about a core.hooksPath that cannot serve: point it elsewhere or unset it, in the config it is set in; then `again`. */
export function hooksPathFix(setting: HooksPathSetting, again: string): string {
  const options = SCOPE_OPTIONS[setting.scope];
  if (options === undefined)
    return `change core.hooksPath where it is set (git's -c option or GIT_CONFIG_* variables), then run ${again} again`;
  return (
    `point core.hooksPath at a directory you can write (git config${options} core.hooksPath <dir>), or unset it to use ` +
    `the repository's own hooks directory (git config${options} --unset core.hooksPath), then run ${again} again`
  );
}

/** How a failure names the hooks directory: the path, and the core.hooksPath setting that chose it, if any. */
export const hooksDirShown = (dir: string, setting: HooksPathSetting | null): string =>
  setting === null ? dir : `${dir} (${settingShown(setting)}, ${scopeShown(setting)})`;

/** core.hooksPath when it is set (from any config layer), else null. Asked only to word a failure. */
export function hooksPathSetting(cwd: string, env: Env): HooksPathSetting | null {
  try {
    const line = git(["config", "--show-scope", "--get", "core.hooksPath"], cwd, env).replace(/\n$/, "");
    const tab = line.indexOf("\t");
    return tab === -1 ? null : { scope: line.slice(0, tab), value: line.slice(tab + 1) };
  } catch {
    // Not set (git config exits 1), or a git too old for --show-scope: worded without it.
    return null;
  }
}

/** The paths the commit being made changes (added, modified, deleted; both sides of a rename), from the repository root. */
export function stagedPaths(cwd: string, env: Env): string[] {
  const out = git(["diff", "--cached", "--name-only", "--no-renames", "-z"], cwd, env);
  return out.split("\0").filter((path) => path !== "");
}
