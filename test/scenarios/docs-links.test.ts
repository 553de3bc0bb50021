import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");
const README_LIMIT_BYTES = 15_000;

const manualFiles = (): string[] => [
  join(ROOT, "README.md"),
  join(ROOT, "ARCHITECTURE.md"),
  join(ROOT, "bench", "RESULTS.md"),
  ...readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => join(ROOT, "docs", name)),
];

/** The text outside fenced code blocks, line by line, with inline code spans removed. */
function proseLines(text: string): string[] {
  const lines: string[] = [];
  let fenced = false;
  for (const line of text.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    else if (!fenced) lines.push(line.replace(/`+[^`]*`+/g, (code) => (code.includes("](") ? code.replace(/^`+|`+$/g, "") : "")));
  }
  return lines;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of text.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6} (.*)$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}_\- ]/gu, "")
      .replaceAll(" ", "-");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

function brokenLinks(): { checked: number; broken: string[] } {
  const broken: string[] = [];
  let checked = 0;
  for (const file of manualFiles()) {
    const where = relative(ROOT, file);
    for (const line of proseLines(readFileSync(file, "utf8"))) {
      for (const [, target] of line.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z][a-z+.-]*:/i.test(target!)) continue;
        checked++;
        const [path, anchor] = target!.split("#", 2) as [string, string | undefined];
        const linked = path === "" ? file : resolve(dirname(file), decodeURIComponent(path));
        if (!existsSync(linked)) {
          broken.push(`${where}: ${target} (no file ${relative(ROOT, linked)})`);
        } else if (anchor !== undefined && !(statSync(linked).isFile() && anchorsOf(readFileSync(linked, "utf8")).has(anchor))) {
          broken.push(`${where}: ${target} (no heading #${anchor} in ${relative(ROOT, linked)})`);
        }
      }
    }
  }
  return { checked, broken };
}

test("every relative link of the README, ARCHITECTURE.md, docs/ and bench/RESULTS.md leads to a file and heading that exist", () => {
  const { checked, broken } = brokenLinks();
  expect(broken).toEqual([]);
  expect(checked).toBeGreaterThan(50);
});

test("the README stays a front page: at most 15 KB, the rest of the manual in docs/", () => {
  expect(statSync(join(ROOT, "README.md")).size).toBeLessThanOrEqual(README_LIMIT_BYTES);
});

test("a heading's anchor is GitHub's: punctuation dropped, spaces to hyphens, repeats numbered", () => {
  const anchors = anchorsOf(
    "# `agentmail name <name>`\n## `AGENTMAIL_NAME`: an identity\n```\n# not a heading\n```\n## Guarantees\n## Guarantees\n",
  );
  expect([...anchors]).toEqual(["agentmail-name-name", "agentmail_name-an-identity", "guarantees", "guarantees-1"]);
});
