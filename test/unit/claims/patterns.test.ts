/** The claim path dialect (src/claims/patterns.ts): normal forms, and overlap that is exact and symmetric. */
import { describe, expect, test } from "bun:test";
import { AgentmailError } from "../../../src/mail/errors.ts";
import { covers, isGlob, normalizeClaimPath, overlaps, repositoryPathOf, segmentsOverlap } from "../../../src/claims/patterns.ts";

/** Every pair is checked both ways: overlap is symmetric by construction, and this holds it to that. */
function expectOverlap(a: string, b: string, expected: boolean): void {
  expect({ a, b, overlap: overlaps(a, b) }).toEqual({ a, b, overlap: expected });
  expect({ a: b, b: a, overlap: overlaps(b, a) }).toEqual({ a: b, b: a, overlap: expected });
}

describe("overlap of claims", () => {
  test("a glob over a directory overlaps a file in it, and the issue's example holds both ways", () => {
    expectOverlap("src/**", "src/a.ts", true);
    expectOverlap("src/**", "src/deep/er/a.ts", true);
    expectOverlap("src/**", "docs/a.md", false);
    expectOverlap("src/**", "src", true);
    expectOverlap("**/*.md", "src/a.ts", false);
  });

  test("* and ? never cross a /: *.ts and src/*.ts are apart, src/*.ts and src/a.ts are not", () => {
    expectOverlap("*.ts", "src/*.ts", false);
    expectOverlap("*.ts", "a.ts", true);
    expectOverlap("src/*.ts", "src/a.ts", true);
    expectOverlap("src/*.ts", "src/lib/a.ts", false);
    expectOverlap("src/?.ts", "src/a.ts", true);
    expectOverlap("src/?.ts", "src/ab.ts", false);
    expectOverlap("src/a?c.ts", "src/a*", true);
  });

  test("a pattern covers exactly what it matches: a directory is claimed whole with **", () => {
    expectOverlap("src", "src/a.ts", false);
    expectOverlap("src/*", "src/lib", true);
    expectOverlap("src/*", "src/lib/a.ts", false);
    expectOverlap("src/a.ts", "src/a.ts", true);
    expectOverlap("src/a.ts", "src/b.ts", false);
    expectOverlap("src/a", "src/ab", false);
    expect(covers("docs/**", "docs/guide/intro.md")).toBe(true);
    expect(covers("docs/guide/intro.md", "docs/guide/intro.md")).toBe(true);
  });

  test("two globs overlap when one path matches both, decided exactly", () => {
    expectOverlap("src/*/index.ts", "src/api/*", true);
    expectOverlap("**/test/*.ts", "src/**/x.ts", true);
    expectOverlap("**/*.md", "src/*.ts", false);
    expectOverlap("**/*.md", "docs/*", true);
    expectOverlap("a/**/b/**/c", "a/x/b/y/c", true);
    expectOverlap("a/**/b", "a/c", false);
    expectOverlap("*.test.ts", "*.spec.ts", false);
    expectOverlap("foo*bar", "*baz*", true);
    expectOverlap("a*", "b*", false);
    expectOverlap("**", "anything/at/all", true);
  });

  test("everything else is literal: brackets, braces and a leading dot", () => {
    expectOverlap("app/[id].tsx", "app/[id].tsx", true);
    expectOverlap("app/[id].tsx", "app/i.tsx", false);
    expectOverlap("{a,b}.ts", "a.ts", false);
    expectOverlap("*", ".env", true);
    expectOverlap("Src/a.ts", "src/a.ts", false);
  });

  test("a ? is one character, also beyond the BMP", () => {
    expect(segmentsOverlap("?", "😀")).toBe(true);
    expect(segmentsOverlap("??", "😀")).toBe(false);
  });
});

describe("the written form of a claim", () => {
  test("./, . and empty segments go, .. is resolved, a trailing / goes, the whole repository is **", () => {
    expect(normalizeClaimPath("./src/a.ts", null)).toBe("src/a.ts");
    expect(normalizeClaimPath("src/lib/../a.ts", null)).toBe("src/a.ts");
    expect(normalizeClaimPath("src/", null)).toBe("src/**");
    expect(normalizeClaimPath("src/**/", null)).toBe("src/**");
    expect(normalizeClaimPath(".", null)).toBe("**");
    expect(normalizeClaimPath("src/**/**/a", null)).toBe("src/**/a");
    expect(normalizeClaimPath("src/a***b", null)).toBe("src/a*b");
  });

  test("a plain path naming a directory claims the directory whole; a glob or a file is kept as it is", () => {
    const isDirectory = (path: string) => path === "src" || path === "src/lib";
    expect(normalizeClaimPath("src", null, isDirectory)).toBe("src/**");
    expect(normalizeClaimPath("./src/lib", null, isDirectory)).toBe("src/lib/**");
    expect(normalizeClaimPath("src/a.ts", null, isDirectory)).toBe("src/a.ts");
    expect(normalizeClaimPath("src*", null, () => true)).toBe("src*");
  });

  test("an absolute path inside the work tree is made relative to it", () => {
    expect(normalizeClaimPath("/work/repo/src/a.ts", "/work/repo")).toBe("src/a.ts");
  });

  test("paths outside the repository, empty ones and control characters are refused as usage errors", () => {
    for (const [given, workTree] of [
      ["/elsewhere/a.ts", "/work/repo"],
      ["/work/a.ts", null],
      ["../a.ts", "/work/repo"],
      ["src/../../a.ts", null],
      ["", null],
      ["  ", null],
      ["src/a\u001b[2J.ts", null],
      ["x".repeat(2000), null],
    ] as const) {
      let error: unknown;
      try {
        normalizeClaimPath(given, workTree);
      } catch (thrown) {
        error = thrown;
      }
      expect(error).toBeInstanceOf(AgentmailError);
      expect((error as AgentmailError).code).toBe("usage");
      expect((error as AgentmailError).message).toStartWith("cannot claim");
    }
  });

  test("a file an agent edits is taken relative to the work tree; outside it, it is not the repository's", () => {
    expect(repositoryPathOf("/w/repo/src/a.ts", "/anywhere", "/w/repo")).toBe("src/a.ts");
    expect(repositoryPathOf("src/a.ts", "/w/repo", "/w/repo")).toBe("src/a.ts");
    expect(repositoryPathOf("a.ts", "/w/repo/src", "/w/repo")).toBe("src/a.ts");
    expect(repositoryPathOf("/tmp/scratch.txt", "/w/repo", "/w/repo")).toBeNull();
    expect(repositoryPathOf("/w/repo", "/w/repo", "/w/repo")).toBeNull();
    expect(isGlob("src/*.ts")).toBe(true);
    expect(isGlob("src/a.ts")).toBe(false);
  });
});
