import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Names listed in `.agentmailignore` at the repository's top level (one per line; blank lines and `#` comments
 * ignored): windows hidden from `recipients` and refused by `send`.
 */
export function ignoredNames(workTree: string | null): Set<string> {
  if (!workTree) return new Set();
  let text: string;
  try {
    text = readFileSync(join(workTree, ".agentmailignore"), "utf8");
  } catch {
    return new Set();
  }
  return new Set(
    text
      .split("\n")
      .map((line) => line.replace(/\r$/, ""))
      .filter((line) => line.trim() !== "" && !line.trimStart().startsWith("#")),
  );
}
