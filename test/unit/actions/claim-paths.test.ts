/**
 * Where a path given to claim, release or the edit guard lands (src/actions/claim-paths.ts), against a real directory
 * tree with symlinks: relative to the working directory, through links (to a directory, to a file, dangling, in a
 * loop), a glob's literal part resolved, and refusals naming the path as given.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { claimPath, realPath, repositoryFile } from "../../../src/actions/claim-paths.ts";

let top: string;
let repo: string;
beforeEach(() => {
  top = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-claim-paths-")));
  repo = join(top, "repo");
  mkdirSync(join(repo, "src", "lib"), { recursive: true });
  symlinkSync("src", join(repo, "alias"));
  symlinkSync(repo, join(top, "linked"));
});
afterEach(() => rmSync(top, { recursive: true, force: true }));

describe("realPath", () => {
  test("resolves what exists and appends the rest; follows a dangling link; a loop ends as given", () => {
    expect(realPath(join(repo, "alias", "lib", "new.ts"))).toBe(join(repo, "src", "lib", "new.ts"));
    symlinkSync(join(repo, "src", "future"), join(repo, "dangling"));
    expect(realPath(join(repo, "dangling", "x.ts"))).toBe(join(repo, "src", "future", "x.ts"));
    symlinkSync("loop-b", join(repo, "loop-a"));
    symlinkSync("loop-a", join(repo, "loop-b"));
    expect(realPath(join(repo, "loop-a", "x"))).toStartWith(repo);
  });
});

describe("repositoryFile", () => {
  test("an edit's file from the root of the real work tree, reached by any path; outside is null", () => {
    expect(repositoryFile("alias/a.ts", repo, repo)).toBe("src/a.ts");
    expect(repositoryFile(join(top, "linked", "alias", "a.ts"), "/", repo)).toBe("src/a.ts");
    expect(repositoryFile("a.ts", join(top, "linked", "src"), join(top, "linked"))).toBe("src/a.ts");
    expect(repositoryFile("../x", repo, repo)).toBeNull();
    expect(repositoryFile(".", repo, repo)).toBeNull();
  });
});

describe("claimPath", () => {
  test("relative to the working directory, through links, globs after the literal part, a directory whole", () => {
    const src = join(repo, "src");
    expect(claimPath("a.ts", src, repo)).toBe("src/a.ts");
    expect(claimPath("lib", src, repo)).toBe("src/lib/**");
    expect(claimPath("lib/", src, repo)).toBe("src/lib/**");
    expect(claimPath("alias/**/*.ts", repo, repo)).toBe("src/**/*.ts");
    expect(claimPath("*.ts", join(repo, "alias"), repo)).toBe("src/*.ts");
    expect(claimPath(".", repo, repo)).toBe("**");
    expect(claimPath(join(top, "linked", "src", "a.ts"), "/", repo)).toBe("src/a.ts");
    expect(claimPath("src/a.ts", "/anywhere", null)).toBe("src/a.ts");
  });

  test("refused as given: leading out, outside, out through a link, empty", () => {
    symlinkSync(top, join(repo, "out"));
    expect(() => claimPath("../../x", join(repo, "src"), repo)).toThrow(
      "cannot claim '../../x': it leads out of the repository; give a path inside it",
    );
    expect(() => claimPath("/etc/passwd", repo, repo)).toThrow(
      "cannot claim '/etc/passwd': it is outside the repository; give a path inside it",
    );
    expect(() => claimPath("out/x", repo, repo)).toThrow("cannot claim 'out/x': it leads out of the repository through a symlink");
    expect(() => claimPath(join(repo, "out", "x"), repo, repo)).toThrow("it is outside the repository through a symlink");
    expect(() => claimPath(" ", repo, repo)).toThrow("the path is empty");
  });
});
