/** `agentmail status` end to end: setting and reading it, in and outside tmux, on a terminal and in hooks. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { onTerminal } from "../support/e2e.ts";
import { tempRepo } from "../support/repo.ts";
import { outsideTmuxEnv, TmuxServer } from "../support/tmux-server.ts";
import { am, expectError, oneJson, sleep } from "../support/workflow.ts";

describe("status", () => {
  let r: ReturnType<typeof tempRepo>;
  let s: TmuxServer;
  const as = (name: string) => ({ env: s.agent(name).env, cwd: r.dir });
  const ISO = "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?Z";

  beforeAll(() => {
    r = tempRepo();
    s = TmuxServer.start(["alice", "bob"], r.dir);
  });
  afterAll(() => {
    s?.stop();
    r?.remove();
  });

  test("never set: prints none…", async () => {
    const result = await am(["status"], as("alice"));
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    expect(result.stdout).toMatch(/^none\b/);
    expect(oneJson(await am(["status", "--json"], as("alice")))).toMatchObject({ name: "alice", status: null });
  });

  test("status ready is stored; status prints 'ready since …'", async () => {
    const set = await am(["status", "ready"], as("alice"));
    expect({ code: set.code, stderr: set.stderr }).toEqual({ code: 0, stderr: "" });
    const shown = await am(["status"], as("alice"));
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^ready since ${ISO}\\n$`));
    expect(oneJson(await am(["status", "--json"], as("alice")))).toMatchObject({ name: "alice", status: "ready" });
  });

  test("work and offline are stored too, each per agent", async () => {
    expect((await am(["status", "work"], as("alice"))).code).toBe(0);
    expect((await am(["status"], as("alice"))).stdout).toMatch(new RegExp(`^work since ${ISO}\\n$`));
    expect((await am(["status", "offline"], as("bob"))).code).toBe(0);
    expect((await am(["status"], as("bob"))).stdout).toMatch(new RegExp(`^offline since ${ISO}\\n$`));
    expect((await am(["status"], as("alice"))).stdout).toMatch(/^work since/);
  });

  test("setting the same status again keeps 'since'; a new status moves it", async () => {
    const before = oneJson(await am(["status", "--json"], as("alice"))) as { since: string; status: string };
    expect(before.status).toBe("work");
    await sleep(20);
    expect((await am(["status", "work"], as("alice"))).code).toBe(0);
    const same = oneJson(await am(["status", "--json"], as("alice"))) as { since: string };
    expect(same.since).toBe(before.since);
    await sleep(20);
    const set = await am(["status", "ready", "--json"], as("alice"));
    expect(set.code).toBe(0);
    expect(oneJson(set)).toMatchObject({ name: "alice", status: "ready" });
    const after = oneJson(await am(["status", "--json"], as("alice"))) as { since: string };
    expect(Date.parse(after.since)).toBeGreaterThan(Date.parse(before.since));
  });

  test("status bogus: exit 1, one error line, nothing changed", async () => {
    expectError(await am(["status", "bogus"], as("alice")), 1);
    expect((await am(["status"], as("alice"))).stdout).toMatch(/^ready since/);
  });

  test("in tmux with stderr on a terminal, setting a status confirms it on stderr", async () => {
    const { env, cwd } = as("bob");
    expect(onTerminal('"$B" status work', env, cwd)).toEqual({ code: 0, screen: "status: work\n" });
    expect(onTerminal('"$B" status ready >out.txt', env, cwd)).toEqual({ code: 0, screen: "status: ready\n" });
    expect(readFileSync(join(cwd, "out.txt"), "utf8")).toBe("");
    expect(oneJson(await am(["status", "--json"], as("bob")))).toMatchObject({ name: "bob", status: "ready" });
  });

  test("in tmux with stderr on a pipe (a hook), setting a status prints nothing", async () => {
    const { env, cwd } = as("bob");
    expect(onTerminal('"$B" status offline 2>err.txt', env, cwd)).toEqual({ code: 0, screen: "" });
    expect(readFileSync(join(cwd, "err.txt"), "utf8")).toBe("");
    const piped = await am(["status", "ready"], as("bob"));
    expect({ code: piped.code, stdout: piped.stdout, stderr: piped.stderr }).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(oneJson(await am(["status", "--json"], as("bob")))).toMatchObject({ name: "bob", status: "ready" });
  });

  test("outside tmux with stderr on a terminal, status ready says it set nothing, and why", async () => {
    const screen = onTerminal('"$B" status ready', outsideTmuxEnv(), r.dir);
    expect(screen.code).toBe(0);
    expect(screen.screen).toMatch(/^status: not set: [^\n]*tmux[^\n]*\n$/);
  });

  test("outside tmux, status ready prints nothing and exits 0", async () => {
    const result = await am(["status", "ready"], { env: outsideTmuxEnv(), cwd: r.dir });
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
      code: 0,
      stdout: "",
      stderr: "",
    });
  });

  test("outside tmux, status work and offline print nothing and exit 0, and nothing is stored", async () => {
    for (const state of ["work", "offline"]) {
      const result = await am(["status", state], { env: outsideTmuxEnv(), cwd: r.dir });
      expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({ code: 0, stdout: "", stderr: "" });
    }
    expect((await am(["status"], as("alice"))).stdout).toMatch(/^ready since/);
  });
});
