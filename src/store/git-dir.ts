/**
 * Whether a directory is a git directory, decided as git's own `is_git_directory` (setup.c) decides it, in process
 * (a few stat calls; `git rev-parse` costs ~1.7 ms): HEAD is a symlink into `refs/`, or a file holding `ref: refs/…`
 * or an object id; and the common dir (GIT_COMMON_DIR, else the `commondir` file, else the dir itself) has
 * `objects/` (or GIT_OBJECT_DIRECTORY) and `refs/`. So GIT_DIR=/etc is not taken for a repository.
 */
import { existsSync, lstatSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";

type Env = Record<string, string | undefined>;

const HEX_DIGITS = "0123456789abcdefABCDEF";
/** git's isspace: the ASCII whitespace. */
const GIT_SPACE = " \t\n\v\f\r";

/** An object id at the start of HEAD (a detached HEAD): git takes any text that starts with 40 hex digits. */
function startsWithObjectId(text: string): boolean {
  if (text.length < 40) return false;
  for (let i = 0; i < 40; i++) if (!HEX_DIGITS.includes(text[i]!)) return false;
  return true;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** git's validate_headref. */
function headLooksLikeARef(head: string): boolean {
  try {
    if (lstatSync(head).isSymbolicLink()) return readlinkSync(head).startsWith("refs/");
    const text = readFileSync(head, "latin1").slice(0, 255);
    if (!text.startsWith("ref:")) return startsWithObjectId(text);
    let at = 4;
    while (at < text.length && GIT_SPACE.includes(text[at]!)) at++;
    return text.startsWith("refs/", at);
  } catch {
    return false;
  }
}

/** The common dir of a git dir: GIT_COMMON_DIR (relative to cwd), else what its `commondir` file names, else itself. */
function commonDirOf(gitDir: string, env: Env, cwd: string): string {
  if (env.GIT_COMMON_DIR) return resolve(cwd, env.GIT_COMMON_DIR);
  const file = join(gitDir, "commondir");
  // Looked for before it is read: the main checkout has none, and a failed read (a thrown error) costs more.
  if (!existsSync(file)) return gitDir;
  try {
    const pointer = readFileSync(file, "utf8").trim();
    return isAbsolute(pointer) ? pointer : resolve(gitDir, pointer);
  } catch {
    return gitDir;
  }
}

/** The common dir of `gitDir` (where objects, refs and the mail store live) if it is a git directory; else null. */
export function gitCommonDir(gitDir: string, env: Env, cwd = process.cwd()): string | null {
  if (!headLooksLikeARef(join(gitDir, "HEAD"))) return null;
  const common = commonDirOf(gitDir, env, cwd);
  const objects = env.GIT_OBJECT_DIRECTORY ? resolve(cwd, env.GIT_OBJECT_DIRECTORY) : join(common, "objects");
  return isDirectory(objects) && isDirectory(join(common, "refs")) ? common : null;
}

/** The directory a `.git` file (`gitdir: <path>`, as in a linked worktree) points at, or null if it is not one. */
export function gitFileTarget(path: string): string | null {
  try {
    if (!statSync(path).isFile()) return null;
    const match = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(path, "utf8"));
    return match ? resolve(dirname(path), match[1]!) : null;
  } catch {
    return null;
  }
}
