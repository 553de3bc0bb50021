/**
 * Where the store may be, checked in process: GIT_DIR and GIT_COMMON_DIR must name real git directories (as git's
 * is_git_directory decides), a relative AGENTMAIL_DIR means the same store from every subdirectory, and the store is
 * never `/`, never a symlink, and never a directory that is neither marked as agentmail's nor empty nor an older
 * agentmail's store; a file the user keeps in a marked store stops no mail.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AgentmailError } from "../../../src/mail/errors.ts";
import { createMessage } from "../../../src/mail/message.ts";
import { FileStore } from "../../../src/store/file/file-store.ts";
import { MARKER } from "../../../src/store/local/layout.ts";
import { gitCommonDir } from "../../../src/store/git-dir.ts";
import { ensureRoot, findRepository, mailRoot } from "../../../src/store/paths.ts";
import { tempRepo } from "../../support/repo.ts";

let repo: ReturnType<typeof tempRepo>;
let scratch: string;

beforeEach(() => {
  repo = tempRepo();
  scratch = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-location-")));
});
afterEach(() => {
  repo.remove();
  rmSync(scratch, { recursive: true, force: true });
});

const isGitDirectory = (dir: string) => gitCommonDir(dir, {}) !== null;

function failure(run: () => unknown): AgentmailError {
  try {
    run();
  } catch (error) {
    if (error instanceof AgentmailError) return error;
    throw error;
  }
  throw new Error("expected an AgentmailError");
}

/** A directory that looks like /etc: files, no HEAD, no objects. */
function fakeEtc(): string {
  const etc = join(scratch, "etc");
  mkdirSync(etc);
  writeFileSync(join(etc, "passwd"), "root:x:0:0::/root:/bin/sh\n");
  return etc;
}

/** The smallest directory git accepts: HEAD, objects/ and refs/. */
function bareGitDir(head = "ref: refs/heads/main\n"): string {
  const dir = join(scratch, `git-${Math.random().toString(36).slice(2)}`);
  mkdirSync(join(dir, "objects"), { recursive: true });
  mkdirSync(join(dir, "refs"));
  writeFileSync(join(dir, "HEAD"), head);
  return dir;
}

