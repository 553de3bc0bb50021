/**
 * The guards end to end, against the compiled binary in a private tmux server: `agentmail guard <cli>` fed each agent
 * CLI's pre-edit hook input on stdin (Claude Code's Write, Codex's apply_patch, Gemini CLI's write_file), answering in
 * that CLI's deny format or not at all; --auto-claim; AGENTMAIL_GUARD=off; and the git pre-commit hook installed by
 * `hooks install git`: chained with the hook that was there, refusing a commit of a claimed path, passing with the
 * bypass, removed by uninstall with the old hook put back; in a linked worktree and under core.hooksPath too.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY } from "../support/e2e.ts";
import { tempRepo } from "../support/repo.ts";
import { outsideTmuxEnv, TmuxServer } from "../support/tmux-server.ts";
import { am, oneJson, storedMessages, type Result } from "../support/workflow.ts";

let repo: ReturnType<typeof tempRepo>;
let server: TmuxServer;

beforeEach(() => {
  repo = tempRepo();
  server = TmuxServer.start(["alice", "bob"], repo.dir);
});

afterEach(() => {
  server.stop();
  repo.remove();
});

const as = (agent: string, args: string[], extra: Record<string, string> = {}, stdin?: string): Promise<Result> =>
  am(args, { env: { ...server.agent(agent).env, ...extra }, cwd: repo.dir, stdin });

async function ok(agent: string, args: string[]): Promise<string> {
  const result = await as(agent, args);
  expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: "" });
  return result.stdout;
}

const claudeWrite = (file: string) =>
  JSON.stringify({ hook_event_name: "PreToolUse", tool_name: "Write", tool_input: { file_path: file, content: "x" }, cwd: repo.dir });

/** Runs the guard as `agent` with a hook input; the guard never fails the agent's turn: always exit 0, nothing on stderr. */
async function guard(agent: string, cli: string, input: string, extra: Record<string, string> = {}, flags: string[] = []): Promise<string> {
  const result = await as(agent, ["guard", cli, ...flags], extra, input);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  return result.stdout;
}

