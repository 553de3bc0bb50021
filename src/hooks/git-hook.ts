/**
 * agentmail's git pre-commit hook: a small sh script that runs the hook it replaced first (moved aside to
 * `pre-commit.agentmail-chained`, never overwritten), then `agentmail guard git`. Uninstalling removes the script and
 * moves the chained hook back, so the repository's hooks end as they were. One hooks directory serves every worktree
 * of a repository (the common git dir's hooks/, or core.hooksPath): installing from any worktree guards them all.
 */
import { chmodSync, closeSync, lstatSync, openSync, readFileSync, renameSync, rmSync, writeSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { AgentmailError } from "../mail/errors.ts";
import { shellQuote } from "../mail/next-steps.ts";
import { hooksDirShown, hooksPathFix, type HooksPathSetting } from "./git.ts";

/** The line that tells our script from anyone else's. */
const MARK = "# agentmail pre-commit guard:";
export const CHAINED = "pre-commit.agentmail-chained";

/**
 * The script. When the binary cannot be run (not on the PATH a GUI's or CI's git has, or moved), the guard fails open,
 * as when it cannot read the claims: the commit goes ahead, and stderr says so, how to fix it, and how to skip the
 * check on purpose. `exec` of a missing command would instead refuse every commit with `exec: agentmail: not found`.
 */
export function preCommitScript(binary: string): string {
  const quoted = shellQuote(binary);
  const notFound =
    `agentmail pre-commit guard: ${binary} was not found (it is not on the PATH this git runs hooks with), so the claims ` +
    "were not checked; committing anyway. Fix: put agentmail on that PATH, or install the hook with the binary's full " +
    "path (agentmail hooks install git --binary /path/to/agentmail). To skip the check on purpose: AGENTMAIL_GUARD=off git commit ...";
  return [
    "#!/bin/sh",
    `${MARK} written by 'agentmail hooks install git'; 'agentmail hooks uninstall git' removes it and puts back`,
    `# the pre-commit hook it runs first (${CHAINED}), if there was one. It refuses a commit that changes paths`,
    "# another agent has claimed (agentmail claims); a human who knows better: AGENTMAIL_GUARD=off git commit ...",
    "# Without the agentmail binary it lets the commit be, saying so.",
    `chained="$(dirname "$0")/${CHAINED}"`,
    'if [ -x "$chained" ]; then',
    '  "$chained" "$@" || exit $?',
    "fi",
    'if [ "$AGENTMAIL_GUARD" = off ]; then',
    "  exit 0",
    "fi",
    `if command -v ${quoted} >/dev/null 2>&1; then`,
    `  exec ${quoted} guard git`,
    "fi",
    `echo ${shellQuote(notFound)} >&2`,
    "exit 0",
    "",
  ].join("\n");
}

export type GitHookAction = "created" | "updated" | "unchanged" | "removed" | "restored" | "absent";

export interface GitHookReport {
  path: string;
  action: GitHookAction;
  /** The hook that was there before, now run first from here (install), or put back (uninstall). */
  chained: string | null;
}

function present(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Whether the file at `path` is our script (a symlink or anything unreadable is not). */
function isOurs(path: string): boolean {
  try {
    return lstatSync(path).isFile() && readFileSync(path, "utf8").includes(MARK);
  } catch {
    return false;
  }
}

/** Writes the script beside the target and renames it in: git never runs a half-written hook. */
function writeScript(path: string, text: string): void {
  const temp = `${path}.agentmail-${process.pid}`;
  const fd = openSync(temp, "wx", 0o755);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  chmodSync(temp, 0o755);
  renameSync(temp, path);
}

function conflict(message: string): AgentmailError {
  return new AgentmailError("conflict", `${message}; nothing was changed`);
}

/** Installs (or updates) the script in `dir`, chaining a pre-commit hook that is there. `dryRun` only reports. */
export function installGitHook(dir: string, binary: string, dryRun: boolean): GitHookReport {
  const path = join(dir, "pre-commit");
  const chained = join(dir, CHAINED);
  const text = preCommitScript(binary);
  if (isOurs(path)) {
    const same = readFileSync(path, "utf8") === text;
    if (!same && !dryRun) writeScript(path, text);
    return { path, action: same ? "unchanged" : "updated", chained: present(chained) ? chained : null };
  }
  const existing = present(path);
  if (existing && present(chained)) {
    throw conflict(`both ${path} and ${chained} exist, and neither is agentmail's; move one of them away by hand, then install again`);
  }
  if (!dryRun) {
    mkdirSync(dir, { recursive: true });
    if (existing) renameSync(path, chained);
    try {
      writeScript(path, text);
    } catch (error) {
      if (existing) renameSync(chained, path);
      throw error;
    }
  }
  return { path, action: "created", chained: existing ? chained : null };
}

/** Removes the script from `dir` and puts the chained hook back; a pre-commit hook that is not ours is left alone. */
export function uninstallGitHook(dir: string, dryRun: boolean): GitHookReport {
  const path = join(dir, "pre-commit");
  const chained = join(dir, CHAINED);
  const ours = isOurs(path);
  const toRestore = present(chained) && (ours || !present(path));
  if (!ours && present(path)) return { path, action: "unchanged", chained: null };
  if (!dryRun) {
    if (ours) rmSync(path);
    if (toRestore) renameSync(chained, path);
  }
  if (toRestore) return { path, action: "restored", chained };
  return { path, action: ours ? "removed" : "absent", chained: null };
}

/** The file that stands where `dir` or one of its parents should be a directory, or null. */
function fileInTheWay(dir: string): string | null {
  for (let path = dir; ; path = dirname(path)) {
    try {
      return lstatSync(path).isDirectory() ? null : path;
    } catch {
      // Not there: its parent may be the file.
    }
    if (dirname(path) === path) return null;
  }
}

/** A file system error's cause, in words. */
function whyNotWritten({ code, syscall }: NodeJS.ErrnoException): string {
  switch (code) {
    case "EACCES":
    case "EPERM":
      return "this user may not write there (permission denied)";
    case "EROFS":
      return "it is on a read-only file system";
    case "ENOSPC":
    case "EDQUOT":
      return "the disk (or this user's quota) is full";
    case "ENOENT":
      return `it cannot be created there (${syscall ?? "mkdir"}: no such file or directory)`;
    default:
      return `${syscall ?? "write"}: ${code}`;
  }
}

/**
 * Why git's hooks directory could not be written, and what to do, in its terms (not the mail store's): which
 * directory (and the core.hooksPath setting that chose it), why (a file in its place, permissions, a read-only or full
 * disk), and the fix — another core.hooksPath or none, or the directory made writable. What is not a file system
 * error (a conflict with another hook) is returned as it is.
 */
export function unusableHooksDir(dir: string, error: unknown, change: "install" | "uninstall", setting: HooksPathSetting | null): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (error instanceof AgentmailError || typeof code !== "string") return error;
  const file = code === "EEXIST" || code === "ENOTDIR" ? fileInTheWay(dir) : null;
  const why = file !== null ? `${file} is a file, not a directory` : whyNotWritten(error as NodeJS.ErrnoException);
  const again = `agentmail hooks ${change} git`;
  const fix =
    setting !== null
      ? hooksPathFix(setting, again)
      : file !== null
        ? `move ${file} out of the way, then run ${again} again`
        : `make ${dir} a directory you can write (ls -ld shows its owner), then run ${again} again`;
  return new AgentmailError("io", `cannot write git's hooks directory ${hooksDirShown(dir, setting)}: ${why}; ${fix}`);
}
