/**
 * The paths a claim covers, and whether two claims overlap. Pure: no I/O.
 *
 * A claim names a path or a glob relative to the repository root (actions/claim-paths.ts makes one of what the caller
 * gives: a path relative to its working directory, through symlinks), in this dialect:
 *
 *   *    any run of characters within one path segment (none included), never `/`
 *   ?    exactly one character, never `/`
 *   **   as a whole segment: any number of segments, none included (`src/**`, `**\/test`, `a/**\/b`)
 *
 * Every other character is itself: `[id].tsx` names that file (brackets are not character classes, braces not
 * alternatives, a backslash escapes nothing), names compare exactly (case counts), and a leading dot is matched like
 * any other character. A pattern covers exactly the paths it matches: `src/*` covers `src/lib` but not
 * `src/lib/a.ts`. A directory is claimed whole by `src/**`, by `src/` (a trailing slash), or by `src` when src is a
 * directory in the work tree (the caller checks, see normalizeClaimPath): all three are written `src/**`.
 *
 * Overlap is decided exactly: two claims overlap when one path exists that both cover. Each claim is a small
 * automaton over segments (`**` loops on any segment) whose segments are automata over characters (`*` loops on any
 * character); the two overlap when the product of their automata reaches the end of both, which a search over
 * (position in one, position in the other) decides in at most (n+1)(m+1) steps. So overlap is symmetric by
 * construction: `src/**` and `src/a.ts` overlap, `*.ts` and `src/*.ts` do not (`*` never crosses a `/`), `src/*.ts`
 * and `src/a.ts` do, `**\/*.md` and `src/a.ts` do not.
 */
import { isAbsolute, relative, resolve } from "node:path";
import { AgentmailError } from "../mail/errors.ts";
import { displayName } from "../mail/names.ts";

/** Longest claim accepted, in characters: claims are kept in one document the guard reads on every edit. */
export const MAX_PATH_LENGTH = 1024;

const GLOBSTAR = "**";
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

const segmentsOf = (path: string): string[] => (path === "" ? [] : path.split("/"));

/** Whether one segment glob (`*`, `?`, literal characters) and another match a common non-empty segment. */
export function segmentsOverlap(a: string, b: string): boolean {
  const x = Array.from(a);
  const y = Array.from(b);
  return productReachesEnd(x.length, y.length, (i, j) => {
    const moves: [number, number][] = [];
    if (x[i] === "*") moves.push([i + 1, j]);
    if (y[j] === "*") moves.push([i, j + 1]);
    if (i < x.length && j < y.length) {
      const p = x[i]!;
      const q = y[j]!;
      const wild = (char: string) => char === "*" || char === "?";
      if (wild(p) || wild(q) || p === q) moves.push([p === "*" ? i : i + 1, q === "*" ? j : j + 1]);
    }
    return moves;
  });
}

/** Depth-first search over pairs of positions from (0, 0): whether (n, m) is reachable through `moves`. */
function productReachesEnd(n: number, m: number, moves: (i: number, j: number) => [number, number][]): boolean {
  const seen = new Set<number>();
  const stack: [number, number][] = [[0, 0]];
  while (stack.length > 0) {
    const [i, j] = stack.pop()!;
    const key = i * (m + 1) + j;
    if (seen.has(key)) continue;
    seen.add(key);
    if (i === n && j === m) return true;
    for (const move of moves(i, j)) stack.push(move);
  }
  return false;
}

/** Whether some path is covered by both claims (normalized paths, see normalizeClaimPath). Symmetric. */
export function overlaps(a: string, b: string): boolean {
  const x = segmentsOf(a);
  const y = segmentsOf(b);
  return productReachesEnd(x.length, y.length, (i, j) => {
    const moves: [number, number][] = [];
    if (x[i] === GLOBSTAR) moves.push([i + 1, j]);
    if (y[j] === GLOBSTAR) moves.push([i, j + 1]);
    if (i < x.length && j < y.length) {
      const p = x[i]!;
      const q = y[j]!;
      if (p === GLOBSTAR || q === GLOBSTAR || segmentsOverlap(p, q)) moves.push([p === GLOBSTAR ? i : i + 1, q === GLOBSTAR ? j : j + 1]);
    }
    return moves;
  });
}

/** Whether a claim covers a file (a path relative to the repository root). */
export const covers = (claim: string, file: string): boolean => overlaps(claim, file);

/** Whether the text has glob characters: a plain path is shown and compared as it is. */
export const isGlob = (path: string): boolean => path.includes("*") || path.includes("?");

/** A path `claim` refuses, as given, and why. */
export function badPath(given: string, why: string): AgentmailError {
  return new AgentmailError("usage", `cannot claim '${displayName(given)}': ${why}`);
}

/**
 * A claim as given (relative to the repository root, or absolute inside the work tree `workTree`) in its one
 * written form: `./`, `.` and empty segments dropped, `..` resolved within the repository; a directory (a trailing
 * `/`, or a plain path `isDirectory` says is one) becomes `<dir>/**`; the whole repository is `**`. Refused: empty,
 * control characters, over MAX_PATH_LENGTH, outside the repository.
 */
export function normalizeClaimPath(given: string, workTree: string | null, isDirectory: (path: string) => boolean = () => false): string {
  if (given.trim() === "") throw badPath(given, "the path is empty; give a path or glob in the repository");
  if (CONTROL.test(given)) throw badPath(given, "it has control characters");
  let path = given;
  if (isAbsolute(path)) {
    const inside = workTree === null ? null : relative(workTree, path);
    if (inside === null || inside === ".." || inside.startsWith("../") || isAbsolute(inside)) {
      throw badPath(given, "it is outside the repository; give a path inside it");
    }
    path = inside;
  }
  const segments: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (segments.length === 0 || segments[segments.length - 1] === GLOBSTAR) {
        throw badPath(given, "it leads out of the repository; give a path inside it");
      }
      segments.pop();
      continue;
    }
    // `a**b` is `a*b`: stars within a segment never cross a `/`.
    segments.push(segment === GLOBSTAR ? segment : segment.replace(/\*{2,}/g, "*"));
  }
  const plain = segments.join("/");
  if (segments.length > 0 && (path.endsWith("/") || (!isGlob(plain) && isDirectory(plain)))) segments.push(GLOBSTAR);
  // Consecutive `**` are one.
  const tidy = segments.filter((segment, index) => !(segment === GLOBSTAR && segments[index - 1] === GLOBSTAR));
  const normalized = tidy.length === 0 ? GLOBSTAR : tidy.join("/");
  if (normalized.length > MAX_PATH_LENGTH) throw badPath(given, `it is over ${MAX_PATH_LENGTH} characters`);
  return normalized;
}

/**
 * A file an agent is about to change, as a path relative to the repository root, or null when it is outside the
 * work tree (nothing there can be claimed). `file` is absolute or relative to `cwd`.
 */
export function repositoryPathOf(file: string, cwd: string, workTree: string): string | null {
  const inside = relative(workTree, resolve(cwd, file));
  if (inside === "" || inside === ".." || inside.startsWith("../") || isAbsolute(inside)) return null;
  return inside;
}
