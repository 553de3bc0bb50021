/**
 * What every agent CLI must show with agentmail installed by `agentmail hooks install <agent> --project`, run
 * headless against the mock model: the same checks for Claude Code, Codex CLI and Gemini CLI, each in a fresh world.
 *
 * A check of what the model saw reads the mock's recorded requests; a check of what happened to the mail reads the
 * store with the real binary; the order of the hooks' status changes comes from the agentmail shim's call log.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Recorded } from "../support/mock-model/server.ts";
import { ensureAgent, type AgentCli, type Installed } from "./install-agents.ts";
import { AGENT, SENDER, World, type AgentRun } from "./world.ts";

setDefaultTimeout(240_000);

export interface Driver {
  agent: AgentCli;
  /** What `hooks install <agent> --project` needs besides, for this CLI to run the hooks. */
  installArgs: string[];
  /** Points the CLI at the mock (the user's settings under HOME, before the install); returns the environment it needs. */
  configure(world: World): Record<string, string>;
  /** The argv of one headless prompt. */
  command(binary: string, prompt: string): string[];
  /** Whether the CLI has a session-end event (the status turns offline when it quits). */
  sessionEnd: boolean;
  /** The CLI's own word that the run ended normally, from its output. */
  succeeded(run: AgentRun): boolean;
}

/** Whether a recorded request carries `text` (as JSON escapes it: the body is compared as JSON text). */
function mentions(request: Recorded | undefined, text: string): boolean {
  return request !== undefined && JSON.stringify(request.body).includes(JSON.stringify(text).slice(1, -1));
}

/** A line of `agentmail onboard` that only the onboarding text has, and the line that names the agent. */
const ONBOARDING = [
  "Other agents work in the other windows of this session; each window name is an address.",
  `You are "${AGENT}" (the name of your tmux window).`,
];

/** What the Stop hook starts when its doorbell is rung (a session's first turn: a new pointer is rung). */
const STOP_HOOK = "receive --hook --ready";
const statusCalls = (world: World) => world.calls().filter((call) => call.args.startsWith("status ") || call.args === STOP_HOOK);

