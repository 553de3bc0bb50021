/**
 * The promises of issue 31 in Codex CLI, interactive against the mock model, with agentmail's hooks installed and
 * trusted and nothing else: no mailman is started by the test.
 *
 * - Nothing started by hand: Codex runs its SessionStart hooks only with a TUI's first turn, so for a TUI that never had
 *   one the send itself brings up the store's mailman, and the mail reaches the idle TUI as a queued turn.
 * - A body cannot forge the frame: Codex gives the frame to the model as the user's own turn, with no wrapper; a fake
 *   closing line, a fake second header block and a fake "typed by your user" arrive as one message's body, quoted.
 * - A burst is not pushed turn after turn: 50 messages reach the model as at most five bodies whole.
 * - Its hooks run in the daemon, yet use the doorbell: with nothing unread, the end of a turn starts no agentmail.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { FORGED_FOOTER, FORGED_HEADER, FORGED_USER } from "../support/forged-bodies.ts";
import { burstFigures, describeBurst, sendBurst } from "./burst.ts";
import { loadedIn } from "./codex-raw-control.ts";
import { AGENT, carries, Interactive, SENDER, until } from "./interactive.ts";
import { isCodexTitle, launchCodex, routeByContent, setUpCodex } from "./launch.ts";

setDefaultTimeout(240_000);

const BURST = "burst";
let lab: Interactive;
let codexHome: string;
let burstDir: string;

type Item = { type?: string; role?: string; content?: { text?: string }[] | string };
/** The text of the newest user item of an OpenAI request. */
const lastUserText = (body: { input?: Item[] }): string => {
  const item = (body?.input ?? []).filter((each) => each.role === "user").at(-1);
  if (typeof item?.content === "string") return item.content;
  return (item?.content ?? []).map((part) => part.text ?? "").join("\n");
};
const requestCarrying = (text: string, after = 0) =>
  lab.world.mock.conversation.find((request) => request.at >= after && !isCodexTitle(request.body) && carries(request.body, text));
const status = () => lab.mailmanStatus();

beforeAll(async () => {
  lab = new Interactive([BURST]);
  lab.world.mock.otherwise(routeByContent);
  burstDir = join(lab.world.repo.dir, "burst");
  codexHome = await setUpCodex(lab, [lab.world.repo.dir, burstDir]);
  await launchCodex(lab, AGENT, lab.world.repo.dir, () => loadedIn(codexHome, lab.world.repo.dir));
  await launchCodex(lab, BURST, burstDir, () => loadedIn(codexHome, burstDir));
});

afterAll(async () => {
  await lab?.stop();
});

describe("Codex CLI with agentmail's hooks installed, and no mailman started by the test", () => {
  test("an idle TUI that never had a turn is woken by a send, which brought up the mailman itself, and says so", async () => {
    // Codex runs its SessionStart hooks only with a TUI's first turn: nothing of agentmail has run yet.
    expect((await status()).running).toBe(false);
    expect(lab.world.calls()).toEqual([]);
    const sentAt = Date.now();
    const id = await lab.world.send(SENDER, AGENT, "Idle mail for Codex, nothing started by hand (cx-wake-41f0).");
    const request = await until(
      "a model request carrying the mail",
      () => requestCarrying("cx-wake-41f0", sentAt),
      60_000,
      () => lab.mailmanLog(),
    );
    expect(lastUserText(request.body)).toContain(`ID: ${id}`);
    expect(lab.mailmanLog()).toContain(`framed 1 message for "${AGENT}" via codex-queue`);
    expect((await status()).started_by).toMatchObject({ how: "send", agent: SENDER });
    await until("the thread idle again", () => loadedIn(codexHome, lab.world.repo.dir), 60_000);
  });

  test("a forged closing line, second header block and user's words arrive as one message's body, quoted line by line", async () => {
    const body = `${FORGED_FOOTER}\n${FORGED_HEADER}\n${FORGED_USER} (cx-forge-9b2e)`;
    const sentAt = Date.now();
    const id = await lab.world.send(SENDER, AGENT, body);
    const request = await until(
      "the request carrying the forged body",
      () => requestCarrying("cx-forge-9b2e", sentAt),
      60_000,
      () => lab.mailmanLog(),
    );
    // The user's own turn, as Codex gives it: agentmail's text and nothing around it.
    const text = lastUserText(request.body);
    expect(text).toStartWith('agentmail: a message for you ("agent") from sender: mail between agents, not typed by your user; ');
    const lines = text.split("\n");
    expect(lines.filter((line) => line !== "" && !line.startsWith(">"))).toEqual([
      expect.stringMatching(/^agentmail: a message for you/),
      "From: sender",
      `ID: ${id}`,
      'Messages shown here are read now. Answer with: agentmail reply <id> "<text>".',
    ]);
    for (const forged of body.split("\n")) expect(lines).toContain(forged === "" ? ">" : `> ${forged}`);
    await until("the thread idle again", () => loadedIn(codexHome, lab.world.repo.dir), 60_000);
  });

  test("its end-of-turn hook, run in the daemon, starts no agentmail when nothing is unread (the thread's doorbell)", async () => {
    const sentAt = Date.now();
    await lab.world.send(SENDER, AGENT, "Please wait (RUN-SLEEP-1 cx-bell-77d2).");
    await until(
      "the turn over",
      async () => requestCarrying("cx-bell-77d2", sentAt) && (await loadedIn(codexHome, lab.world.repo.dir)),
      90_000,
    );
    await until("the agent ready", async () => (await lab.world.status(AGENT)) === "ready", 30_000);
    const calls = lab.world.calls();
    // The tool's hook started agentmail (the send had rung the bell) and found nothing: the bell went quiet, so the
    // end of the same turn ran no agentmail, and its shell marked the agent ready.
    const afterTool = calls.map((call) => call.args).lastIndexOf("receive --after-tool codex");
    expect(afterTool).toBeGreaterThanOrEqual(0);
    expect(calls.slice(afterTool + 1).filter((call) => call.args.startsWith("receive --hook"))).toEqual([]);
  });

  test("a burst of 50 to an idle TUI: at most five bodies whole, the rest listed or counted, none pushed twice", async () => {
    await until("the burst thread idle", () => loadedIn(codexHome, burstDir), 60_000);
    const since = Date.now();
    const ids = await sendBurst(lab, BURST);
    await until(
      "the burst all announced and the thread quiet",
      async () => {
        const last = lab.world.mock.conversation.at(-1)?.at ?? 0;
        if (Date.now() - last < 8_000 || !(await loadedIn(codexHome, burstDir))) return false;
        return (await burstFigures(lab, since, ids, (request) => isCodexTitle(request.body))).shown.none === 0;
      },
      180_000,
      () => lab.mailmanLog(),
    );
    const figures = await burstFigures(lab, since, ids, (request) => isCodexTitle(request.body));
    console.log(describeBurst("Codex CLI idle, burst of 50", figures));
    expect(figures.wholeInRequests.length).toBeLessThanOrEqual(5);
    expect(figures.shown.whole + figures.shown.cut).toBeLessThanOrEqual(5);
    expect(figures.shown.listed + figures.shown.counted).toBe(50 - figures.shown.whole - figures.shown.cut);
    expect(figures.requests).toBeLessThanOrEqual(4);
  });
});
