/**
 * Claims on paths end to end, against the compiled binary in a private tmux server: two (or three) agents claiming,
 * exclusive and shared, glob overlap, a claim running out, a holder gone (offline, window closed), --wait, the mail
 * that tells holders, askers and waiters, doctor and cleanup, worktrees. Time-based checks use short TTLs and wait for
 * the outcome with generous bounds, never a fixed sleep.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FileClaim } from "../../src/claims/claims.ts";
import { tempRepo } from "../support/repo.ts";
import { outsideTmuxEnv, TmuxServer } from "../support/tmux-server.ts";
import { am, expectError, expectJsonError, oneJson, start, storedMessages, waitFor, type Result } from "../support/workflow.ts";

let repo: ReturnType<typeof tempRepo>;
let server: TmuxServer;

beforeEach(() => {
  repo = tempRepo();
  server = TmuxServer.start(["alice", "bob", "carol"], repo.dir);
});

afterEach(() => {
  server.stop();
  repo.remove();
});

const as = (agent: string, args: string[], cwd = repo.dir): Promise<Result> => am(args, { env: server.agent(agent).env, cwd });

/** Succeeds (exit 0, nothing on stderr) and returns stdout. */
async function ok(agent: string, args: string[]): Promise<string> {
  const result = await as(agent, args);
  expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: "" });
  return result.stdout;
}

/** A directory outside every repository (the system's temp dir). */
const tmpdirOutside = () => tmpdir();

const claimsJson = async (agent: string, extra: string[] = []) =>
  oneJson(await as(agent, ["claims", "--json", ...extra])) as (FileClaim & { state: string; why?: string })[];

/** The mail an agent got from the claims system, as [subject, body]. */
const notices = (agent: string) =>
  storedMessages(join(repo.mailDir, `${agent}.jsonl`))
    .filter((message) => message.from === "agentmail")
    .map((message) => [message.subject as string, message.message]);

describe("two agents, exclusive claims", () => {
  test("a claim refuses another agent's overlapping claim, naming holder, reason and expiry; both are told by mail; the release tells the waiter", async () => {
    expect(await ok("alice", ["claim", "src/auth.ts", "--reason", "rewriting login"])).toMatch(
      /^claimed src\/auth\.ts \(exclusive, alice, "rewriting login", until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ, 1h00m left\)\n$/,
    );
    const refused = expectError(await as("bob", ["claim", "src/auth.ts"]), 1);
    expect(refused).toContain('src/auth.ts is claimed by alice: src/auth.ts (exclusive, alice, "rewriting login", until ');
    expect(refused).toContain("alice was told you asked; ask the holder to release it (agentmail send <holder>");
    expect(refused).toContain("agentmail claim <path> --wait SECONDS");
    expect(expectJsonError(await as("bob", ["claim", "src/auth.ts", "--json"]), 1).code).toBe("claimed");
    // Told once, however often bob asks.
    expect(notices("alice")).toEqual([
      ["claim wanted: src/auth.ts", expect.stringContaining("bob asked to claim src/auth.ts, which your claim")],
    ]);
    expect(notices("bob")).toEqual([["claim refused: src/auth.ts", expect.stringContaining("You will get mail when it is free")]]);
    expect((await claimsJson("alice")).map((claim) => [claim.path, claim.holder, claim.waiters])).toEqual([
      ["src/auth.ts", "alice", ["bob"]],
    ]);

    expect(await ok("alice", ["release", "src/auth.ts"])).toBe("released src/auth.ts\n");
    expect(notices("bob").at(-1)).toEqual([
      "claim released: src/auth.ts",
      expect.stringContaining("src/auth.ts is free: alice released it"),
    ]);
    expect(await ok("bob", ["claim", "src/auth.ts"])).toStartWith("claimed src/auth.ts (exclusive, bob,");
  });

  test("a claim is all or none: one path in the way refuses every path of it", async () => {
    await ok("alice", ["claim", "src/a.ts"]);
    expectError(await as("bob", ["claim", "docs/guide.md", "src/a.ts"]), 1);
    expect((await claimsJson("bob")).map((claim) => claim.path)).toEqual(["src/a.ts"]);
  });

  test("an agent claiming its own path again renews it; --renew gives all its claims more time; claims --mine shows only its own", async () => {
    await ok("alice", ["claim", "a.ts", "b.ts", "--ttl", "10m"]);
    await ok("bob", ["claim", "c.ts"]);
    const before = await claimsJson("alice", ["--mine"]);
    expect(before.map((claim) => claim.path)).toEqual(["a.ts", "b.ts"]);
    expect(await ok("alice", ["claim", "--renew", "--ttl", "2h"])).toMatch(
      /^renewed a\.ts .*2h00m left\)\nrenewed b\.ts .*2h00m left\)\n$/,
    );
    const after = await claimsJson("alice", ["--mine"]);
    expect(after.map((claim) => claim.id)).toEqual(before.map((claim) => claim.id));
    expect(Date.parse(after[0]!.expires_at)).toBeGreaterThan(Date.parse(before[0]!.expires_at));
    expect(await ok("carol", ["claims", "--mine"])).toBe("You hold no claims\n");
    expect(await ok("carol", ["claims"])).toMatch(/^a\.ts \(exclusive, alice, .*\nb\.ts .*\nc\.ts \(exclusive, bob, .*\n$/);
  });
});