describe("GIT_DIR and GIT_COMMON_DIR must name a git directory", () => {
  test("GIT_DIR naming a directory that is not a git dir fails as git does, and nothing is created there", () => {
    const etc = fakeEtc();
    const error = failure(() => mailRoot(repo.dir, { GIT_DIR: etc }));
    expect(error.code).toBe("no_store");
    const fix = "point GIT_DIR at a repository's .git directory, or unset it";
    expect(error.message).toBe(`not a git repository: '${etc}' (from GIT_DIR); ${fix}`);
    expect(existsSync(join(etc, "mail"))).toBe(false);
  });

  test("GIT_DIR naming nothing fails and creates nothing", () => {
    const missing = join(scratch, "nonexistent");
    const error = failure(() => mailRoot(repo.dir, { GIT_DIR: missing }));
    expect(error.message).toStartWith(`not a git repository: '${missing}' (from GIT_DIR)`);
    expect(existsSync(missing)).toBe(false);
  });

  test("GIT_COMMON_DIR naming a directory without objects/ and refs/ fails, inside a repository too", () => {
    const common = join(scratch, "x");
    const error = failure(() => mailRoot(repo.dir, { GIT_COMMON_DIR: common }));
    expect(error.code).toBe("no_store");
    expect(error.message).toStartWith(`not a git repository: '${common}' (from GIT_COMMON_DIR)`);
    const withGitDir = failure(() => mailRoot(repo.dir, { GIT_DIR: join(repo.dir, ".git"), GIT_COMMON_DIR: common }));
    expect(withGitDir.message).toContain("GIT_COMMON_DIR");
    expect(existsSync(common)).toBe(false);
  });

  test("real git dirs are accepted: GIT_DIR (relative to cwd, or a .git file), and GIT_COMMON_DIR", () => {
    expect(mailRoot(repo.dir, { GIT_DIR: ".git" })).toBe(join(repo.dir, ".git", "mail"));
    const common = bareGitDir();
    expect(mailRoot(repo.dir, { GIT_DIR: join(repo.dir, ".git"), GIT_COMMON_DIR: common })).toBe(join(common, "mail"));
    const gitFile = join(scratch, "dotgit");
    writeFileSync(gitFile, `gitdir: ${join(repo.dir, ".git")}\n`);
    expect(mailRoot(scratch, { GIT_DIR: gitFile })).toBe(join(repo.dir, ".git", "mail"));
  });

  test("HEAD must look like a ref: a symref, a symlink into refs/, or an object id", () => {
    expect(isGitDirectory(bareGitDir("ref: refs/heads/main\n"))).toBe(true);
    expect(isGitDirectory(bareGitDir("ref:   refs/heads/x"))).toBe(true);
    expect(isGitDirectory(bareGitDir("0123456789abcdef0123456789abcdef01234567\n"))).toBe(true);
    expect(isGitDirectory(bareGitDir("0123456789abcdef".repeat(4) + "\n"))).toBe(true);
    expect(isGitDirectory(bareGitDir("hello\n"))).toBe(false);
    expect(isGitDirectory(bareGitDir("ref: heads/main\n"))).toBe(false);
    const linked = bareGitDir();
    rmSync(join(linked, "HEAD"));
    symlinkSync("refs/heads/main", join(linked, "HEAD"));
    expect(isGitDirectory(linked)).toBe(true);
    const badLink = bareGitDir();
    rmSync(join(badLink, "HEAD"));
    symlinkSync("/etc/passwd", join(badLink, "HEAD"));
    expect(isGitDirectory(badLink)).toBe(false);
  });

  test("objects/ and refs/ are needed, in the common dir named by commondir", () => {
    const noObjects = bareGitDir();
    rmSync(join(noObjects, "objects"), { recursive: true });
    expect(isGitDirectory(noObjects)).toBe(false);
    const noRefs = bareGitDir();
    rmSync(join(noRefs, "refs"), { recursive: true });
    expect(isGitDirectory(noRefs)).toBe(false);
    const linkedWorktree = join(scratch, "wt-gitdir");
    mkdirSync(linkedWorktree);
    writeFileSync(join(linkedWorktree, "HEAD"), "ref: refs/heads/feature\n");
    writeFileSync(join(linkedWorktree, "commondir"), join(repo.dir, ".git") + "\n");
    expect(isGitDirectory(linkedWorktree)).toBe(true);
    writeFileSync(join(linkedWorktree, "commondir"), join(scratch, "nowhere") + "\n");
    expect(isGitDirectory(linkedWorktree)).toBe(false);
  });

  test("walking up, a .git directory that is not a git dir is passed over, as git does", () => {
    const inner = join(repo.dir, "vendor", "lib");
    mkdirSync(join(inner, ".git"), { recursive: true });
    expect(findRepository(inner, {})?.commonDir).toBe(join(repo.dir, ".git"));
  });

  test("walking up, a .git file pointing at something that is not a git dir fails", () => {
    const inner = join(repo.dir, "sub");
    mkdirSync(inner);
    writeFileSync(join(inner, ".git"), `gitdir: ${join(scratch, "gone")}\n`);
    const error = failure(() => findRepository(inner, {}));
    expect(error.message).toStartWith(`not a git repository: '${join(scratch, "gone")}' (named by ${join(inner, ".git")})`);
  });
});

describe("AGENTMAIL_DIR", () => {
  test("a relative one is resolved against the repository's top level, so every subdirectory finds one store", () => {
    const deep = join(repo.dir, "src", "deep");
    mkdirSync(deep, { recursive: true });
    expect(mailRoot(deep, { AGENTMAIL_DIR: "team-mail" })).toBe(join(repo.dir, "team-mail"));
    expect(mailRoot(repo.dir, { AGENTMAIL_DIR: "team-mail" })).toBe(join(repo.dir, "team-mail"));
  });

  test("a relative one outside a repository is refused", () => {
    const error = failure(() => mailRoot(scratch, { AGENTMAIL_DIR: "mail" }));
    expect(error.code).toBe("no_store");
    expect(error.message).toContain("AGENTMAIL_DIR");
    expect(error.message).toContain("absolute");
  });

  test("an absolute one needs no repository", () => {
    expect(mailRoot(scratch, { AGENTMAIL_DIR: join(scratch, "m") })).toBe(join(scratch, "m"));
  });
});

