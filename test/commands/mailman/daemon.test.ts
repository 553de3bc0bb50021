/**
 * The mailman's life cycle with the compiled binary: `mailman --daemon` starts one background process per store and
 * prints its pid, `mailman status` reports it, a second mailman for the same store (foreground or daemon, from any
 * directory of the repository) is refused naming the running pid, and `mailman stop` ends it for good.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tempRepo } from "../../support/repo.ts";
import { outsideTmuxEnv, TmuxServer } from "../../support/tmux-server.ts";
import { alive, am, expectError, expectJsonError, killPid, oneJson, printedPid, start, waitFor } from "../../support/workflow.ts";

const DAEMON = ["mailman", "--daemon", "--interval", "2", "--sweep", "0.2"];

interface MailmanStatus {
  running: boolean;
  pid: number | null;
  since: string | null;
  log: string;
}

let repo: ReturnType<typeof tempRepo>;
let other: ReturnType<typeof tempRepo>;
let server: TmuxServer;
let alice: Record<string, string>;
/** Every mailman pid seen, killed in afterAll if it is somehow still there. */
const seen = new Set<number>();

const inRepo = (cwd = repo.dir, env = alice) => ({ env, cwd });
const logPath = () => join(repo.mailDir, ".mailman", "log");

async function status(cwd = repo.dir): Promise<MailmanStatus> {
  const result = await am(["mailman", "status", "--json"], inRepo(cwd));
  expect(result.code).toBe(0);
  const report = oneJson(result) as MailmanStatus;
  if (report.pid) seen.add(report.pid);
  return report;
}

async function startDaemon(cwd = repo.dir): Promise<number> {
  const result = await am(DAEMON, inRepo(cwd));
  const pid = printedPid(result.stdout);
  if (pid) seen.add(pid);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  expect(pid).not.toBeNull();
  return pid!;
}

beforeAll(() => {
  repo = tempRepo();
  other = tempRepo();
  server = TmuxServer.start(["alice", "bob"], repo.dir);
  alice = server.agent("alice").env;
});

afterAll(async () => {
  const stop = async (dir: string | undefined) => {
    if (!dir) return;
    try {
      const report = oneJson(await am(["mailman", "status", "--json"], inRepo(dir))) as MailmanStatus;
      if (report.pid) seen.add(report.pid);
    } catch {
      // Fall through to stop and kill.
    }
    await am(["mailman", "stop"], inRepo(dir));
  };
  await Promise.all([stop(repo?.dir), stop(other?.dir)]);
  for (const pid of seen) if (alive(pid)) killPid(pid);
  server?.stop();
  repo?.remove();
  other?.remove();
});

