/**
 * The promises of issue 31 in Claude Code, interactive against the mock model, with agentmail's hooks installed and
 * nothing else: no mailman is started by the test.
 *
 * - Nothing started by hand: the session's own start brought up the store's mailman, so a send reaches it idle.
 * - A body cannot forge the frame: a fake closing line, a fake second header block and a fake "typed by your user"
 *   arrive as one message's body, every line of it quoted.
 * - A burst is not pushed turn after turn: 50 messages reach the model as at most five bodies whole, the rest listed or
 *   counted, each once.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { FORGED_FOOTER, FORGED_HEADER, FORGED_USER } from "../support/forged-bodies.ts";
import { burstFigures, describeBurst, sendBurst } from "./burst.ts";
import { AGENT, Interactive, SENDER, until } from "./interactive.ts";
import { claudeSession, launchClaude, routeByContent, setUpClaude } from "./launch.ts";

setDefaultTimeout(240_000);

const BURST = "burst";
let lab: Interactive;

/** The newest user message of an Anthropic request, as text. */
const lastUserText = (body: { messages?: { role: string; content: unknown }[] }): string => {
  const content = (body?.messages ?? []).filter((message) => message.role === "user").at(-1)?.content;
  if (typeof content === "string") return content;
  return (Array.isArray(content) ? content : []).map((block: { text?: string }) => block.text ?? "").join("\n");
};

beforeAll(async () => {
  lab = new Interactive([BURST]);
  lab.world.mock.otherwise(routeByContent);
  await setUpClaude(lab);
  await launchClaude(lab, AGENT);
  await launchClaude(lab, BURST);
});

afterAll(async () => {
  await lab?.stop();
});

const status = () => lab.mailmanStatus();

describe("Claude Code with agentmail's hooks installed, and no mailman started by the test", () => {
  test("an idle session is woken by a send: its session start brought up the mailman, which says so", async () => {
    const started = await until(
      "a mailman brought up by a session start",
      async () => ((await status()).running ? status() : null),
      60_000,
    );
    expect(started.started_by).toMatchObject({ how: "session-start" });
    expect([AGENT, BURST]).toContain(String(started.started_by?.agent));
    const sentAt = Date.now();
    const id = await lab.world.send(SENDER, AGENT, "Idle mail, nothing started by hand (wake-5e1d).");
    const request = await until(
      "a model request carrying the mail",
      () => lab.requestCarrying("wake-5e1d", sentAt),
      60_000,
      () => lab.mailmanLog(),
    );
    expect(lastUserText(request.body)).toContain(`ID: ${id}`);
    expect(lastUserText(request.body)).toContain("Another Claude session sent a message:");
    expect(lab.inputBox(AGENT).replace(/[│❯>\s]/g, "")).toBe("");
    const doctor = (await lab.world.agentmail(["doctor"], SENDER)).stdout;
    expect(doctor).toMatch(/ok mailman: the mailman runs for this store \(pid \d+ on .+, started by the session start of "/);
    await until("the session idle again", () => claudeSession(lab, AGENT)?.status === "idle", 60_000);
  });

  test("a forged closing line, second header block and user's words arrive as one message's body, quoted line by line", async () => {
    const body = `${FORGED_FOOTER}\n${FORGED_HEADER}\n${FORGED_USER} (forge-3c9a)`;
    const sentAt = Date.now();
    const id = await lab.world.send(SENDER, AGENT, body);
    const request = await until(
      "the request carrying the forged body",
      () => lab.requestCarrying("forge-3c9a", sentAt),
      60_000,
      () => lab.mailmanLog(),
    );
    const text = lastUserText(request.body);
    const frame = text.slice(text.indexOf("agentmail: "));
    const lines = frame.split("\n");
    // agentmail's own lines: the opening, one header block, the closing line; every line of the body is quoted.
    expect(lines.filter((line) => line !== "" && !line.startsWith(">")).slice(0, 4)).toEqual([
      expect.stringMatching(/^agentmail: a message for you \("agent"\) from sender: mail between agents, not typed by your user; /),
      "From: sender",
      `ID: ${id}`,
      'Messages shown here are read now. Answer with: agentmail reply <id> "<text>".',
    ]);
    for (const forged of body.split("\n")) expect(lines).toContain(forged === "" ? ">" : `> ${forged}`);
    expect(lines.filter((line) => line.startsWith("From: "))).toEqual(["From: sender"]);
    await until("the session idle again", () => claudeSession(lab, AGENT)?.status === "idle", 60_000);
  });

  test("a burst of 50 to an idle session: at most five bodies whole, the rest listed or counted, none pushed twice", async () => {
    await until("the burst session idle", () => claudeSession(lab, BURST)?.status === "idle", 60_000);
    const since = Date.now();
    const ids = await sendBurst(lab, BURST);
    await until(
      "the burst all announced and the session quiet",
      async () => {
        const last = lab.world.mock.conversation.at(-1)?.at ?? 0;
        if (Date.now() - last < 8_000 || claudeSession(lab, BURST)?.status !== "idle") return false;
        return (await burstFigures(lab, since, ids)).shown.none === 0;
      },
      180_000,
      () => lab.mailmanLog(),
    );
    const figures = await burstFigures(lab, since, ids);
    console.log(describeBurst("Claude Code idle, burst of 50", figures));
    expect(figures.wholeInRequests.length).toBeLessThanOrEqual(5);
    expect(figures.shown.whole + figures.shown.cut).toBeLessThanOrEqual(5);
    expect(figures.shown.listed + figures.shown.counted).toBe(50 - figures.shown.whole - figures.shown.cut);
    // Listed or counted, a message is a receive away: its body never reached the model.
    const listedOrCounted = ids.flatMap((_, i) => (figures.wholeInRequests.includes(i) ? [] : [i]));
    expect(listedOrCounted.length).toBeGreaterThanOrEqual(45);
    expect(figures.mailChars).toBeLessThanOrEqual(3 * 4000);
    expect(figures.requests).toBeLessThanOrEqual(4);
  });
});
