/**
 * `agentmail guard` in process (coverage counts it), as the installed hooks run it: git's pre-commit hook through the
 * command line, an agent CLI's pre-edit hook through the function its stdin is handed to; what git tells the guard
 * (where hooks live, which paths a commit changes); and how `claims` and `release` word what they print. The contract
 * against the compiled binary is test/commands/guard.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { guardAgentEdit } from "../../../src/commands/guard.ts";
import { AgentmailError } from "../../../src/mail/errors.ts";
import { gitHooksDir, stagedPaths } from "../../../src/hooks/git.ts";
import { callInProcess, runInProcess } from "../../support/in-process.ts";
import { withStdin } from "../../support/stdin.ts";
import { tempRepo } from "../../support/repo.ts";
import { TmuxServer } from "../../support/tmux-server.ts";

let repo: ReturnType<typeof tempRepo>;
let tmux: TmuxServer;
let scratch: string;

/** git as a test's user runs it, with no configuration of the machine's (a global core.hooksPath would change answers). */
const gitEnv = () => ({ ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" });

function git(cwd: string, args: string[]): string {
  const result = Bun.spawnSync(["git", "-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd, env: gitEnv() });
  if (result.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr.toString()}`);
  return result.stdout.toString();
}

beforeAll(() => {
  repo = tempRepo();
  tmux = TmuxServer.start(["alice", "bob", "carol"], repo.dir);
  scratch = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-guard-inproc-")));
  writeFileSync(join(repo.dir, "README"), "x\n");
  git(repo.dir, ["add", "README"]);
  git(repo.dir, ["commit", "-qm", "first"]);
});

afterAll(() => {
  tmux.stop();
  repo.remove();
  rmSync(scratch, { recursive: true, force: true });
});

const cli = (agent: string, argv: string[], extra: Record<string, string> = {}) =>
  runInProcess(argv, { env: { ...tmux.agent(agent).env, ...extra }, cwd: repo.dir });

/** A store whose claims document does not parse: every check of the claims fails. */
function brokenStore(): string {
  const root = mkdtempSync(join(scratch, "broken-"));
  writeFileSync(join(root, ".claims.json"), "{not json");
  return root;
}

describe("guard git: the pre-commit hook", () => {
  test("refuses a commit of a path another agent claimed with exit 1, naming it, the holder and the three ways on", async () => {
    expect((await cli("alice", ["claim", "locked/a.ts", "--reason", "refactor"])).code).toBe(0);
    mkdirSync(join(repo.dir, "locked"), { recursive: true });
    writeFileSync(join(repo.dir, "locked", "a.ts"), "a\n");
    writeFileSync(join(repo.dir, "free.ts"), "f\n");
    git(repo.dir, ["add", "locked/a.ts", "free.ts"]);

    const refused = await cli("bob", ["guard", "git"]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    const lines = refused.stderr.split("\n");
    expect(lines[0]).toBe("agentmail: this commit changes locked/a.ts, claimed by another agent:");
    expect(lines[1]).toStartWith('  locked/a.ts (exclusive, alice, "refactor", until ');
    expect(lines.slice(2)).toEqual([
      'Ask the holder to release it (agentmail send <holder> "…"), unstage those paths (git restore --staged <path>),',
      "or, as a human who knows better, commit anyway: AGENTMAIL_GUARD=off git commit …",
      "",
    ]);
    // The holder is told who wanted it.
    expect((await cli("alice", ["receive"])).stdout).toContain("bob tried to commit locked/a.ts");

    // The holder commits its own claimed path; a human bypasses the guard.
    expect(await cli("alice", ["guard", "git"])).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(await cli("bob", ["guard", "git"], { AGENTMAIL_GUARD: "off" })).toEqual({ code: 0, stdout: "", stderr: "" });

    // Unstaging the claimed path lets the commit be.
    git(repo.dir, ["restore", "--staged", "locked/a.ts"]);
    expect(await cli("bob", ["guard", "git"])).toEqual({ code: 0, stdout: "", stderr: "" });
    git(repo.dir, ["commit", "-qm", "free"]);
    expect((await cli("alice", ["release"])).code).toBe(0);
  });

  test("when it cannot check (the claims unreadable, or no repository) it says so and lets the commit be", async () => {
    writeFileSync(join(repo.dir, "other.ts"), "o\n");
    git(repo.dir, ["add", "other.ts"]);
    const broken = await cli("bob", ["guard", "git"], { AGENTMAIL_DIR: brokenStore() });
    expect(broken.code).toBe(0);
    expect(broken.stderr).toStartWith("agentmail guard: could not check the claims (");
    expect(broken.stderr).toEndWith("); committing anyway\n");
    git(repo.dir, ["restore", "--staged", "other.ts"]);
    rmSync(join(repo.dir, "other.ts"));

    const outside = await runInProcess(["guard", "git"], {
      env: { ...tmux.agent("bob").env, GIT_CEILING_DIRECTORIES: dirname(scratch) },
      cwd: scratch,
    });
    expect(outside.code).toBe(0);
    expect(outside.stderr).toMatch(
      /^agentmail guard: could not check the claims \(git diff failed \(.*\); run this inside a git repository\); committing anyway\n$/,
    );
  });
});

describe("guard claude|codex|gemini: the pre-edit hook", () => {
  const edit = (agent: string, cliName: "claude" | "codex" | "gemini", input: unknown, extra: Record<string, string> = {}) =>
    callInProcess(() => guardAgentEdit(cliName, typeof input === "string" ? input : JSON.stringify(input), false), {
      env: { ...tmux.agent(agent).env, ...extra },
      cwd: repo.dir,
    });

  test("an edit of a file another agent holds gets the CLI's deny answer on stdout, naming the holder; exit 0 always", async () => {
    expect((await cli("alice", ["claim", "held/", "--reason", "mine"])).code).toBe(0);
    const write = { tool_name: "Write", tool_input: { file_path: join(repo.dir, "held", "x.ts"), content: "x" }, cwd: repo.dir };

    const denied = await edit("bob", "claude", write);
    expect(denied.code).toBe(0);
    expect(denied.stderr).toBe("");
    const answer = JSON.parse(denied.stdout);
    expect(answer.hookSpecificOutput).toMatchObject({ hookEventName: "PreToolUse", permissionDecision: "deny" });
    expect(answer.hookSpecificOutput.permissionDecisionReason).toStartWith(
      "agentmail: held/x.ts is claimed by alice: held/** (exclusive, alice,",
    );

    const gemini = await edit("bob", "gemini", {
      tool_name: "write_file",
      tool_input: { file_path: "held/y.ts", content: "y" },
      cwd: repo.dir,
    });
    expect(JSON.parse(gemini.stdout)).toMatchObject({ decision: "deny", reason: expect.stringContaining("claimed by alice") });

    // Its holder edits it; anyone edits what nobody holds.
    expect(await edit("alice", "claude", write)).toEqual({ code: 0, stdout: "", stderr: "" });
    const free = { ...write, tool_input: { file_path: join(repo.dir, "free.ts"), content: "f" } };
    expect(await edit("bob", "claude", free)).toEqual({ code: 0, stdout: "", stderr: "" });
    expect((await cli("alice", ["release"])).code).toBe(0);
  });

  test("the command reads the hook's input on stdin: `agentmail guard claude` denies a held file; input that is not UTF-8 goes through", async () => {
    expect((await cli("alice", ["claim", "piped.ts"])).code).toBe(0);
    const write = JSON.stringify({ tool_name: "Write", tool_input: { file_path: "piped.ts", content: "x" }, cwd: repo.dir });
    const denied = await withStdin(write, () => cli("bob", ["guard", "claude"]));
    expect(denied.code).toBe(0);
    expect(JSON.parse(denied.stdout).hookSpecificOutput).toMatchObject({
      permissionDecision: "deny",
      permissionDecisionReason: expect.stringContaining("piped.ts is claimed by alice"),
    });
    const notUtf8 = new Uint8Array([...new TextEncoder().encode(write.slice(0, -1)), 0xff, 0x7d]);
    expect(await withStdin(notUtf8, () => cli("bob", ["guard", "claude"]))).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(await withStdin(write, () => cli("bob", ["guard", "claude"], { AGENTMAIL_GUARD: "off" }))).toEqual({
      code: 0,
      stdout: "",
      stderr: "",
    });
    expect((await cli("alice", ["release"])).code).toBe(0);
  });

  test("anything it cannot read or check lets the edit through, silently", async () => {
    expect((await cli("alice", ["claim", "kept.ts"])).code).toBe(0);
    const write = { tool_name: "Write", tool_input: { file_path: "kept.ts", content: "x" }, cwd: repo.dir };
    for (const input of ["", "{", "null", '{"tool_name":"Write","tool_input":"x"}', { tool_name: "Bash", tool_input: { command: "ls" } }])
      expect(await edit("bob", "claude", input)).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(await edit("bob", "codex", write, { AGENTMAIL_DIR: brokenStore() })).toEqual({ code: 0, stdout: "", stderr: "" });
    expect((await edit("bob", "codex", write)).stdout).toContain('"permissionDecision":"deny"');
    expect((await cli("alice", ["release"])).code).toBe(0);
  });
});

describe("what git tells the guard", () => {
  test("the hooks directory: the repository's own, core.hooksPath when set, and the main one's from a linked worktree", () => {
    const main = realpathSync(mkdtempSync(join(scratch, "hooks-repo-")));
    git(main, ["init", "-q"]);
    git(main, ["commit", "-q", "--allow-empty", "-m", "first"]);
    expect(gitHooksDir(main, gitEnv())).toBe(join(main, ".git", "hooks"));
    mkdirSync(join(main, "deep", "er"), { recursive: true });
    expect(gitHooksDir(join(main, "deep", "er"), gitEnv())).toBe(join(main, ".git", "hooks"));

    const linked = join(scratch, "hooks-linked");
    git(main, ["worktree", "add", "-q", linked]);
    expect(gitHooksDir(linked, gitEnv())).toBe(join(main, ".git", "hooks"));

    const shared = join(scratch, "team-hooks");
    git(main, ["config", "core.hooksPath", shared]);
    expect(gitHooksDir(main, gitEnv())).toBe(shared);
    expect(gitHooksDir(linked, gitEnv())).toBe(shared);
  });

  test("the paths a commit changes, from the repository root: added, modified, deleted, both sides of a rename", () => {
    const dir = realpathSync(mkdtempSync(join(scratch, "staged-")));
    git(dir, ["init", "-q"]);
    mkdirSync(join(dir, "src"));
    for (const name of ["src/kept.ts", "src/gone.ts", "src/old name.ts", "untouched.ts"]) writeFileSync(join(dir, name), `${name}\n`);
    git(dir, ["add", "."]);
    git(dir, ["commit", "-qm", "first"]);
    expect(stagedPaths(dir, gitEnv())).toEqual([]);

    writeFileSync(join(dir, "src", "kept.ts"), "changed\n");
    writeFileSync(join(dir, "src", "new\nline.ts"), "new\n");
    git(dir, ["add", "src/kept.ts", "src/new\nline.ts"]);
    git(dir, ["rm", "-q", "src/gone.ts"]);
    git(dir, ["mv", "src/old name.ts", "src/new name.ts"]);
    writeFileSync(join(dir, "untouched.ts"), "changed, not staged\n");
    const expected = ["src/gone.ts", "src/kept.ts", "src/new\nline.ts", "src/new name.ts", "src/old name.ts"];
    expect(stagedPaths(dir, gitEnv()).sort()).toEqual(expected);
    expect(stagedPaths(join(dir, "src"), gitEnv()).sort()).toEqual(expected);
  });

  test("outside a repository, or without git, the error says what to do", () => {
    const outside = { ...gitEnv(), GIT_CEILING_DIRECTORIES: dirname(scratch) };
    for (const ask of [() => stagedPaths(scratch, outside), () => gitHooksDir(scratch, outside)]) {
      const error = (() => {
        try {
          ask();
        } catch (thrown) {
          return thrown;
        }
      })();
      expect(error).toBeInstanceOf(AgentmailError);
      expect((error as AgentmailError).code).toBe("no_store");
      expect((error as Error).message).toMatch(/^git (diff|rev-parse) failed \(.+\); run this inside a git repository$/);
    }
    expect(() => stagedPaths(repo.dir, { ...gitEnv(), PATH: join(scratch, "no-bin") })).toThrow(
      "cannot run git (ENOENT); install git and put it on the PATH",
    );
  });
});

describe("claims and release on the command line", () => {
  test("claims lists a live claim as described and an ended one with why it ended", async () => {
    expect((await cli("alice", ["claim", "list/a.ts", "--reason", "busy"])).code).toBe(0);
    expect((await cli("carol", ["claim", "list/c.ts"])).code).toBe(0);
    expect((await cli("carol", ["status", "offline"])).code).toBe(0);
    const listed = await cli("bob", ["claims"]);
    expect(listed.code).toBe(0);
    const [live, ended, ...rest] = listed.stdout.split("\n");
    expect(live).toStartWith('list/a.ts (exclusive, alice, "busy", until ');
    expect(ended).toBe("list/c.ts (exclusive, carol, ended: its holder went offline)");
    expect(rest).toEqual([""]);
    expect((await cli("carol", ["status", "ready"])).code).toBe(0);
    await cli("carol", ["release"]);
    await cli("alice", ["release"]);
  });

  test("a release whose waiter cannot be told by mail still releases, and warns on stderr who was not told", async () => {
    expect((await cli("alice", ["claim", "wanted.ts"])).code).toBe(0);
    expect((await cli("bob", ["claim", "wanted.ts"])).code).toBe(1);
    // bob waits for it; his mailbox is now something no mail can be appended to.
    const mailbox = join(repo.mailDir, "bob.jsonl");
    rmSync(mailbox, { force: true });
    mkdirSync(mailbox);
    try {
      const released = await cli("alice", ["release", "wanted.ts"]);
      expect(released.code).toBe(0);
      expect(released.stdout).toBe("released wanted.ts\n");
      expect(released.stderr).toMatch(/^warning: could not tell bob by mail \(.+\)\n$/);
      expect((await cli("bob", ["claims"])).stdout).toBe("No claims\n");
    } finally {
      rmSync(mailbox, { recursive: true, force: true });
    }
  });
});