describe("many claims at once", () => {
  test("a claim refused by 300 claims sends one notice to the holder and one to the asker, and the release one to the waiter; the error and each notice list 10 and count the rest", async () => {
    // What --auto-claim gathers over a few hundred edits: one claim a file.
    const paths = Array.from({ length: 300 }, (_, i) => `gen/f${String(i).padStart(3, "0")}.ts`);
    await ok("alice", ["claim", ...paths]);
    const refused = expectError(await as("bob", ["claim", "gen/**"]), 1);
    expect(refused).toContain("gen/** is claimed by alice: gen/f000.ts (exclusive, alice,");
    expect(refused).toContain("gen/f009.ts (exclusive, alice,");
    expect(refused).not.toContain("gen/f010.ts");
    expect(refused).toContain("and 290 more claims ('agentmail claims' lists them); alice was told you asked");
    expect(refused.length).toBeLessThan(3000);
    const toAlice = notices("alice");
    expect(toAlice.map(([subject]) => subject)).toEqual(["claim wanted: gen/**"]);
    expect(toAlice[0]![1]).toContain("bob asked to claim gen/**, which 300 of your claims cover:\n- gen/f000.ts (exclusive");
    expect(toAlice[0]![1]).toContain("\n- and 290 more ('agentmail claims' lists them)\nbob waits for them");
    const toBob = notices("bob");
    expect(toBob.map(([subject]) => subject)).toEqual(["claim refused: gen/**"]);
    expect(toBob[0]![1]).toContain("- and 290 more ('agentmail claims' lists them)");
    for (const [, body] of [...toAlice, ...toBob]) expect(String(body).length).toBeLessThan(3000);
    // bob waits on every one of them, and is told once when they all go.
    expect((await claimsJson("alice")).every((claim) => claim.waiters.includes("bob"))).toBe(true);
    await ok("alice", ["release"]);
    const freed = notices("bob").slice(1);
    expect(freed.map(([subject]) => subject)).toEqual(["claim released: gen/f000.ts and 299 more"]);
    expect(freed[0]![1]).toStartWith("300 paths you waited for are free:\n- gen/f000.ts: alice released it\n");
    expect(freed[0]![1]).toContain("\n- and 290 more\n");
  });
});

describe("shared claims and globs", () => {
  test("shared claims live together; an exclusive claim refuses them and they refuse it", async () => {
    await ok("alice", ["claim", "src/config.ts", "--shared"]);
    await ok("bob", ["claim", "src/config.ts", "--shared", "--reason", "reading the schema"]);
    expect(expectError(await as("carol", ["claim", "src/config.ts"]), 1)).toContain("claimed by alice, bob");
    expectError(await as("alice", ["claim", "src/config.ts"]), 1);
    await ok("carol", ["claim", "src/other.ts"]);
    expect(expectError(await as("alice", ["claim", "src/*.ts", "--shared"]), 1)).toContain("claimed by carol");
  });

  test("overlap is glob-aware both ways: src/** against src/a.ts; *.ts and src/*.ts are apart; a directory named plainly is claimed whole", async () => {
    await ok("alice", ["claim", "src/**"]);
    expect(expectError(await as("bob", ["claim", "src/a.ts"]), 1)).toContain("src/a.ts is claimed by alice: src/** (exclusive");
    await ok("alice", ["release"]);
    await ok("bob", ["claim", "src/a.ts"]);
    expect(expectError(await as("alice", ["claim", "src/**"]), 1)).toContain("src/** is claimed by bob: src/a.ts");
    await ok("alice", ["claim", "*.ts"]);
    expect(expectError(await as("carol", ["claim", "src/*.ts"]), 1)).toContain("claimed by bob: src/a.ts");
    mkdirSync(join(repo.dir, "docs"));
    expect(await ok("carol", ["claim", "docs"])).toStartWith("claimed docs/** (exclusive, carol,");
    expectError(await as("alice", ["claim", "docs/guide/intro.md"]), 1);
  });
});

