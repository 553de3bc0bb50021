import { lstatSync, mkdirSync, readdirSync, statSync, writeFileSync, type Stats } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { AgentmailError, errorWithNextStep } from "../mail/errors.ts";
import { terminalLine } from "../mail/terminal-text.ts";
import { gitCommonDir, gitFileTarget } from "./git-dir.ts";
import { MARKER, olderStoreEntry, TOMBSTONE } from "./local/layout.ts";
import { parseMovedNote, StoreMoved } from "./moved.ts";
import { readTombstone } from "./local/tombstone.ts";

export interface Repository {
  /** The git dir shared by every worktree (`commondir`), where the mail store lives. */
  commonDir: string;
  /** The top of the worktree the caller is in, or null for a bare or work-tree-less GIT_DIR. */
  workTree: string | null;
}

type Env = Record<string, string | undefined>;

function notARepository(dir: string, why: string, fix: string): AgentmailError {
  return new AgentmailError("no_store", `not a git repository: '${dir}' (${why}); ${fix}`);
}

/** GIT_DIR given: it must be a git dir (or a `.git` file naming one), and GIT_COMMON_DIR, if given, its common dir. */
function explicitRepository(cwd: string, env: Env, named: string): Repository {
  const given = resolve(cwd, named);
  const gitDir = gitFileTarget(given) ?? given;
  const commonDir = gitCommonDir(gitDir, env, cwd);
  if (commonDir === null) {
    if (onlyCommonDirFails(gitDir, env, cwd)) throw badCommonDir(cwd, env);
    throw notARepository(given, "from GIT_DIR", "point GIT_DIR at a repository's .git directory, or unset it");
  }
  return { commonDir, workTree: env.GIT_WORK_TREE ? resolve(cwd, env.GIT_WORK_TREE) : cwd };
}

/** Whether a git dir is refused only because GIT_COMMON_DIR names no common dir: then that is what to fix. */
function onlyCommonDirFails(gitDir: string, env: Env, cwd: string): boolean {
  if (!env.GIT_COMMON_DIR) return false;
  return gitCommonDir(gitDir, { ...env, GIT_COMMON_DIR: undefined }, cwd) !== null;
}

function badCommonDir(cwd: string, env: Env): AgentmailError {
  const fix = "point GIT_COMMON_DIR at a repository's common git directory (the one with objects/ and refs/), or unset it";
  return notARepository(resolve(cwd, env.GIT_COMMON_DIR!), "from GIT_COMMON_DIR", fix);
}

/**
 * Finds the repository in process by walking up from cwd (~15 µs, where `git rev-parse` costs ~1.7 ms), accepting
 * only what git accepts (see git-dir.ts): a `.git` directory that is not a git dir is passed over, a `.git` file
 * naming something that is not one is an error. In a linked worktree `.git` is a file pointing at
 * `.git/worktrees/<name>`, whose `commondir` leads back to the main git dir, so every worktree and subdirectory of
 * one repository finds the same store.
 */
export function findRepository(cwd: string, env: Env): Repository | null {
  if (env.GIT_DIR) return explicitRepository(cwd, env, env.GIT_DIR);
  let commonDirFailed = false;
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const dotGit = join(dir, ".git");
    const kind = entryKind(dotGit);
    if (kind === "directory") {
      const commonDir = gitCommonDir(dotGit, env, cwd);
      if (commonDir !== null) return { commonDir, workTree: dir };
      commonDirFailed ||= onlyCommonDirFails(dotGit, env, cwd);
    } else if (kind === "file") {
      const target = gitFileTarget(dotGit);
      if (target !== null) {
        const commonDir = gitCommonDir(target, env, cwd);
        if (commonDir !== null) return { commonDir, workTree: dir };
        if (onlyCommonDirFails(target, env, cwd)) throw badCommonDir(cwd, env);
        throw notARepository(target, `named by ${dotGit}`, `fix or remove ${dotGit}`);
      }
    }
    if (dirname(dir) === dir) {
      if (commonDirFailed) throw badCommonDir(cwd, env);
      return null;
    }
  }
}

/** One stat per level of the walk: most levels have no `.git` at all. */
function entryKind(path: string): "directory" | "file" | null {
  try {
    const stat = statSync(path);
    return stat.isDirectory() ? "directory" : stat.isFile() ? "file" : null;
  } catch {
    return null;
  }
}

/** Where the store should be, before it is checked: $AGENTMAIL_DIR, else `mail/` in the common git dir. */
function storePath(cwd: string, env: Env, repository: Repository | null | undefined): string {
  const dir = env.AGENTMAIL_DIR;
  if (dir && isAbsolute(dir)) return resolve(dir);
  const found = repository === undefined ? findRepository(cwd, env) : repository;
  if (dir) {
    // Resolved against cwd, a relative store would be a different one in each subdirectory.
    if (!found?.workTree) {
      const why = `AGENTMAIL_DIR=${terminalLine(dir)} is relative and there is no repository top level to resolve it against`;
      throw new AgentmailError("no_store", `${why}; give an absolute path`);
    }
    return resolve(found.workTree, dir);
  }
  if (!found) {
    throw errorWithNextStep("no_store", "not inside a git repository, so there is no mail store", "runInRepository");
  }
  return join(found.commonDir, "mail");
}

