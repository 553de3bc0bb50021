/**
 * Where a path given to `claim`, `release` or an edit guard lands in the repository: taken as git takes paths,
 * relative to the working directory (`claim a.ts` run in `src/` claims `src/a.ts`; absolute paths inside the work
 * tree work from anywhere), and through symlinks to the real file, so a claim and an edit of one file meet however
 * each names it: an edit of `alias/a.ts` with `alias -> src` is an edit of `src/a.ts`, and a repository reached
 * through a symlinked path is the same repository. A path that does not exist yet (a file about to be written, a glob)
 * is resolved through its deepest part that does. What this decides, the pure rules of claims/patterns.ts then write.
 */
import { lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { badPath, isGlob, normalizeClaimPath } from "../claims/patterns.ts";

/** Links followed at most on the way (the kernel's own bound is 40): a loop ends as the lexical path. */
const MAX_LINKS = 40;

/**
 * `path` (absolute) with every symlink on it resolved, as far as it exists; the rest is appended as given. A dangling
 * link in the path is followed too: writing through it creates its target.
 */
export function realPath(path: string, links = 0): string {
  const missing: string[] = [];
  let head = path;
  for (;;) {
    try {
      const real = realpathSync(head);
      return missing.length === 0 ? real : join(real, ...missing.reverse());
    } catch {
      // Not there (or not reachable): perhaps a dangling link, else resolve its parent.
    }
    let target: string | null = null;
    try {
      if (lstatSync(head).isSymbolicLink()) target = readlinkSync(head);
    } catch {
      // Not there at all.
    }
    if (target !== null && links < MAX_LINKS) {
      const rest = missing.length === 0 ? [] : [...missing].reverse();
      return realPath(join(resolve(dirname(head), target), ...rest), links + 1);
    }
    const parent = dirname(head);
    if (parent === head) return path;
    missing.push(basename(head));
    head = parent;
  }
}

/** `inside` relative to `tree`, or null when it is not inside it. */
function within(tree: string, inside: string): string | null {
  const rel = relative(tree, inside);
  if (rel === "" || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return null;
  return rel;
}

/**
 * A file an agent is about to change (absolute, or relative to `cwd`), as a path from the root of `workTree`, through
 * symlinks; null when it is outside the work tree (nothing there can be claimed).
 */
export function repositoryFile(file: string, cwd: string, workTree: string): string | null {
  return within(realPath(workTree), realPath(resolve(cwd, file)));
}

/**
 * A claim as given, in its one written form (patterns.ts normalizeClaimPath): relative to `cwd`, or absolute; its
 * literal part (before the first glob segment) resolved through symlinks. Refused (usage) when it leads out of the
 * work tree. Without a work tree (no repository), as given.
 */
export function claimPath(given: string, cwd: string, workTree: string | null): string {
  if (workTree === null || given.trim() === "" || /[\u0000-\u001f\u007f-\u009f]/.test(given)) return normalizeClaimPath(given, workTree);
  const tree = realPath(workTree);
  const isDirectory = (path: string) => {
    try {
      return statSync(join(tree, path)).isDirectory();
    } catch {
      return false;
    }
  };
  const absolute = resolve(cwd, given);
  const segments = absolute.split(sep);
  const firstGlob = segments.findIndex((segment) => isGlob(segment));
  const literal = firstGlob === -1 ? absolute : segments.slice(0, firstGlob).join(sep) || sep;
  const globs = firstGlob === -1 ? [] : segments.slice(firstGlob);
  const real = join(realPath(literal), ...globs);
  const inside = within(tree, real) ?? (real === tree ? "." : null);
  if (inside === null) {
    const how = within(tree, absolute) !== null || absolute === tree ? " through a symlink" : "";
    throw badPath(
      given,
      isAbsolute(given)
        ? `it is outside the repository${how}; give a path inside it`
        : `it leads out of the repository${how}; give a path inside it`,
    );
  }
  return normalizeClaimPath(inside + (given.endsWith("/") ? "/" : ""), tree, isDirectory);
}
