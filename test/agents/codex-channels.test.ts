/**
 * Codex CLI, interactive in a private tmux server against the mock model, with agentmail's hooks installed and
 * trusted (`hooks install codex --user --trust`) and the mailman running (no typing): mail reaches an idle TUI as a
 * queued turn and a busy one through `turn/steer`, after its running tool's output, through the app-server daemon's
 * control socket; nothing is typed. Two TUIs share one daemon (and so run their hooks in it): each TUI's hooks speak
 * for its own pane, and each gets its own mail. The daemon outlives tmux: it is stopped by its pid files. The
 * "protocol" tests check what agentmail relies on in Codex itself, apart from agentmail.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { loadedIn, RawControl } from "./codex-raw-control.ts";
import { AGENT, carries, Interactive, SENDER, until } from "./interactive.ts";
import { isCodexTitle, launchCodex, routeByContent, setUpCodex } from "./launch.ts";

setDefaultTimeout(180_000);

const SECOND = "agent2";
let lab: Interactive;
let codexHome: string;
let secondDir: string;

type Item = { type?: string; role?: string; content?: unknown; output?: unknown };
const lastInput = (body: { input?: Item[] }): Item | undefined => (body?.input ?? []).at(-1);

const conversation = () => lab.world.mock.conversation.filter((request) => !isCodexTitle(request.body));
const requestCarrying = (text: string, after = 0) => conversation().find((request) => request.at >= after && carries(request.body, text));

beforeAll(async () => {
  lab = new Interactive([SECOND]);
  lab.world.mock.otherwise(routeByContent);
  secondDir = join(lab.world.repo.dir, "second");
  codexHome = await setUpCodex(lab, [lab.world.repo.dir, secondDir]);
  // The first TUI starts the daemon; the second joins it.
  await launchCodex(lab, AGENT, lab.world.repo.dir, () => loadedIn(codexHome, lab.world.repo.dir));
  await launchCodex(lab, SECOND, secondDir, () => loadedIn(codexHome, secondDir));
  await lab.startMailman();
});

afterAll(async () => {
  await lab?.stop();
});

describe("protocol: Codex CLI 0.169.0 as agentmail relies on it", () => {
  test("the control socket: initialize, loaded threads with their cwd, and turn/steer refused with no active turn", async () => {
    const control = await RawControl.open(join(codexHome, "app-server-control", "app-server-control.sock"));
    try {
      const init = await control.call("initialize", {
        clientInfo: { name: "agentmail-tests", version: "1" },
        capabilities: { experimentalApi: true },
      });
      expect(init.error).toBeUndefined();
      const loaded = (await control.call("thread/loaded/list", {})).result.data as string[];
      const threads = await Promise.all(loaded.map(async (threadId) => (await control.call("thread/read", { threadId })).result.thread));
      const mine = threads.filter((thread) => thread.cwd === lab.world.repo.dir && thread.ephemeral === false);
      expect(mine.length).toBe(1);
      expect(mine[0].status.type).toBe("idle");
      const steer = await control.call("turn/steer", {
        threadId: mine[0].id,
        expectedTurnId: "019a0000-0000-7000-8000-000000000000",
        input: [{ type: "text", text: "x", text_elements: [] }],
      });
      expect(steer.error).toMatchObject({ code: -32600 });
      expect(steer.error!.message).toContain("no active turn to steer");
    } finally {
      control.close();
    }
  });
});

describe("Codex CLI's control socket, through the mailman", () => {
  test("an idle TUI gets its mail as a queued turn, and nothing is typed", async () => {
    const sentAt = Date.now();
    const id = await lab.world.send(SENDER, AGENT, "Idle mail for Codex (cx-idle-2b7e).");
    const request = await until(
      "a model request carrying the mail",
      () => requestCarrying("cx-idle-2b7e", sentAt),
      60_000,
      () => lab.mailmanLog(),
    );
    expect(JSON.stringify(lastInput(request.body))).toContain(id);
    expect(lab.mailmanLog()).toContain(`framed 1 message for "${AGENT}" via codex-queue in ${lab.pane(AGENT)}`);
    expect(lab.mailmanLog()).not.toContain("reminded");
    expect(await lab.sent(id, AGENT)).toMatchObject({ read_flag: true, delivery: { state: "read", channel: "codex-queue" } });
  });

  test("a busy TUI gets it through turn/steer, after the running tool's output; the tool completes", async () => {
    const startedAt = Date.now();
    await lab.world.send(SENDER, AGENT, "Please wait (RUN-SLEEP-6 cx-busy-a1).");
    await until(
      "the exec_command sleep asked for",
      () => requestCarrying("cx-busy-a1", startedAt)?.reply,
      60_000,
      () => lab.mailmanLog(),
    );
    const sentAt = Date.now();
    const id = await lab.world.send(SENDER, AGENT, "Busy mail for Codex (cx-busy-5c9d).");
    const request = await until(
      "the request carrying the busy mail",
      () => requestCarrying("cx-busy-5c9d", sentAt),
      60_000,
      () => lab.mailmanLog(),
    );
    const input = request.body.input as Item[];
    const output = input.map((item) => item.type).lastIndexOf("function_call_output");
    expect(output).toBeGreaterThan(0);
    expect(JSON.stringify(input.slice(output + 1))).toContain("cx-busy-5c9d");
    expect(JSON.stringify(input[output]!.output)).not.toMatch(/abort|interrupt/i);
    expect(lab.mailmanLog()).toContain(`via codex-steer in ${lab.pane(AGENT)}`);
    expect(await lab.sent(id, AGENT)).toMatchObject({ read_flag: true, delivery: { state: "read", channel: "codex-steer" } });
  });

  test("two TUIs share one daemon: each one's hooks speak for its own pane, and each gets its own mail", async () => {
    const sentAt = Date.now();
    const id = await lab.world.send(SENDER, SECOND, "Mail for the second Codex (cx-second-8e0f).");
    const request = await until(
      "the request carrying the second agent's mail",
      () => requestCarrying("cx-second-8e0f", sentAt),
      60_000,
      () => lab.mailmanLog(),
    );
    expect(await lab.sent(id, SECOND)).toMatchObject({
      delivery: { state: expect.stringMatching(/^(notified|read)$/), channel: "codex-queue" },
    });
    // The daemon ran this thread's SessionStart hook (onboard): it named the second agent, the pane of this thread,
    // not the first one, whose TUI started the daemon and whose TMUX_PANE every hook's environment holds.
    expect(carries(request.body, `You are "${SECOND}"`)).toBe(true);
    expect(carries(request.body, `You are "${AGENT}"`)).toBe(false);
    // Its UserPromptSubmit and Stop hooks set the second agent's own status (before the fix: never set).
    await until(
      "the second agent's status set by its own hooks",
      async () => (await lab.world.status(SECOND)) === "ready",
      60_000,
      () => JSON.stringify(lab.world.calls()),
    );
  });
});
