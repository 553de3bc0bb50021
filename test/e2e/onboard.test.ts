/** `agentmail onboard` end to end: the text, the registration, and the hook JSON form. */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tempRepo } from "../support/repo.ts";
import { outsideTmuxEnv, TmuxServer } from "../support/tmux-server.ts";
import { am } from "../support/workflow.ts";

// Generous: a loaded 2-core machine is slow. No test asserts on time.
setDefaultTimeout(30_000);

let repo: ReturnType<typeof tempRepo>;
let server: TmuxServer;
let bob: Record<string, string>;
let outside: string;

beforeAll(() => {
  repo = tempRepo();
  server = TmuxServer.start(["alice", "bob", "carol"], repo.dir);
  bob = server.agent("bob").env;
  outside = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-nogit-")));
});

afterAll(() => {
  server?.stop();
  repo?.remove();
  if (outside) rmSync(outside, { recursive: true, force: true });
});

const inRepo = (env: Record<string, string>) => ({ env, cwd: repo.dir });

/** Reads every unread message of an agent so a test starts from an empty inbox. */

describe("onboard", () => {
  const check = (text: string) => {
    expect(text.trimEnd().split("\n").length).toBeLessThanOrEqual(40);
    for (const word of ["recipients", "send", "receive", "--wait", "ready", "work", "offline"]) expect(text).toContain(word);
    for (const command of ["inbox", "reply <id>", "read <id>", "thread <id>"]) expect(text).toContain(`agentmail ${command}`);
    // Agents stopped after the first message: the text says to receive until nothing is left.
    expect(text).toMatch(/repeat[^\n]*until[^\n]*No unread messages/i);
  };

  test("in tmux: at most 40 lines, names the agent, teaches the commands and statuses; exit 0", async () => {
    const result = await am(["onboard"], inRepo(bob));
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    check(result.stdout);
    expect(result.stdout).toContain("bob");
  });

  test("in another window it names that window", async () => {
    const result = await am(["onboard"], inRepo(server.agent("carol").env));
    expect(result.stdout).toContain("carol");
  });

  test("outside tmux: exit 0, still the text", async () => {
    const result = await am(["onboard"], inRepo(outsideTmuxEnv()));
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    check(result.stdout);
  });

  test("outside a repository: exit 0", async () => {
    const result = await am(["onboard"], { env: bob, cwd: outside });
    expect(result.code).toBe(0);
    check(result.stdout);
  });
});