describe("the pre-edit guard of each agent CLI", () => {
  test("Claude Code: a Write to a file another agent claimed is denied, naming the holder; its own and unclaimed files pass silently", async () => {
    await ok("alice", ["claim", "src/**", "--reason", "auth rewrite"]);
    const denied = JSON.parse(await guard("bob", "claude", claudeWrite(join(repo.dir, "src", "login.ts"))));
    expect(denied.hookSpecificOutput.hookEventName).toBe("PreToolUse");
    expect(denied.hookSpecificOutput.permissionDecision).toBe("deny");
    const reason: string = denied.hookSpecificOutput.permissionDecisionReason;
    expect(reason).toStartWith('agentmail: src/login.ts is claimed by alice: src/** (exclusive, alice, "auth rewrite", until ');
    expect(reason).toContain("Ask alice to release it (agentmail send alice");
    expect(reason).toContain("you will get mail when it is free");
    expect(await guard("alice", "claude", claudeWrite(join(repo.dir, "src", "login.ts")))).toBe("");
    expect(await guard("bob", "claude", claudeWrite(join(repo.dir, "docs", "x.md")))).toBe("");
    expect(await guard("bob", "claude", claudeWrite("/tmp/outside-the-repository.txt"))).toBe("");
    // The holder hears once who tried, and the refused agent waits on the claim.
    const toAlice = storedMessages(join(repo.mailDir, "alice.jsonl")).map((message) => message.subject);
    expect(toAlice).toEqual(["claim wanted: src/login.ts"]);
    expect(storedMessages(join(repo.mailDir, "bob.jsonl")).map((message) => message.subject)).toEqual(["edit refused: src/login.ts"]);
    await guard("bob", "claude", claudeWrite(join(repo.dir, "src", "login.ts")));
    expect(storedMessages(join(repo.mailDir, "alice.jsonl")).length).toBe(1);
  });

  test("an edit through a symlink is an edit of the file: alias/a.ts (alias -> src), a link to the file, the repository by a linked path", async () => {
    await ok("alice", ["claim", "src/a.ts"]);
    mkdirSync(join(repo.dir, "src"));
    writeFileSync(join(repo.dir, "src", "a.ts"), "a\n");
    symlinkSync("src", join(repo.dir, "alias"));
    symlinkSync("src/a.ts", join(repo.dir, "a-link.ts"));
    const linkedRepo = `${repo.dir}-link`;
    symlinkSync(repo.dir, linkedRepo);
    try {
      const reasonOf = async (file: string, cwd = repo.dir) => {
        const input = JSON.stringify({
          hook_event_name: "PreToolUse",
          tool_name: "Write",
          tool_input: { file_path: file, content: "x" },
          cwd,
        });
        const out = await guard("bob", "claude", input);
        return out === "" ? "" : (JSON.parse(out).hookSpecificOutput.permissionDecisionReason as string);
      };
      expect(await reasonOf(join(repo.dir, "alias", "a.ts"))).toStartWith("agentmail: src/a.ts is claimed by alice");
      expect(await reasonOf("alias/a.ts")).toStartWith("agentmail: src/a.ts is claimed by alice");
      expect(await reasonOf(join(repo.dir, "a-link.ts"))).toStartWith("agentmail: src/a.ts is claimed by alice");
      expect(await reasonOf(join(linkedRepo, "src", "a.ts"), linkedRepo)).toStartWith("agentmail: src/a.ts is claimed by alice");
      // A new file beside it is free, however it is named.
      expect(await reasonOf(join(repo.dir, "alias", "new.ts"))).toBe("");
    } finally {
      rmSync(linkedRepo, { force: true });
    }
  });

  test("Codex CLI: an apply_patch touching a claimed file is denied; Gemini CLI: a write_file is denied in its own format", async () => {
    await ok("alice", ["claim", "src/a.ts"]);
    const patch = "*** Begin Patch\n*** Add File: docs/new.md\n+hi\n*** Update File: src/a.ts\n@@\n-a\n+b\n*** End Patch\n";
    const codex = JSON.parse(
      await guard(
        "bob",
        "codex",
        JSON.stringify({ hook_event_name: "PreToolUse", tool_name: "apply_patch", tool_input: { command: patch }, cwd: repo.dir }),
      ),
    );
    expect(codex.hookSpecificOutput.permissionDecision).toBe("deny");
    expect(codex.hookSpecificOutput.permissionDecisionReason).toStartWith("agentmail: src/a.ts is claimed by alice");
    const gemini = JSON.parse(
      await guard(
        "bob",
        "gemini",
        JSON.stringify({
          hook_event_name: "BeforeTool",
          tool_name: "write_file",
          tool_input: { file_path: "src/a.ts", content: "x" },
          cwd: repo.dir,
        }),
      ),
    );
    expect(gemini.decision).toBe("deny");
    expect(gemini.reason).toStartWith("agentmail: src/a.ts is claimed by alice");
  });

  test("nothing claimed, or only other files, asks tmux nothing; a file another agent holds asks who is calling", async () => {
    const bin = join(repo.dir, ".git", "fake-bin");
    mkdirSync(bin);
    const log = join(bin, "calls.log");
    const real = Bun.which("tmux")!;
    writeFileSync(join(bin, "tmux"), `#!/bin/sh\necho "$*" >> '${log}'\nexec '${real}' "$@"\n`);
    chmodSync(join(bin, "tmux"), 0o755);
    const path = { PATH: `${bin}:${process.env.PATH}` };
    const calls = () => (existsSync(log) ? readFileSync(log, "utf8") : "");
    expect(await guard("bob", "claude", claudeWrite(join(repo.dir, "src", "a.ts")), path)).toBe("");
    await ok("alice", ["claim", "docs/**"]);
    expect(await guard("bob", "claude", claudeWrite(join(repo.dir, "src", "a.ts")), path)).toBe("");
    expect(calls()).toBe("");
    expect(await guard("bob", "claude", claudeWrite(join(repo.dir, "docs", "a.md")), path)).toContain('"deny"');
    expect(calls()).not.toBe("");
  });

  test("a shared claim stops no edit; AGENTMAIL_GUARD=off lets everything through; input that is no tool call is let through", async () => {
    await ok("alice", ["claim", "shared.ts", "--shared"]);
    await ok("alice", ["claim", "mine.ts"]);
    expect(await guard("bob", "claude", claudeWrite(join(repo.dir, "shared.ts")))).toBe("");
    expect(await guard("bob", "claude", claudeWrite(join(repo.dir, "mine.ts")), { AGENTMAIL_GUARD: "off" })).toBe("");
    expect(await guard("bob", "claude", "not json")).toBe("");
    expect(await guard("bob", "claude", JSON.stringify({ tool_name: "Bash", tool_input: { command: "ls" } }))).toBe("");
    // Outside tmux the editor cannot be told: every claim is another agent's.
    const outside = await am(["guard", "claude"], { env: outsideTmuxEnv(), cwd: repo.dir, stdin: claudeWrite(join(repo.dir, "mine.ts")) });
    expect(JSON.parse(outside.stdout).hookSpecificOutput.permissionDecision).toBe("deny");
  });

  test("--auto-claim claims what an edit touches for the editor (not what another holds shared); release --auto lets it go", async () => {
    await ok("alice", ["claim", "shared.ts", "--shared"]);
    expect(await guard("bob", "claude", claudeWrite(join(repo.dir, "src", "b.ts")), {}, ["--auto-claim"])).toBe("");
    expect(await guard("bob", "claude", claudeWrite(join(repo.dir, "shared.ts")), {}, ["--auto-claim"])).toBe("");
    const claims = oneJson(await as("bob", ["claims", "--json", "--mine"])) as { path: string; auto?: boolean }[];
    expect(claims.map((claim) => [claim.path, claim.auto])).toEqual([["src/b.ts", true]]);
    const denied = JSON.parse(await guard("alice", "claude", claudeWrite(join(repo.dir, "src", "b.ts")), {}, ["--auto-claim"]));
    expect(denied.hookSpecificOutput.permissionDecisionReason).toContain("src/b.ts is claimed by bob");
    await ok("bob", ["claim", "by-hand.ts"]);
    expect(await ok("bob", ["release", "--auto"])).toBe("released src/b.ts\n");
    expect((oneJson(await as("bob", ["claims", "--json", "--mine"])) as { path: string }[]).map((claim) => claim.path)).toEqual([
      "by-hand.ts",
    ]);
  });
});