describe("mailman life cycle", () => {
  let pid = 0;

  test("nothing runs at first: status says not running", async () => {
    const result = await am(["mailman", "status"], inRepo());
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    expect(result.stdout).toContain("not running");
    expect(await status()).toMatchObject({ running: false, pid: null });
  });

  test("mailman --daemon starts a background process and prints its pid", async () => {
    pid = await startDaemon();
    expect(alive(pid)).toBe(true);
    expect(existsSync(logPath())).toBe(true);
  });

  test("mailman status says it runs, with that pid; --json has running:true and the pid", async () => {
    const result = await am(["mailman", "status"], inRepo());
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    expect(result.stdout).toMatch(/\brunning\b/);
    expect(result.stdout).not.toContain("not running");
    expect(result.stdout).toContain(String(pid));
    const report = await status();
    expect(report).toMatchObject({ running: true, pid });
    expect(report.log).toBe(logPath());
  });

  test("status works from a subdirectory and outside tmux too (same store)", async () => {
    const sub = join(repo.dir, "sub", "dir");
    mkdirSync(sub, { recursive: true });
    expect(await status(sub)).toMatchObject({ running: true, pid });
    const outside = await am(["mailman", "status", "--json"], { env: outsideTmuxEnv(), cwd: repo.dir });
    expect(oneJson(outside)).toMatchObject({ running: true, pid });
  });

  test("a second daemon for the same store fails with exit 1 naming the running pid", async () => {
    const result = await am(DAEMON, inRepo());
    const stray = printedPid(result.stdout);
    if (stray && stray !== pid) seen.add(stray);
    expect(expectError(result, 1)).toContain(String(pid));
    const json = expectJsonError(await am([...DAEMON, "--json"], inRepo()), 1);
    expect(json.message).toContain(String(pid));
    expect(await status()).toMatchObject({ running: true, pid });
  });

  test("a second daemon says first that one already runs, with its pid, and leaves the running one's log alone", async () => {
    const logBefore = readFileSync(logPath(), "utf8");
    const result = await am(DAEMON, inRepo());
    const stray = printedPid(result.stdout);
    if (stray && stray !== pid) seen.add(stray);
    expect(expectError(result, 1)).toStartWith(
      `error: a mailman already runs for this store (pid ${pid}); stop it with 'agentmail mailman stop'`,
    );
    expect(readFileSync(logPath(), "utf8")).toBe(logBefore);
  });

  test("a second foreground mailman fails with exit 1 naming the running pid (it does not run on)", async () => {
    const foreground = await am(["mailman", "--interval", "2", "--sweep", "0.2"], inRepo());
    expect(expectError(foreground, 1)).toContain(String(pid));
    const json = await am(["mailman", "--json"], inRepo());
    expect(expectJsonError(json, 1).message).toContain(String(pid));
  });

  test("the same store reached another way (a subdirectory, AGENTMAIL_DIR) is refused too", async () => {
    const sub = join(repo.dir, "sub");
    mkdirSync(sub, { recursive: true });
    expect(expectError(await am(DAEMON, inRepo(sub)), 1)).toContain(String(pid));
    const viaEnv = await am(["mailman"], { env: { ...alice, AGENTMAIL_DIR: repo.mailDir }, cwd: other.dir });
    expect(expectError(viaEnv, 1)).toContain(String(pid));
    expect(await status()).toMatchObject({ running: true, pid });
  });

  test("another repository's store can have its own mailman (stopped in afterAll)", async () => {
    const otherPid = await startDaemon(other.dir);
    expect(otherPid).not.toBe(pid);
    expect(await status(other.dir)).toMatchObject({ running: true, pid: otherPid });
    expect(await status()).toMatchObject({ running: true, pid });
  });

  test("the log is in <repo>/.git/mail/.mailman/log", async () => {
    await waitFor("the mailman's log to say it is watching", () => readFileSync(logPath(), "utf8").includes("watching"));
  });

  test("mailman stop stops it: the pid no longer exists and status says not running", async () => {
    const result = await am(["mailman", "stop"], inRepo());
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    expect(result.stdout).toContain(String(pid));
    await waitFor(`the stopped mailman's pid ${pid} to be gone`, () => !existsSync(`/proc/${pid}`));
    expect(alive(pid)).toBe(false);
    const text = await am(["mailman", "status"], inRepo());
    expect(text.stdout).toContain("not running");
    expect(await status()).toMatchObject({ running: false, pid: null });
  });

  test("mailman stop when none runs: exit 0, says so; --json has stopped:false", async () => {
    const result = await am(["mailman", "stop"], inRepo());
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "mailman is not running\n" });
    const json = await am(["mailman", "stop", "--json"], inRepo());
    expect(json.code).toBe(0);
    expect(oneJson(json)).toMatchObject({ stopped: false });
  });

  test("after a stop a new daemon starts (--json); killed with SIGKILL it is reported not running and can be replaced", async () => {
    const result = await am([...DAEMON, "--json"], inRepo());
    expect(result.code).toBe(0);
    const started = oneJson(result) as { running: boolean; pid: number };
    seen.add(started.pid);
    expect(started).toMatchObject({ running: true });
    expect(started.pid).not.toBe(pid);
    expect(await status()).toMatchObject({ running: true, pid: started.pid });

    killPid(started.pid);
    await waitFor(`the killed mailman's pid ${started.pid} to be gone`, () => !alive(started.pid));
    expect(await status()).toMatchObject({ running: false, pid: null });
    const next = await startDaemon();
    expect(next).not.toBe(started.pid);
    expect(await status()).toMatchObject({ running: true, pid: next });
    const stopped = await am(["mailman", "stop", "--json"], inRepo());
    expect(oneJson(stopped)).toMatchObject({ stopped: true, pid: next });
    // Stopped: gone at once, or (SIGKILLed after its grace on a loaded machine) a moment later.
    await waitFor(`the stopped mailman's pid ${next} to be gone`, () => !alive(next));
    expect(await status()).toMatchObject({ running: false });
  });

  test("a foreground mailman: status shows its pid, mailman stop ends it and it exits by itself", async () => {
    const foreground = start(["mailman", "--interval", "2", "--sweep", "0.2"], inRepo());
    seen.add(foreground.pid);
    try {
      await waitFor("mailman status to show the foreground mailman's pid", async () => (await status()).pid === foreground.pid);
      expect(expectError(await am(DAEMON, inRepo()), 1)).toContain(String(foreground.pid));
      expect((await am(["mailman", "stop"], inRepo())).code).toBe(0);
      await foreground.done;
      expect(alive(foreground.pid)).toBe(false);
      expect(await status()).toMatchObject({ running: false });
    } finally {
      foreground.kill();
    }
  });
});