describe("the store directory itself", () => {
  test("is never /", () => {
    for (const dir of ["/", "//", "/tmp/..", "/."]) {
      const error = failure(() => mailRoot(scratch, { AGENTMAIL_DIR: dir }));
      expect(error.code).toBe("unsafe_path");
      expect(error.message).toContain("/");
    }
  });

  test("is never reached through a symlink", () => {
    const target = join(scratch, "elsewhere");
    mkdirSync(target);
    symlinkSync(target, repo.mailDir);
    const error = failure(() => mailRoot(repo.dir, {}));
    expect(error.code).toBe("unsafe_path");
    expect(error.message).toContain(`${repo.mailDir} is a symlink`);
    const viaEnv = join(scratch, "link");
    symlinkSync(target, viaEnv);
    expect(failure(() => mailRoot(scratch, { AGENTMAIL_DIR: viaEnv })).code).toBe("unsafe_path");
    expect(failure(() => ensureRoot(viaEnv)).code).toBe("unsafe_path");
  });

  test("is refused when it holds a file agentmail does not keep, naming it", () => {
    const etc = fakeEtc();
    const error = failure(() => mailRoot(scratch, { AGENTMAIL_DIR: etc }));
    expect(error.code).toBe("unsafe_path");
    expect(error.message).toContain(`${etc} holds "passwd"`);
    expect(error.message).toContain("AGENTMAIL_DIR");
  });

  test("an unmarked directory holding only what an older agentmail kept there is adopted, and marked", () => {
    const store = join(scratch, "store");
    mkdirSync(store);
    for (const name of ["bob.jsonl", "bob.jsonl.lock", "bob.jsonl.lock.break", "bob.jsonl.cursor", "a%2Fb.jsonl", ".bob.jsonl.tmp-1-x"]) {
      writeFileSync(join(store, name), "");
    }
    mkdirSync(join(store, ".agents"));
    mkdirSync(join(store, ".mailman"));
    expect(mailRoot(scratch, { AGENTMAIL_DIR: store })).toBe(store);
    expect(existsSync(join(store, MARKER))).toBe(true);
  });

  test("an unmarked directory holding anything else is refused, naming it and what to do", () => {
    const store = join(scratch, "store");
    mkdirSync(store);
    writeFileSync(join(store, "bob.jsonl"), "");
    writeFileSync(join(store, "%41.jsonl"), "");
    const error = failure(() => mailRoot(scratch, { AGENTMAIL_DIR: store }));
    expect(error.code).toBe("unsafe_path");
    expect(error.message).toBe(
      `the mail store ${store} holds "%41.jsonl" and is not marked as agentmail's store (${MARKER}); mail goes only into a ` +
        `directory of its own: set AGENTMAIL_DIR to a new or empty directory (or, if this is agentmail's store, move "%41.jsonl" out of it)`,
    );
    expect(existsSync(join(store, MARKER))).toBe(false);
  });

  test("a file the user keeps in a marked store (an editor's backup) stops no mail", async () => {
    const root = ensureRoot(repo.mailDir);
    expect(existsSync(join(root, MARKER))).toBe(true);
    const store = new FileStore(root);
    await store.append(createMessage("alice", "bob", "before the backup"));
    for (const name of ["bob.jsonl~", "notes.txt", "#bob.jsonl#"]) writeFileSync(join(root, name), "mine\n");
    mkdirSync(join(root, "drafts"));
    expect(mailRoot(repo.dir, {})).toBe(root);
    const again = new FileStore(mailRoot(repo.dir, {}));
    await again.append(createMessage("alice", "bob", "after the backup"));
    const taken: string[] = [];
    while (await again.take("bob", (message) => void taken.push(message.message)));
    expect(taken).toEqual(["before the backup", "after the backup"]);
    expect(readFileSync(join(root, "bob.jsonl~"), "utf8")).toBe("mine\n");
  });

  test("an empty or missing directory is fine; a new one is marked when it is made, an empty one when it is first used", () => {
    expect(mailRoot(repo.dir, {})).toBe(repo.mailDir);
    expect(existsSync(repo.mailDir)).toBe(false);
    mkdirSync(repo.mailDir);
    expect(mailRoot(repo.dir, {})).toBe(repo.mailDir);
    expect(existsSync(join(repo.mailDir, MARKER))).toBe(true);
    const made = join(scratch, "new", "store");
    expect(ensureRoot(made)).toBe(made);
    expect(existsSync(join(made, MARKER))).toBe(true);
  });
});