const NOT_FOLLOWED = "is a symlink, which agentmail does not follow";

function unsafeStore(root: string, problem: string, fix: string): AgentmailError {
  return new AgentmailError("unsafe_path", `the mail store ${root} ${problem}; ${fix}`);
}

/**
 * Marks a directory as agentmail's store: the marker is created with O_EXCL, so of two processes adopting one
 * directory at once one creates it and the other finds it. Not being able to (a read-only store) only means the next
 * command looks again.
 */
function markStore(root: string): void {
  try {
    writeFileSync(join(root, MARKER), "agentmail keeps its mail in this directory; see 'agentmail doctor'\n", { flag: "wx", mode: 0o600 });
  } catch {
    // Already marked by another process, or not writable: nothing to do now.
  }
}

export interface StoreCheck {
  /** Accept a store whose mail moved (migrate reads it, doctor reports it): otherwise that fails with code `moved`. */
  evenIfMoved?: boolean;
}

/**
 * Refuses a store agentmail must not write into: `/`; a symlink (the store directory itself is never followed;
 * its parents may be links, as /tmp is on macOS); anything but a directory; a directory that is neither marked as
 * agentmail's store (layout.ts) nor empty nor holding only what an older agentmail kept there (then it is marked
 * now). Files a user put into a marked store never stop mail (doctor lists them). A store whose mail moved fails
 * with where it went (moved.ts). A few stat calls and one readdir: cheap enough for every command.
 */
function checkStore(root: string, { evenIfMoved = false }: StoreCheck): void {
  const elsewhere = "set AGENTMAIL_DIR to a new or empty directory";
  if (dirname(root) === root) throw unsafeStore(root, "is the file system's root", elsewhere);
  let stat: Stats;
  try {
    stat = lstatSync(root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  if (stat.isSymbolicLink()) throw unsafeStore(root, NOT_FOLLOWED, `replace it by a directory, or ${elsewhere}`);
  if (!stat.isDirectory()) throw unsafeStore(root, "is not a directory", `remove it, or ${elsewhere}`);
  const names = readdirSync(root);
  if (!evenIfMoved && names.includes(TOMBSTONE)) throw new StoreMoved(root, readTombstone(root) ?? parseMovedNote(null));
  if (names.includes(MARKER)) return;
  const stray = names.find((name) => !olderStoreEntry(name));
  if (stray !== undefined) {
    const fix = `mail goes only into a directory of its own: ${elsewhere} (or, if this is agentmail's store, move "${terminalLine(stray)}" out of it)`;
    throw unsafeStore(root, `holds "${terminalLine(stray)}" and is not marked as agentmail's store (${MARKER})`, fix);
  }
  markStore(root);
}

/**
 * The mail root: $AGENTMAIL_DIR (a relative one from the repository's top level), else `mail/` in the repository's
 * common git dir (found here unless given), checked to be a place agentmail may write (see checkStore).
 */
export function mailRoot(cwd: string, env: Env, repository?: Repository | null, check: StoreCheck = {}): string {
  const root = storePath(cwd, env, repository);
  checkStore(root, check);
  return root;
}

/**
 * This repository's own directory for what stays on this host: the file store, or with AGENTMAIL_URL the directory
 * that keeps the mailman's and the bridges' files (a file store whose mail moved to the server still does).
 */
export function localRoot(cwd: string, env: Env): string {
  return mailRoot(cwd, env, undefined, { evenIfMoved: Boolean(env.AGENTMAIL_URL) });
}

function refuseUnsafe(path: string, fix: string): void {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) throw unsafeStore(path, NOT_FOLLOWED, fix);
  if (!stat.isDirectory()) throw unsafeStore(path, "is not a directory", fix);
}

/** Creates the root (0700) on first use, marked as agentmail's store, and refuses anything but a real directory there. */
export function ensureRoot(root: string): string {
  let created: string | undefined;
  try {
    created = mkdirSync(root, { recursive: true, mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EEXIST")
      throw new AgentmailError("io", `cannot create the mail store ${root} (${code}); check its parent's permissions or set AGENTMAIL_DIR`);
  }
  refuseUnsafe(root, "replace it by a directory, or set AGENTMAIL_DIR");
  if (created !== undefined) markStore(root);
  return root;
}

/** A directory of the store (`.roles/`, …), created (0700) in the root on first use; never a symlink. */
export function ensureStoreDirectory(root: string, path: string): string {
  ensureRoot(root);
  try {
    mkdirSync(path, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  refuseUnsafe(path, "remove it; agentmail makes it again");
  return path;
}
