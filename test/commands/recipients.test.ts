/** `agentmail recipients` end to end: the session's windows, [you], and .agentmailignore. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempRepo } from "../support/repo.ts";
import { outsideTmuxEnv, TmuxServer } from "../support/tmux-server.ts";
import { am, expectError, expectJsonError, expectSent, oneJson, storedMessages } from "../support/workflow.ts";

describe("recipients and .agentmailignore", () => {
  let r: ReturnType<typeof tempRepo>;
  let s: TmuxServer;
  const ignore = () => join(r.dir, ".agentmailignore");
  const as = (name: string, cwd?: string) => ({ env: s.agent(name).env, cwd: cwd ?? r.dir });

  beforeAll(() => {
    r = tempRepo();
    s = TmuxServer.start(["alice", "bob", "carol", "dave"], r.dir);
  });
  afterAll(() => {
    s?.stop();
    r?.remove();
  });

  test("lists the session's windows one per line, the caller's own followed by ' [you]'", async () => {
    rmSync(ignore(), { force: true });
    const result = await am(["recipients"], as("bob"));
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
      code: 0,
      stdout: "alice\nbob [you]\ncarol\ndave\n",
      stderr: "",
    });
  });

  test('--json: [{"name","you"}…]', async () => {
    rmSync(ignore(), { force: true });
    const result = await am(["recipients", "--json"], as("alice"));
    expect(result.code).toBe(0);
    expect(oneJson(result)).toEqual([
      { name: "alice", you: true, auto: false, status: null, last_seen: null },
      { name: "bob", you: false, auto: false, status: null, last_seen: null },
      { name: "carol", you: false, auto: false, status: null, last_seen: null },
      { name: "dave", you: false, auto: false, status: null, last_seen: null },
    ]);
  });

  test("a window added later is listed", async () => {
    rmSync(ignore(), { force: true });
    s.addWindow("erin", r.dir);
    const result = await am(["recipients"], as("alice"));
    expect(result.stdout).toBe("alice [you]\nbob\ncarol\ndave\nerin\n");
    s.run(["kill-window", "-t", s.agent("erin").windowId]);
    expect((await am(["recipients"], as("alice"))).stdout).toBe("alice [you]\nbob\ncarol\ndave\n");
  });

  test(".agentmailignore hides windows; blank lines and # comments are ignored", async () => {
    writeFileSync(ignore(), "# the humans\n\ncarol\n   \n#dave\n");
    const result = await am(["recipients"], as("alice"));
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "alice [you]\nbob\ndave\n" });
    expect(oneJson(await am(["recipients", "--json"], as("alice")))).toEqual([
      { name: "alice", you: true, auto: false, status: null, last_seen: null },
      { name: "bob", you: false, auto: false, status: null, last_seen: null },
      { name: "dave", you: false, auto: false, status: null, last_seen: null },
    ]);
  });

  test("the caller's own window is always shown, even when listed", async () => {
    writeFileSync(ignore(), "carol\nalice\n");
    expect((await am(["recipients"], as("carol"))).stdout).toBe("bob\ncarol [you]\ndave\n");
    expect(oneJson(await am(["recipients", "--json"], as("carol")))).toEqual([
      { name: "bob", you: false, auto: false, status: null, last_seen: null },
      { name: "carol", you: true, auto: false, status: null, last_seen: null },
      { name: "dave", you: false, auto: false, status: null, last_seen: null },
    ]);
  });

  test("the file at the repository's top applies from a subdirectory too", async () => {
    writeFileSync(ignore(), "carol\n");
    const sub = join(r.dir, "src", "deep");
    mkdirSync(sub, { recursive: true });
    expect((await am(["recipients"], as("alice", sub))).stdout).toBe("alice [you]\nbob\ndave\n");
  });

  test("send to a hidden window fails like an unknown recipient (exit 1), and stores nothing", async () => {
    writeFileSync(ignore(), "# hidden\ncarol\n");
    const hidden = await am(["send", "carol", "psst"], as("alice"));
    const unknown = await am(["send", "zed", "psst"], as("alice"));
    expectError(hidden, 1);
    expectError(unknown, 1);
    expect(hidden.stderr).toContain("carol");
    const hiddenJson = expectJsonError(await am(["send", "carol", "psst", "--json"], as("alice")), 1);
    const unknownJson = expectJsonError(await am(["send", "zed", "psst", "--json"], as("alice")), 1);
    expect(hiddenJson.code).toBe(unknownJson.code);
    expect(storedMessages(join(r.mailDir, "carol.jsonl"))).toEqual([]);
  });

  test("an agent listed in .agentmailignore can still send to others and to itself", async () => {
    writeFileSync(ignore(), "carol\n");
    expectSent(await am(["send", "bob", "from a hidden window"], as("carol")));
    expectSent(await am(["send", "carol", "note to self"], as("carol")));
    expect(storedMessages(join(r.mailDir, "bob.jsonl")).at(-1)).toMatchObject({ from: "carol", message: "from a hidden window" });
  });

  test("removing a name from the file makes the window a recipient again", async () => {
    writeFileSync(ignore(), "# nobody hidden\n");
    expect((await am(["recipients"], as("alice"))).stdout).toBe("alice [you]\nbob\ncarol\ndave\n");
    expectSent(await am(["send", "carol", "visible again"], as("alice")));
  });

  test("outside tmux: exit 2 and one error line", async () => {
    expectError(await am(["recipients"], { env: outsideTmuxEnv(), cwd: r.dir }), 2);
  });
});