export function describeAgent(driver: Driver): void {
  let installed: Installed | undefined;
  let installError: Error | undefined;
  let world: World;
  const runTimes: number[] = [];

  beforeAll(() => {
    try {
      installed = ensureAgent(driver.agent);
    } catch (error) {
      installError = error as Error;
    }
  });

  beforeEach(async () => {
    world = new World();
  });

  afterEach(() => world.stop());

  afterAll(() => {
    if (!installed || runTimes.length === 0) return;
    const sorted = [...runTimes].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)]!;
    const longest = sorted.at(-1)!;
    const times = `median ${median.toFixed(2)} s, longest ${longest.toFixed(2)} s`;
    console.log(`${installed.title} ${installed.version}: ${runTimes.length} headless runs, ${times}`);
  });

  /** The installed CLI; a failed install fails every test with its reason (never a skip). */
  function binary(): string {
    if (installError) throw installError;
    return installed!.binary;
  }

  /** `hooks install` as the user runs it, then one headless prompt; the run must end normally. */
  async function runAgent(prompt: string): Promise<AgentRun> {
    const cli = binary();
    // The user's own settings first (the mock as their model), then agentmail merged into them.
    const env = driver.configure(world);
    const install = await world.agentmail(["hooks", "install", driver.agent, "--project", ...driver.installArgs]);
    expect({ code: install.code, stderr: install.stderr }).toEqual({ code: 0, stderr: "" });
    const run = await world.run(driver.command(cli, prompt), env);
    runTimes.push(run.seconds);
    const exit = `exit ${run.code}${run.timedOut ? " (killed: hung)" : ""}`;
    const diagnosis = `${exit}\nstderr: ${run.stderr.slice(-3000)}\nstdout: ${run.stdout.slice(-3000)}`;
    expect(world.mock.errors, diagnosis).toEqual([]);
    expect({ code: run.code, timedOut: run.timedOut }, diagnosis).toEqual({ code: 0, timedOut: false });
    expect(driver.succeeded(run), diagnosis).toBe(true);
    return run;
  }

  describe(`${driver.agent}: agentmail hooks install ${driver.agent} --project, then a headless run`, () => {
    test("session start marks the agent ready and the onboarding text reaches the model's first request", async () => {
      await runAgent("Say hello.");
      const first = world.mock.conversation[0];
      for (const line of ONBOARDING) expect(mentions(first, line), `the first request should carry: ${line}`).toBe(true);
      const calls = world.calls().map((call) => `${call.args} ${call.exit}`);
      const ready = calls.indexOf("status ready 0");
      expect(ready).toBeGreaterThanOrEqual(0);
      expect(ready).toBeLessThan(calls.indexOf("status work 0"));
    });

    test("with no mail, the turn-end hook adds nothing to the conversation and the run ends normally", async () => {
      await runAgent("Say hello.");
      expect(world.mock.conversation.length).toBe(1);
      expect(mentions(world.mock.conversation[0], "You got new mail")).toBe(false);
      const hooks = world.calls().filter((call) => call.args === STOP_HOOK);
      expect(hooks).toEqual([{ args: STOP_HOOK, exit: 0 }]);
    });

    test(`status goes ready → work → ready across a turn${driver.sessionEnd ? ", and offline at session end" : ""}`, async () => {
      let during: string | null | undefined;
      world.mock.script(async () => {
        during = await world.status();
        return { text: "Hello." };
      });
      await runAgent("Say hello.");
      expect(during).toBe("work");
      const expected = ["status ready", "status work", STOP_HOOK, ...(driver.sessionEnd ? ["status offline"] : [])];
      expect(statusCalls(world)).toEqual(expected.map((args) => ({ args, exit: 0 })));
      expect(await world.status()).toBe(driver.sessionEnd ? "offline" : "ready");
    });

    test("mail sent during a turn is delivered at its end: the model gets it, takes another turn, and it is read once", async () => {
      const body = "Please rebase onto main before you push (mail-7f3a).";
      let id = "";
      world.mock.script(
        async () => {
          id = await world.send(SENDER, AGENT, body);
          return { text: "Working on it." };
        },
        { text: "Rebased, as the mail asked." },
      );
      await runAgent("Fix the build.");
      const [first, second, ...rest] = world.mock.conversation;
      expect(mentions(first, body)).toBe(false);
      expect(mentions(second, body), "the request after the turn should carry the mail").toBe(true);
      expect(mentions(second, id)).toBe(true);
      expect(rest).toEqual([]);
      expect(world.mailbox(AGENT).map((message) => [message.id, message.read_flag])).toEqual([[id, true]]);
      // The second turn's end finds the doorbell quiet (the first emptied it), so agentmail is not even started; Codex's
      // Stop hook has no doorbell (its hooks run in its app-server daemon, whose TMUX_PANE may be another TUI's).
      const hooks = world.calls().filter((call) => call.args === STOP_HOOK);
      expect(hooks.map((call) => call.exit)).toEqual(driver.agent === "codex" ? [2, 0] : [2]);
      expect((await world.agentmail(["receive"])).stdout).toBe("No unread messages\n");
    });

    test("the MCP server the agent starts from the installed configuration sends the mail the model asks for", async () => {
      const body = "Review done: two nits, see PR 42.";
      world.mock.script({ tool: "send", input: { recipient: SENDER, message: body } }, { text: "Sent." });
      await runAgent("Tell the sender the review is done.");
      const [call, after] = world.mock.conversation;
      expect(call!.toolName).toMatch(/agentmail/);
      const delivered = world.mailbox(SENDER);
      expect(delivered.map((message) => [message.from, message.to, message.message, message.read_flag])).toEqual([
        [AGENT, SENDER, body, false],
      ]);
      // The tool's result is the id with each copy's delivery state: {"id":"…","copies":[{"mailbox":…,"delivery":…}]}.
      expect(
        mentions(after, `{"id":"${delivered[0]!.id}","copies":[{"mailbox":"${SENDER}"`),
        "the tool's result should reach the model",
      ).toBe(true);
    });

    test("receive through the MCP server hands unread mail to the model and marks it read", async () => {
      const body = "The staging database is back up.";
      const id = await world.send(SENDER, AGENT, body);
      world.mock.script({ tool: "receive", input: {} }, { text: "Noted." });
      await runAgent("Check your mail.");
      const [, after, ...rest] = world.mock.conversation;
      expect(mentions(after, body)).toBe(true);
      expect(mentions(after, id)).toBe(true);
      expect(rest).toEqual([]);
      expect(world.mailbox(AGENT).map((message) => [message.id, message.read_flag])).toEqual([[id, true]]);
      // The post-tool hook after the receive tool quieted the doorbell (nothing is unread), so the Stop hook's shell
      // ends without starting agentmail; Codex CLI's Stop hook has no doorbell and starts it, finding nothing.
      const stopStarts = world.calls().filter((call) => call.args === STOP_HOOK);
      expect(stopStarts).toEqual(driver.agent === "codex" ? [{ args: STOP_HOOK, exit: 0 }] : []);
    });
  });
}