describe("the git pre-commit guard", () => {
  const git = (args: string[], env: Record<string, string> = {}, cwd = repo.dir) => {
    const result = Bun.spawnSync(["git", "-c", "user.name=t", "-c", "user.email=t@t", ...args], {
      cwd,
      env: { ...outsideTmuxEnv(), PATH: `${join(BINARY, "..")}:${process.env.PATH}`, ...env },
      stdin: "ignore",
    });
    return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
  };

  test("chains the hook that was there, refuses a commit of a claimed path, passes with the bypass and for the holder; uninstall puts the old hook back", async () => {
    const preCommit = join(repo.dir, ".git", "hooks", "pre-commit");
    const theirs = '#!/bin/sh\necho "their hook ran" >&2\n';
    writeFileSync(preCommit, theirs);
    chmodSync(preCommit, 0o755);
    const installed = await as("alice", ["hooks", "install", "git", "--binary", BINARY]);
    expect(installed.code).toBe(0);
    expect(installed.stdout).toContain(`created: ${preCommit}; runs first: ${preCommit}.agentmail-chained`);
    expect(readFileSync(`${preCommit}.agentmail-chained`, "utf8")).toBe(theirs);
    expect((await as("alice", ["hooks", "install", "git", "--binary", BINARY])).stdout).toContain(`unchanged: ${preCommit}`);

    await ok("alice", ["claim", "src/**", "--reason", "auth rewrite"]);
    mkdirSync(join(repo.dir, "src"));
    writeFileSync(join(repo.dir, "src", "a.ts"), "x\n");
    writeFileSync(join(repo.dir, "README"), "r\n");
    git(["add", "."]);
    const refused = git(["commit", "-qm", "touches src"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("their hook ran");
    expect(refused.stderr).toContain("agentmail: this commit changes src/a.ts, claimed by another agent:");
    expect(refused.stderr).toContain('src/** (exclusive, alice, "auth rewrite", until ');
    expect(refused.stderr).toContain("AGENTMAIL_GUARD=off git commit");
    expect(git(["rev-parse", "--verify", "-q", "HEAD"]).code).not.toBe(0);

    // The holder commits its own claimed paths from its pane.
    const holder = git(["commit", "-qm", "alice's work"], server.agent("alice").env);
    expect({ code: holder.code, stderr: holder.stderr }).toEqual({ code: 0, stderr: "their hook ran\n" });
    writeFileSync(join(repo.dir, "src", "a.ts"), "y\n");
    git(["add", "."]);
    expect(git(["commit", "-qm", "bob's"], server.agent("bob").env).code).toBe(1);
    expect(git(["commit", "-qm", "a human who knows better"], { AGENTMAIL_GUARD: "off" }).code).toBe(0);
    // A commit of unclaimed paths passes.
    writeFileSync(join(repo.dir, "README"), "s\n");
    git(["add", "."]);
    expect(git(["commit", "-qm", "readme"]).code).toBe(0);

    const removed = await as("alice", ["hooks", "uninstall", "git"]);
    expect(removed.stdout).toContain(`restored: ${preCommit}; put back: ${preCommit}.agentmail-chained`);
    expect(readFileSync(preCommit, "utf8")).toBe(theirs);
    expect(existsSync(`${preCommit}.agentmail-chained`)).toBe(false);
  });

  test("with agentmail not on git's PATH (a GUI's, CI's) the hook fails open: the commit is made, and stderr says why, the fix and AGENTMAIL_GUARD=off", async () => {
    const preCommit = join(repo.dir, ".git", "hooks", "pre-commit");
    expect((await as("alice", ["hooks", "install", "git"])).code).toBe(0);
    await ok("alice", ["claim", "README"]);
    writeFileSync(join(repo.dir, "README"), "r\n");
    const path = "/usr/bin:/bin";
    git(["add", "."], { PATH: path });
    const committed = git(["commit", "-qm", "from a GUI"], { PATH: path });
    expect(committed.code).toBe(0);
    expect(committed.stderr).toBe(
      "agentmail pre-commit guard: agentmail was not found (it is not on the PATH this git runs hooks with), so the claims " +
        "were not checked; committing anyway. Fix: put agentmail on that PATH, or install the hook with the binary's full " +
        "path (agentmail hooks install git --binary /path/to/agentmail). To skip the check on purpose: AGENTMAIL_GUARD=off git commit ...\n",
    );
    expect(git(["rev-parse", "--verify", "-q", "HEAD"], { PATH: path }).code).toBe(0);
    // On purpose, it says nothing; and with agentmail on the PATH the same hook guards again.
    writeFileSync(join(repo.dir, "README"), "s\n");
    git(["add", "."], { PATH: path });
    expect(git(["commit", "-qm", "on purpose"], { PATH: path, AGENTMAIL_GUARD: "off" })).toMatchObject({ code: 0, stderr: "" });
    writeFileSync(join(repo.dir, "README"), "t\n");
    git(["add", "."]);
    expect(git(["commit", "-qm", "guarded"]).stderr).toContain("agentmail: this commit changes README, claimed by another agent:");
    expect(readFileSync(preCommit, "utf8")).toContain("exec agentmail guard git");
  });

  test("installed from a linked worktree it lands in the shared hooks directory and guards the main one; core.hooksPath is followed", async () => {
    writeFileSync(join(repo.dir, "README"), "r\n");
    git(["add", "."]);
    git(["commit", "-qm", "one"]);
    const linked = `${repo.dir}-linked`;
    expect(git(["worktree", "add", "-q", linked]).code).toBe(0);
    try {
      const installed = await am(["hooks", "install", "git", "--binary", BINARY, "--json"], {
        env: server.agent("alice").env,
        cwd: linked,
      });
      expect((oneJson(installed) as { hook: { path: string } }).hook.path).toBe(join(repo.dir, ".git", "hooks", "pre-commit"));
      await ok("alice", ["claim", "README"]);
      writeFileSync(join(repo.dir, "README"), "changed\n");
      git(["add", "."]);
      expect(git(["commit", "-qm", "main worktree"]).code).toBe(1);
      writeFileSync(join(linked, "README"), "changed there\n");
      git(["add", "."], {}, linked);
      expect(git(["commit", "-qm", "linked worktree"], {}, linked).code).toBe(1);
    } finally {
      git(["worktree", "remove", "--force", linked]);
    }
    git(["config", "core.hooksPath", "my-hooks"]);
    const moved = oneJson(await as("alice", ["hooks", "install", "git", "--binary", BINARY, "--json"])) as { hook: { path: string } };
    expect(moved.hook.path).toBe(join(repo.dir, "my-hooks", "pre-commit"));
    expect(existsSync(moved.hook.path)).toBe(true);
  });

  test("a hooks directory that cannot be written: which one, why and what to do in git's terms (not the mail store's); nothing written", async () => {
    const install = async (extra: Record<string, string> = {}) => {
      const result = await as("alice", ["hooks", "install", "git", "--binary", BINARY], extra);
      expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: "" });
      return result.stderr;
    };
    // core.hooksPath names a file: the setting, where it is set, and the git config commands that fix it.
    writeFileSync(join(repo.dir, "not-a-dir"), "");
    expect(git(["config", "core.hooksPath", "not-a-dir"]).code).toBe(0);
    const file = join(repo.dir, "not-a-dir");
    expect(await install()).toBe(
      `error: cannot write git's hooks directory ${file} (core.hooksPath not-a-dir, set in the local git config): ${file} is a ` +
        "file, not a directory; point core.hooksPath at a directory you can write (git config core.hooksPath <dir>), or unset " +
        "it to use the repository's own hooks directory (git config --unset core.hooksPath), then run agentmail hooks install git again\n",
    );
    expect(readFileSync(file, "utf8")).toBe("");
    // Set in the user's git config: the fix names that one.
    expect(git(["config", "--unset", "core.hooksPath"]).code).toBe(0);
    const userConfig = join(repo.dir, ".git", "user-gitconfig");
    writeFileSync(userConfig, "[core]\n\thooksPath = /dev/null/hooks\n");
    // git itself cannot resolve this one (a path through a file): refused in the same terms, not as "no repository".
    expect(await install({ GIT_CONFIG_GLOBAL: userConfig })).toBe(
      "error: git cannot use core.hooksPath /dev/null/hooks (set in the global git config) as its hooks directory: fatal: " +
        "Invalid path '/dev/null/hooks': Not a directory; point core.hooksPath at a directory you can write (git config --global " +
        "core.hooksPath <dir>), or unset it to use the repository's own hooks directory (git config --global --unset " +
        "core.hooksPath), then run the same command again\n",
    );
    // No core.hooksPath, and the repository's own hooks directory is a file.
    const hooks = join(repo.dir, ".git", "hooks");
    rmSync(hooks, { recursive: true, force: true });
    writeFileSync(hooks, "");
    expect(await install()).toBe(
      `error: cannot write git's hooks directory ${hooks}: ${hooks} is a file, not a directory; move ${hooks} out of the way, ` +
        "then run agentmail hooks install git again\n",
    );
    const json = oneJson(await as("alice", ["hooks", "install", "git", "--json"])) as { error: { code: string; message: string } };
    expect(json.error.code).toBe("io");
    expect(json.error.message).toStartWith(`cannot write git's hooks directory ${hooks}: `);
  });
});
