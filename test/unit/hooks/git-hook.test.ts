/**
 * How a failure to write git's hooks directory is worded (src/hooks/git-hook.ts unusableHooksDir), for the causes a
 * test cannot make happen as root or on a writable disk: permissions, a read-only or full file system, a path that
 * cannot be created. A file in the way and core.hooksPath in each config are end to end in test/commands/guard.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { AgentmailError } from "../../../src/mail/errors.ts";
import { unusableHooksDir } from "../../../src/hooks/git-hook.ts";

const DIR = "/srv/repo/.git/hooks";
const errno = (code: string, syscall = "open") => Object.assign(new Error(`${code}: …`), { code, syscall });
const worded = (error: unknown, setting: { value: string; scope: string } | null = null, change: "install" | "uninstall" = "install") => {
  const result = unusableHooksDir(DIR, error, change, setting);
  expect(result).toBeInstanceOf(AgentmailError);
  expect((result as AgentmailError).code).toBe("io");
  return (result as AgentmailError).message;
};

describe("a hooks directory that cannot be written", () => {
  test("each cause in words, with the directory made writable as the fix; never the mail store's advice", () => {
    const fix = `make ${DIR} a directory you can write (ls -ld shows its owner), then run agentmail hooks install git again`;
    expect(worded(errno("EACCES"))).toBe(
      `cannot write git's hooks directory ${DIR}: this user may not write there (permission denied); ${fix}`,
    );
    expect(worded(errno("EROFS"))).toBe(`cannot write git's hooks directory ${DIR}: it is on a read-only file system; ${fix}`);
    expect(worded(errno("ENOSPC"))).toBe(`cannot write git's hooks directory ${DIR}: the disk (or this user's quota) is full; ${fix}`);
    expect(worded(errno("ENOENT", "mkdir"))).toBe(
      `cannot write git's hooks directory ${DIR}: it cannot be created there (mkdir: no such file or directory); ${fix}`,
    );
    expect(worded(errno("EIO", "rename"), null, "uninstall")).toBe(
      `cannot write git's hooks directory ${DIR}: rename: EIO; make ${DIR} a directory you can write (ls -ld shows its owner), ` +
        "then run agentmail hooks uninstall git again",
    );
    for (const code of ["EACCES", "EROFS", "ENOSPC", "ENOENT"]) expect(worded(errno(code))).not.toContain("mail store");
  });

  test("chosen by core.hooksPath: the setting, its config, and the git config commands of that config", () => {
    const system = worded(errno("EACCES"), { value: "/etc/git hooks", scope: "system" });
    expect(system).toBe(
      `cannot write git's hooks directory ${DIR} (core.hooksPath '/etc/git hooks', set in the system git config): this user may ` +
        "not write there (permission denied); point core.hooksPath at a directory you can write (git config --system " +
        "core.hooksPath <dir>), or unset it to use the repository's own hooks directory (git config --system --unset " +
        "core.hooksPath), then run agentmail hooks install git again",
    );
    expect(worded(errno("EROFS"), { value: "h", scope: "command" })).toEndWith(
      "; change core.hooksPath where it is set (git's -c option or GIT_CONFIG_* variables), then run agentmail hooks install git again",
    );
  });

  test("what is not a file system error (a conflict with another hook, a bug) is left as it is", () => {
    const conflict = new AgentmailError("conflict", "both exist; nothing was changed");
    expect(unusableHooksDir(DIR, conflict, "install", null)).toBe(conflict);
    const bug = new TypeError("x is undefined");
    expect(unusableHooksDir(DIR, bug, "install", null)).toBe(bug);
  });
});
