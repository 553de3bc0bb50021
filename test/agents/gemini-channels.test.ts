/**
 * Gemini CLI, interactive in a private tmux server against the mock model, with agentmail's hooks installed
 * (`hooks install gemini --user`) and the mailman running (no typing). Gemini CLI has no way in while its prompt
 * waits, so the user's first prompt is typed (the harness stands in for the user; the mail itself never is): mail
 * sent while its tool runs reaches the model after the tool, through the AfterTool hook; mail to it while idle is
 * recorded as unreachable, with why, and nothing is typed. The "protocol" test checks what agentmail relies on in
 * Gemini CLI: a hook's additionalContext reaches the model inside the tool's response.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { AGENT, Interactive, SENDER, until } from "./interactive.ts";
import { launchGemini, routeByContent } from "./launch.ts";

setDefaultTimeout(180_000);

let lab: Interactive;

type Content = { role?: string; parts?: { text?: string; functionResponse?: unknown }[] };
const lastContent = (body: { contents?: Content[] }) => (body?.contents ?? []).at(-1);

/** Whether a `sleep <seconds>` process runs (the tool Gemini started). */
function sleepRuns(seconds: number): boolean {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ").trim().endsWith(`sleep ${seconds}`)) return true;
    } catch {
      // Gone.
    }
  }
  return false;
}

beforeAll(async () => {
  lab = new Interactive();
  lab.world.mock.otherwise(routeByContent);
  await launchGemini(lab, AGENT);
  await lab.startMailman();
});

afterAll(async () => {
  await lab?.stop();
});

describe("protocol: Gemini CLI 0.61.0 as agentmail relies on it", () => {
  test("mail sent while a tool runs reaches the model after the tool, inside its response, through the AfterTool hook", async () => {
    const startedAt = Date.now();
    await lab.typePrompt(AGENT, "Please wait (RUN-SLEEP-5 gm-busy).");
    await until(
      "the sleep Gemini runs",
      () => sleepRuns(5),
      60_000,
      () => lab.screen(AGENT),
    );
    const id = await lab.world.send(SENDER, AGENT, "Busy mail for Gemini (gm-busy-mail-4e21).");
    const request = await until(
      "the request carrying the mail",
      () => lab.requestCarrying("gm-busy-mail-4e21", startedAt),
      60_000,
      () => lab.screen(AGENT),
    );
    const response = JSON.stringify(lastContent(request.body));
    expect(response).toContain('"functionResponse"');
    expect(response).toContain("hook_context");
    expect(response).toContain(id);
    expect(await lab.sent(id, AGENT)).toMatchObject({ read_flag: true, delivery: { state: "read", channel: "tool-hook" } });
    expect(lab.mailmanLog()).not.toContain("reminded");
  });
});

describe("Gemini CLI idle", () => {
  test("cannot be reached: the mail is recorded unreachable with why, doctor says so, and nothing is typed", async () => {
    await until("the prompt back", () => lab.screen(AGENT).includes("Type your message"), 60_000);
    await until("the turn over", async () => (await lab.world.status(AGENT)) === "ready", 60_000);
    const before = lab.world.mock.conversation.length;
    const id = await lab.world.send(SENDER, AGENT, "Idle mail for Gemini (gm-idle-77b0).");
    await until(
      "the unreachable event",
      async () => (await lab.sent(id, AGENT))?.delivery?.event === "unreachable",
      30_000,
      () => lab.mailmanLog(),
    );
    expect((await lab.sent(id, AGENT))?.delivery?.reason).toContain("Gemini CLI cannot be reached while idle");
    const doctor = (await lab.world.agentmail(["doctor"], SENDER)).stdout;
    // Said once, in the hooks' lines; the agent's own line points at typing, the one way to wake it.
    expect(doctor.split("\n").filter((line) => line.includes("cannot be woken without keystrokes")).length).toBe(1);
    expect(doctor).toContain(`"${AGENT}" (pane ${lab.pane(AGENT)}): Gemini CLI: its hooks bring the mail`);
    expect(lab.world.mock.conversation.length).toBe(before);
    expect(lab.screen(AGENT)).not.toContain("gm-idle-77b0");
  });
});