describe("claims that end", () => {
  test("a claim runs out at its --ttl: a --wait for it returns with the claim once it has, and the waiter is told", async () => {
    // The short time is given once bob waits: however slow the machine, bob asks while the claim still counts.
    await ok("alice", ["claim", "src/a.ts"]);
    const waiting = start(["claim", "src/a.ts", "--wait", "120"], { env: server.agent("bob").env, cwd: repo.dir, timeoutMs: 150_000 });
    await waitFor("bob to wait on alice's claim", async () => (await claimsJson("alice"))[0]?.waiters.includes("bob"));
    await ok("alice", ["claim", "--renew", "src/a.ts", "--ttl", "1s"]);
    const waited = await waiting.done;
    expect({ code: waited.code, stdout: waited.stdout, stderr: waited.stderr }).toEqual({
      code: 0,
      stdout: expect.stringMatching(/^claimed src\/a\.ts \(exclusive, bob,/),
      stderr: "",
    });
    expect(notices("bob").map(([subject]) => subject)).toEqual(["claim refused: src/a.ts", "claim released: src/a.ts"]);
    expect(notices("bob")[1]![1]).toContain("alice's claim ran out");
  });

  test("--wait waits while the claim is held and takes it when released; a --wait that runs out refuses, saying so", async () => {
    await ok("alice", ["claim", "src/**"]);
    const timedOut = expectError(await as("carol", ["claim", "src/b.ts", "--wait", "1"]), 1);
    expect(timedOut).toContain("src/b.ts is still, after waiting 1 s, claimed by alice");
    const waiting = start(["claim", "src/a.ts", "--wait", "120"], { env: server.agent("bob").env, cwd: repo.dir, timeoutMs: 150_000 });
    await waitFor("bob to wait on alice's claim", async () => (await claimsJson("alice"))[0]?.waiters.includes("bob"));
    await ok("alice", ["release"]);
    const result = await waiting.done;
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    expect(result.stdout).toStartWith("claimed src/a.ts (exclusive, bob,");
    expect(notices("bob").at(-1)![1]).toContain("src/** is free: alice released it");
  });

  test("a holder that went offline holds nothing: its claim is passed over, and claims says why", async () => {
    await ok("alice", ["claim", "src/a.ts"]);
    await ok("alice", ["status", "offline"]);
    expect((await claimsJson("bob")).map((claim) => [claim.state, claim.why])).toEqual([["ended", "its holder went offline"]]);
    await ok("bob", ["claim", "src/a.ts"]);
    // An agent that comes back and claims again holds its claims again.
    await ok("alice", ["status", "ready"]);
    await ok("alice", ["claim", "docs/x.md"]);
    expectError(await as("bob", ["claim", "docs/x.md"]), 1);
  });

  test("a holder whose window is closed and who never registered holds nothing", async () => {
    server.addWindow("dave", repo.dir);
    await ok("dave", ["claim", "src/a.ts"]);
    expectError(await as("bob", ["claim", "src/a.ts"]), 1);
    server.run(["kill-window", "-t", server.agent("dave").windowId]);
    expect(await ok("bob", ["claim", "src/a.ts"])).toStartWith("claimed src/a.ts (exclusive, bob,");
    expect((await claimsJson("bob")).map((claim) => claim.holder)).toEqual(["bob"]);
  });

  test("doctor notes claims that ended; cleanup removes them and tells their waiters; a dry run only says so", async () => {
    await ok("alice", ["claim", "src/a.ts"]);
    expectError(await as("bob", ["claim", "src/a.ts"]), 1);
    await ok("alice", ["claim", "--renew", "src/a.ts", "--ttl", "1s"]);
    await waitFor("alice's claim renewed for 1 s to run out", async () => (await claimsJson("carol"))[0]?.state === "ended");
    const doctor = oneJson(await as("carol", ["doctor", "--json"])) as {
      findings: { area: string; status: string; message: string; fix: string | null }[];
    };
    expect(doctor.findings.filter((finding) => finding.area === "claims")).toEqual([
      { area: "claims", status: "ok", message: "0 live claims on paths, held by 0 agents", fix: null },
      {
        area: "claims",
        status: "note",
        message: "the claim on src/a.ts of alice ran out, and is still stored; it stops nobody",
        fix: "agentmail cleanup",
      },
    ]);
    // The claims document is agentmail's own: no note calls it foreign or says to move it (which would drop every claim).
    expect(doctor.findings.filter((finding) => `${finding.message} ${finding.fix}`.includes(".claims.json"))).toEqual([]);
    expect(await ok("carol", ["cleanup", "--dry-run"])).toContain("would remove the claim on src/a.ts of alice (expired)");
    expect((await claimsJson("carol")).length).toBe(1);
    expect(await ok("carol", ["cleanup"])).toContain("removed the claim on src/a.ts of alice (expired)");
    expect(await claimsJson("carol")).toEqual([]);
    expect(notices("bob").at(-1)![0]).toBe("claim released: src/a.ts");
  });
});

describe("where claims apply", () => {
  test("every worktree of a repository shares the claims, on paths from the repository root", async () => {
    await ok("alice", ["claim", "src/a.ts"]);
    writeFileSync(join(repo.dir, "README"), "x");
    const git = (args: string[]) => Bun.spawnSync(["git", "-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: repo.dir });
    git(["add", "README"]);
    git(["commit", "-qm", "one"]);
    const linked = `${repo.dir}-linked`;
    expect(git(["worktree", "add", "-q", linked]).exitCode).toBe(0);
    try {
      const fromThere = await as("bob", ["claim", `${linked}/src/a.ts`], linked);
      expect(expectError(fromThere, 1)).toContain("src/a.ts is claimed by alice");
    } finally {
      git(["worktree", "remove", "--force", linked]);
    }
  });

  test("from a subdirectory, paths are relative to it as git takes them: claim, a glob, release, ../ and an absolute path", async () => {
    mkdirSync(join(repo.dir, "src"));
    mkdirSync(join(repo.dir, "docs"));
    const inSrc = join(repo.dir, "src");
    const claimed = await as("alice", ["claim", "a.ts", "*.md", "../docs/guide.md", join(repo.dir, "README"), "--json"], inSrc);
    expect((oneJson(claimed) as { claims: FileClaim[] }).claims.map((claim) => claim.path)).toEqual([
      "src/a.ts",
      "src/*.md",
      "docs/guide.md",
      "README",
    ]);
    expect(expectError(await as("bob", ["claim", "src/a.ts"]), 1)).toContain("src/a.ts is claimed by alice");
    expect(expectError(await as("bob", ["claim", "../src/a.ts"], join(repo.dir, "docs")), 1)).toContain("is claimed by alice");
    expect((await as("alice", ["release", "a.ts"], inSrc)).stdout).toBe("released src/a.ts\n");
    expect(expectError(await as("alice", ["claim", "../../x"], inSrc), 1)).toContain(
      "cannot claim '../../x': it leads out of the repository",
    );
    expect((await claimsJson("alice")).map((claim) => claim.path)).toEqual(["README", "docs/guide.md", "src/*.md"]);
  });

  test("through a symlink a path is the file it names: alias/a.ts (alias -> src) is src/a.ts, alias/** is src/**", async () => {
    mkdirSync(join(repo.dir, "src"));
    writeFileSync(join(repo.dir, "src", "a.ts"), "a\n");
    symlinkSync("src", join(repo.dir, "alias"));
    await ok("alice", ["claim", "src/a.ts"]);
    expect(expectError(await as("bob", ["claim", "alias/a.ts"]), 1)).toContain("src/a.ts is claimed by alice");
    expect(expectError(await as("bob", ["claim", "alias/**"]), 1)).toContain("src/** is claimed by alice");
    expect(await ok("alice", ["claim", "alias/b.ts"])).toStartWith("claimed src/b.ts (exclusive, alice,");
    symlinkSync(tmpdirOutside(), join(repo.dir, "out"));
    expect(expectError(await as("bob", ["claim", "out/x"]), 1)).toContain(
      "cannot claim 'out/x': it leads out of the repository through a symlink",
    );
  });

  test("bad input is refused and changes nothing: no path, a path outside the repository, a release of what one does not hold, outside tmux", async () => {
    expect(expectError(await as("alice", ["claim"]), 1)).toContain("give the paths or globs to claim");
    expect(expectError(await as("alice", ["claim", "/etc/passwd"]), 1)).toContain(
      "cannot claim '/etc/passwd': it is outside the repository",
    );
    expect(expectError(await as("alice", ["claim", "../x"]), 1)).toContain("it leads out of the repository");
    expect(expectError(await as("alice", ["claim", "a", "--ttl", "9d"]), 1)).toContain("--ttl takes a duration from 1s to 7d");
    expect(expectError(await as("alice", ["claim", "--renew", "--shared"]), 1)).toContain("--renew takes only paths and --ttl");
    expect(expectJsonError(await as("alice", ["release", "src/a.ts", "--json"]), 1)).toEqual({
      code: "not_found",
      message: "you hold no claim on 'src/a.ts'; run 'agentmail claims --mine' to see yours",
    });
    expect(await ok("alice", ["release"])).toBe("No claims to release\n");
    const outside = await am(["claim", "src/a.ts"], { env: outsideTmuxEnv(), cwd: repo.dir });
    expectError(outside, 2);
    expect(await claimsJson("alice")).toEqual([]);
  });
});
