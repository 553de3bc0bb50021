/**
 * Claims in process (coverage counts them): the commands and actions on a private tmux server, the guard's reading
 * of each CLI's hook input and its verdicts, who counts as gone, the git hook's file handling, doctor and cleanup.
 * The contract is tested end to end in test/commands/claim.test.ts and guard.test.ts.
 */
import { afterAll, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { claimPaths, listClaims, releasePaths } from "../../../src/actions/claims.ts";
import { HOLDER_SEEN_MS, judgeHolders } from "../../../src/identity/presence.ts";
import { checkEdit } from "../../../src/actions/guard.ts";
import { decideClaim, type FileClaim } from "../../../src/claims/claims.ts";
import { editAttemptOf, refusalOutput, refusalReason } from "../../../src/claims/guard.ts";
import { AgentmailError } from "../../../src/mail/errors.ts";
import { claimFindings } from "../../../src/doctor/claims.ts";
import { gitHooksDir, stagedPaths } from "../../../src/hooks/git.ts";
import { CHAINED, installGitHook, preCommitScript, uninstallGitHook } from "../../../src/hooks/git-hook.ts";
import { FileStore } from "../../../src/store/file/file-store.ts";
import { HOSTNAME } from "../../../src/store/durable/process-identity.ts";
import { runInProcess } from "../../support/in-process.ts";
import { tempRepo } from "../../support/repo.ts";
import { TmuxServer } from "../../support/tmux-server.ts";
import { waitFor } from "../../support/workflow.ts";

let repo: ReturnType<typeof tempRepo>;
let tmux: TmuxServer;
let scratch: string;

beforeAll(() => {
  repo = tempRepo();
  tmux = TmuxServer.start(["alice", "bob", "carol"], repo.dir);
  scratch = mkdtempSync(join(tmpdir(), "agentmail-claims-inproc-"));
});

afterAll(() => {
  tmux.stop();
  repo.remove();
  rmSync(scratch, { recursive: true, force: true });
});

const place = (agent: string) => ({ cwd: repo.dir, env: tmux.agent(agent).env });
const cli = (agent: string, argv: string[]) => runInProcess(argv, { env: tmux.agent(agent).env, cwd: repo.dir });
const store = () => new FileStore(repo.mailDir);

async function failure(work: Promise<unknown>): Promise<AgentmailError> {
  const error = await work.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(AgentmailError);
  return error as AgentmailError;
}

describe("the commands", () => {
  test("claim, claims and release print one line each, and one JSON document with --json", async () => {
    const claimed = await cli("alice", ["claim", "cmd/a.ts", "cmd/b/", "--reason", "in process", "--ttl", "30m"]);
    expect(claimed).toMatchObject({ code: 0, stderr: "" });
    expect(claimed.stdout).toMatch(/^claimed cmd\/a\.ts \(exclusive, alice, "in process", until .*, 30m left\)\nclaimed cmd\/b\/\*\* /);
    const json = JSON.parse((await cli("alice", ["claims", "--json", "--mine"])).stdout) as FileClaim[];
    expect(json.map((claim) => claim.path)).toEqual(["cmd/a.ts", "cmd/b/**"]);
    expect((await cli("bob", ["claims"])).stdout).toContain("cmd/a.ts (exclusive, alice,");
    const refused = await cli("bob", ["claim", "cmd/b/x.ts", "--shared"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("cmd/b/x.ts is claimed by alice: cmd/b/** (exclusive, alice");
    expect(JSON.parse((await cli("alice", ["claim", "--renew", "cmd/a.ts", "--json"])).stdout).claims).toHaveLength(1);
    expect(JSON.parse((await cli("alice", ["release", "cmd/b", "--json"])).stdout)).toMatchObject({
      holder: "alice",
      released: [{ path: "cmd/b/**" }],
    });
    expect((await cli("alice", ["release"])).stdout).toBe("released cmd/a.ts\n");
    expect((await cli("alice", ["release"])).stdout).toBe("No claims to release\n");
    expect((await cli("carol", ["claims"])).stdout).toBe("No claims\n");
    expect((await cli("alice", ["release", "x", "--auto"])).code).toBe(1);
    expect((await cli("alice", ["claim", "--renew", "--reason", "x"])).code).toBe(1);
    expect((await cli("alice", ["claim"])).code).toBe(1);
  });

  test("a claim waiting for another gets it when that one is released", async () => {
    await claimPaths(place("alice"), { paths: ["wait/**"], shared: false, ttlMs: 60_000 });
    const waiting = claimPaths(place("bob"), { paths: ["wait/x"], shared: false, ttlMs: 60_000, waitMs: 30_000 });
    // Released once bob is recorded as waiting: the wait is what is tested.
    await waitFor("bob to wait on alice's claim", async () =>
      (await store().fileClaims()).claims.some((claim) => claim.waiters.includes("bob")),
    );
    await releasePaths(place("alice"), []);
    expect((await waiting).claims.map((claim) => [claim.path, claim.holder])).toEqual([["wait/x", "bob"]]);
    const cancelled = new AbortController();
    const again = claimPaths(place("carol"), { paths: ["wait/x"], shared: false, ttlMs: 60_000, waitMs: null, signal: cancelled.signal });
    cancelled.abort();
    expect((await failure(again)).code).toBe("claimed");
    await releasePaths(place("bob"), []);
  });

  test("hooks install git and uninstall git, as text and JSON, and what git takes no flags for", async () => {
    const hook = join(repo.dir, ".git", "hooks", "pre-commit");
    const dry = await cli("alice", ["hooks", "install", "git", "--dry-run"]);
    expect(dry.stdout).toContain(`would be created: ${hook}`);
    const installed = await cli("alice", ["hooks", "install", "git", "--binary", "/opt/am/agentmail"]);
    expect(installed.stdout).toContain(`created: ${hook}`);
    expect(installed.stdout).toContain("AGENTMAIL_GUARD=off git commit");
    expect(readFileSync(hook, "utf8")).toContain("exec /opt/am/agentmail guard git");
    const removed = JSON.parse((await cli("alice", ["hooks", "uninstall", "git", "--json"])).stdout);
    expect(removed).toMatchObject({ agent: "git", hook: { path: hook, action: "removed", chained: null } });
    for (const flags of [["--user"], ["--trust"], ["--auto-claim"]]) {
      const refused = await cli("alice", ["hooks", "install", "git", ...flags]);
      expect(refused.stderr).toContain("git takes only --binary and --dry-run");
    }
  });

  test("hooks install claude --auto-claim guards with auto-claim and releases at session end", async () => {
    const home = mkdtempSync(join(scratch, "home-"));
    const result = await runInProcess(["hooks", "install", "claude", "--user", "--auto-claim", "--json"], {
      env: { ...tmux.agent("alice").env, HOME: home },
      cwd: repo.dir,
    });
    expect(result.code).toBe(0);
    const settings = JSON.parse(readFileSync(join(home, ".claude", "settings.json"), "utf8"));
    expect(settings.hooks.PreToolUse).toEqual([
      { matcher: "Edit|Write|MultiEdit|NotebookEdit", hooks: [{ type: "command", command: "agentmail guard claude --auto-claim" }] },
    ]);
    expect(settings.hooks.SessionEnd[0].hooks.map((hook: { command: string }) => hook.command)).toEqual([
      "agentmail status offline",
      "agentmail release --auto",
    ]);
  });
});

describe("the guard", () => {
  test("reads the files of each CLI's edit tools, and nothing from other tools or bad input", () => {
    expect(editAttemptOf(JSON.stringify({ tool_name: "Edit", tool_input: { file_path: "/r/a.ts", old_string: "a" }, cwd: "/r" }))).toEqual({
      tool: "Edit",
      files: ["/r/a.ts"],
      cwd: "/r",
    });
    expect(editAttemptOf(JSON.stringify({ tool_name: "NotebookEdit", tool_input: { notebook_path: "n.ipynb" } }))).toEqual({
      tool: "NotebookEdit",
      files: ["n.ipynb"],
      cwd: null,
    });
    const patch = "*** Begin Patch\n*** Update File: a.ts\n*** Move to: b.ts\n*** Delete File: c.ts\n*** Add File: d.ts\n*** End Patch";
    expect(editAttemptOf(JSON.stringify({ tool_name: "apply_patch", tool_input: { command: patch } }))!.files).toEqual([
      "a.ts",
      "b.ts",
      "c.ts",
      "d.ts",
    ]);
    expect(editAttemptOf(JSON.stringify({ tool_name: "Bash", tool_input: { command: "ls" } }))!.files).toEqual([]);
    for (const bad of ["", "null", "[]", '{"tool_name":1}', '{"tool_name":"Write","tool_input":"x"}'])
      expect(editAttemptOf(bad)).toBeNull();
  });

  test("answers each CLI in its own deny format", () => {
    expect(JSON.parse(refusalOutput("claude", "why"))).toEqual({
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "why" },
    });
    expect(JSON.parse(refusalOutput("codex", "why")).hookSpecificOutput.permissionDecision).toBe("deny");
    expect(JSON.parse(refusalOutput("gemini", "why"))).toEqual({ decision: "deny", reason: "why" });
  });

  test("lets through what nobody else holds; refuses, naming the holders, what another holds exclusively", async () => {
    await claimPaths(place("alice"), { paths: ["guard/**"], shared: false, ttlMs: 60_000 });
    await claimPaths(place("carol"), { paths: ["guard/*.md"], shared: false, ttlMs: 60_000 }).catch(() => null);
    const edit = (agent: string, files: string[], autoClaim = false) =>
      checkEdit(place(agent), { files, cwd: repo.dir, autoClaim, doing: "edit" });
    expect(await edit("alice", [join(repo.dir, "guard", "a.ts")])).toEqual({ allowed: true });
    expect(await edit("bob", ["elsewhere.ts", "/tmp/x"])).toEqual({ allowed: true });
    const refused = await edit("bob", ["guard/a.ts", "free.ts"]);
    expect(refused.allowed).toBe(false);
    if (refused.allowed) return;
    expect(refused.files).toEqual(["guard/a.ts"]);
    const reason = refusalReason(refused.files.join(", "), refused.held, refused.now);
    expect(reason).toStartWith("agentmail: guard/a.ts is claimed by alice: guard/** (exclusive, alice,");
    expect(reason).toContain("alice has been told you asked");
    expect(refusalReason("x", [...refused.held, { ...refused.held[0]!, holder: "dave" }], refused.now)).toContain(
      "alice and dave have been told",
    );
    // Auto-claim: bob edits a free file and holds it afterwards.
    expect(await edit("bob", ["auto.ts"], true)).toEqual({ allowed: true });
    expect((await listClaims(place("bob"), true)).claims.map((claim) => [claim.path, claim.auto])).toEqual([["auto.ts", true]]);
    expect((await releasePaths(place("bob"), [], true)).released.map((claim) => claim.path)).toEqual(["auto.ts"]);
    await releasePaths(place("alice"), []);
  });
});

describe("who is gone", () => {
  const claim = (extra: Partial<FileClaim>): FileClaim => ({
    id: "x",
    path: "p",
    holder: "ghost",
    shared: false,
    claimed_at: "2026-05-01T10:00:00.000Z",
    expires_at: "2026-05-01T11:00:00.000Z",
    active_at: "2026-05-01T10:00:00.000Z",
    host: HOSTNAME,
    server: null,
    pane: "%0",
    waiters: [],
    ...extra,
  });

  test("offline after the claim, a pane gone from its server (or a server gone) with no recent registration; not otherwise", async () => {
    const root = mkdtempSync(join(scratch, "judge-"));
    const judged = new FileStore(root);
    const now = Date.parse("2026-05-01T10:30:00.000Z");
    await judged.writeStatus({ name: "left", status: "offline", pane: "%1", at: new Date("2026-05-01T10:10:00.000Z") });
    await judged.writeStatus({ name: "earlier", status: "offline", pane: "%1", at: new Date("2026-05-01T09:00:00.000Z") });
    await judged.writeStatus({ name: "recent", status: "ready", pane: "%1", at: new Date(now - HOLDER_SEEN_MS / 2) });
    await judged.writeStatus({ name: "stale", status: "ready", pane: "%1", at: new Date(now - HOLDER_SEEN_MS * 2) });
    const tmuxServer = `${tmux.socket},${tmux.run(["display-message", "-p", "#{pid}"]).trim()}`;
    const alivePane = tmux.agent("alice").paneId;
    const claims = [
      claim({ id: "1", holder: "left" }),
      claim({ id: "2", holder: "earlier" }),
      claim({ id: "3", holder: "recent", server: tmuxServer, pane: "%999" }),
      claim({ id: "4", holder: "stale", server: tmuxServer, pane: "%999" }),
      claim({ id: "5", holder: "never", server: tmuxServer, pane: alivePane }),
      claim({ id: "6", holder: "never", server: `${join(scratch, "no-such-socket")},1` }),
      claim({ id: "7", holder: "never", server: `${tmux.socket},1` }),
      claim({ id: "8", holder: "never", host: "another-host", server: `${join(scratch, "no-such-socket")},1` }),
    ];
    const judge = await judgeHolders(judged, claims, now);
    expect(claims.map((each) => judge(each))).toEqual([
      "its holder went offline",
      null,
      null,
      "its holder's window is closed",
      null,
      "its holder's window is closed",
      "its holder's window is closed",
      null,
    ]);
    expect(judge(claim({ id: "unjudged" }))).toBeNull();
  });
});

describe("the git hook's files", () => {
  test("chains a hook that is there, updates its own, refuses when both places are taken, and puts the old one back", () => {
    const dir = mkdtempSync(join(scratch, "hooks-"));
    const hook = join(dir, "pre-commit");
    writeFileSync(hook, "#!/bin/sh\necho theirs\n");
    chmodSync(hook, 0o755);
    expect(installGitHook(dir, "agentmail", true)).toEqual({ path: hook, action: "created", chained: join(dir, CHAINED) });
    expect(readFileSync(hook, "utf8")).toBe("#!/bin/sh\necho theirs\n");
    expect(installGitHook(dir, "agentmail", false).action).toBe("created");
    expect(readFileSync(hook, "utf8")).toBe(preCommitScript("agentmail"));
    expect(installGitHook(dir, "/opt/my tools/agentmail", false).action).toBe("updated");
    expect(readFileSync(hook, "utf8")).toContain("exec '/opt/my tools/agentmail' guard git");
    expect(uninstallGitHook(dir, true).action).toBe("restored");
    expect(uninstallGitHook(dir, false)).toEqual({ path: hook, action: "restored", chained: join(dir, CHAINED) });
    expect(readFileSync(hook, "utf8")).toBe("#!/bin/sh\necho theirs\n");
    expect(uninstallGitHook(dir, false).action).toBe("unchanged");
    writeFileSync(join(dir, CHAINED), "#!/bin/sh\n");
    expect(() => installGitHook(dir, "agentmail", false)).toThrow("neither is agentmail's");
    rmSync(hook);
    expect(uninstallGitHook(dir, false).action).toBe("restored");
    rmSync(hook);
    expect(uninstallGitHook(dir, false).action).toBe("absent");
    // A symlinked hook (a hook manager's) is chained as the link it is.
    symlinkSync("/bin/true", hook);
    expect(installGitHook(dir, "agentmail", false).chained).toBe(join(dir, CHAINED));
    expect(uninstallGitHook(dir, false).action).toBe("restored");
    mkdirSync(join(dir, "sub"));
    expect(installGitHook(join(dir, "sub", "new"), "agentmail", false).action).toBe("created");
  });
});

describe("doctor and cleanup", () => {
  test("doctor counts the live claims and notes each one that ended, with cleanup as the fix", async () => {
    const root = mkdtempSync(join(scratch, "doctor-"));
    const doctored = new FileStore(root);
    const request = (holder: string, path: string, ttlMs: number) => ({
      holder,
      paths: [path],
      shared: false,
      ttlMs,
      place: { host: HOSTNAME, server: null, pane: "%0" },
    });
    await doctored.updateFileClaims((snapshot) =>
      decideClaim(
        snapshot,
        request("alice", "a", 60_000),
        () => null,
        () => "id-a",
      ),
    );
    await doctored.updateFileClaims((snapshot) =>
      decideClaim(
        snapshot,
        request("bob", "b", 1_000),
        () => null,
        () => "id-b",
      ),
    );
    // The file store's clock is the machine's: moved on instead of waited for.
    setSystemTime(new Date(Date.now() + 5_000));
    try {
      expect(await claimFindings(doctored)).toEqual([
        { area: "claims", status: "ok", message: "1 live claims on paths, held by 1 agents", fix: null },
        {
          area: "claims",
          status: "note",
          message: "the claim on b of bob ran out, and is still stored; it stops nobody",
          fix: "agentmail cleanup",
        },
      ]);
    } finally {
      setSystemTime();
    }
  });

  test("git names the hooks directory and the paths a commit changes, renames both ways", () => {
    const git = (args: string[]) => Bun.spawnSync(["git", "-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: repo.dir });
    writeFileSync(join(repo.dir, "old.txt"), "x\n");
    git(["add", "old.txt"]);
    git(["commit", "-qm", "one"]);
    git(["mv", "old.txt", "new.txt"]);
    expect(stagedPaths(repo.dir, process.env).sort()).toEqual(["new.txt", "old.txt"]);
    expect(gitHooksDir(repo.dir, process.env)).toBe(join(repo.dir, ".git", "hooks"));
    expect(() => stagedPaths(scratch, { ...process.env, GIT_DIR: join(scratch, "none") })).toThrow("run this inside a git repository");
  });

  test("doctor says what is wrong with a claims document that does not parse; cleanup says it could not clean the claims", async () => {
    const root = mkdtempSync(join(scratch, "broken-"));
    writeFileSync(join(root, ".claims.json"), "{not json");
    const findings = await claimFindings(new FileStore(root));
    expect(findings).toEqual([
      { area: "claims", status: "problem", message: expect.stringContaining("is not a claims document; fix it, or remove it"), fix: null },
    ]);
    expect(await claimFindings(null)).toEqual([]);
    const cleaned = await runInProcess(["cleanup"], { env: { ...tmux.agent("alice").env, AGENTMAIL_DIR: root }, cwd: repo.dir });
    expect(cleaned.code).toBe(1);
    expect(cleaned.stderr).toContain("the claims were not cleaned:");
  });
});
