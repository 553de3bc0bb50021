/** `agentmail onboard` end to end: the text, the registration, and the hook JSON form. */
import { beforeAll, describe, expect, test } from "bun:test";
import { outsideTmuxEnv, type TmuxServer } from "../support/tmux-server.ts";
import { am, sharedSession } from "../support/workflow.ts";

const session = sharedSession();
const { inRepo } = session;
let server: TmuxServer, bob: Record<string, string>, outside: string;
beforeAll(() => ({ server, bob, outside } = session));

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
