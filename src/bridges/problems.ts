/**
 * Files left alone, remembered in `<root>/.bridges/problems.json` so that the long-running syncs (`bridge run`, the
 * mailman) report each one once, not on every pass, and `doctor` can list them. A file that is fixed or gone
 * drops out; one whose reason changes is reported again.
 */
import { readFileSync } from "node:fs";
import { replaceFile } from "../store/files.ts";
import type { Left } from "./inbound.ts";
import { problemsPath } from "./store-files.ts";

export function readProblems(root: string): Left[] {
  try {
    const value = JSON.parse(readFileSync(problemsPath(root), "utf8")) as { left?: Left[] };
    const left = Array.isArray(value.left) ? value.left : [];
    return left.filter((entry) => typeof entry?.file === "string" && typeof entry.reason === "string");
  } catch {
    return [];
  }
}

const keyOf = (left: Left) => `${left.bridge}\u0000${left.file}\u0000${left.reason}`;

/**
 * Stores this pass's complete list of files left alone and returns those not reported before. The caller holds the
 * sync lock. Written only when the list changed.
 */
export function rememberProblems(root: string, left: Left[]): Left[] {
  const before = readProblems(root);
  const known = new Set(before.map(keyOf));
  const fresh = left.filter((entry) => !known.has(keyOf(entry)));
  const now = new Set(left.map(keyOf));
  if (fresh.length > 0 || before.some((entry) => !now.has(keyOf(entry)))) {
    replaceFile(problemsPath(root), JSON.stringify({ left }, null, 1) + "\n");
  }
  return fresh;
}
