/**
 * The claude-team bridge against the real Claude Code (the pinned version, interactive in a private tmux server,
 * offline against the mock model, agent teams on). The lead's session makes its team; agentmail finds it from the
 * lead's window (`bridge add claude-team --lead`), and an agentmail agent in another window joins it (`bridge join`).
 * The lead spawns an in-process helper, so it polls its inbox (it polls only while it has a teammate of its own);
 * the mock answers the helper apart from the lead (a diversion). SendMessage is one of 2.1.332's deferred tools: it is
 * not in the request's tool list, and runs when called by its name.
 *
 * Checked: `agentmail send` to the lead reaches the model's next request; the lead's SendMessage to the joined agent
 * arrives through `agentmail receive`, while a malformed inbox beside it is reported and left as it is; storms of 200
 * each way at once (agentmail's sends into the lead's inbox, the lead's SendMessages imported by `bridge run`) lose
 * and duplicate nothing.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { am, expectSent, start } from "../support/e2e.ts";
import type { Reply, Turn } from "../support/mock-model/server.ts";
import versions from "./versions.json" with { type: "json" };
import {
  answersTools,
  isTeammateRequest,
  lastUserText,
  leadRequests,
  sessionTeam,
  startInteractiveClaude,
  typePrompt,
  until,
  type InteractiveClaude,
} from "./claude-interactive.ts";
import { ensureAgent } from "./install-agents.ts";
import { AGENT, SENDER, World } from "./world.ts";

setDefaultTimeout(240_000);

const JOINED = "codex";
const STORM = 200;
const PER_TURN = 4;

let world: World;
let claude: InteractiveClaude;
let team: string;
let stormSent = 0;
let storming = false;

/** The lead's model: a helper on SPAWN-HELPER, a SendMessage on TELL-CODEX, 50 turns of 4 SendMessages on STORM-GO. */
function lead(turn: Turn): Reply {
  const last = lastUserText(turn.body);
  if (last.includes("SPAWN-HELPER")) {
    return {
      tool: "Agent",
      input: { description: "a helper", prompt: "HELPER-TASK: go idle", name: "helper", subagent_type: "general-purpose" },
    };
  }
  if (last.includes("TELL-CODEX")) {
    return {
      tool: "SendMessage",
      unlisted: true,
      input: { to: JOINED, summary: "review request", message: "LEAD-1: please review PR 12" },
    };
  }
  if (last.includes("STORM-GO")) storming = true;
  if (storming && (last.includes("STORM-GO") || answersTools(turn.body))) {
    if (stormSent >= STORM) {
      storming = false;
      return { text: "Done." };
    }
    const calls = Array.from({ length: PER_TURN }, () => ({
      tool: "SendMessage",
      unlisted: true as const,
      input: { to: JOINED, summary: "storm", message: `STORM-OUT-${stormSent++}` },
    }));
    return { ...calls[0]!, also: calls.slice(1) };
  }
  return { text: "Done." };
}

const as = (window: string) => ({ env: world.env(window), cwd: world.repo.dir, timeoutMs: 60_000 });
const leadText = () => leadRequests(world).map((request) => JSON.stringify(request.body.messages));
const configOf = () => JSON.parse(readFileSync(join(claude.configDir, "teams", team, "config.json"), "utf8"));
const inbox = (member: string) => join(claude.configDir, "teams", team, "inboxes", `${member}.json`);

beforeAll(async () => {
  world = new World();
  world.tmux.addWindow(JOINED, world.repo.dir);
  const installed = ensureAgent("claude");
  world.mock.divert((turn) => isTeammateRequest(turn.text), { text: "helper: idle." }).otherwise(lead);
  claude = await startInteractiveClaude(world, installed.binary, versions.claude.version, ["Agent", "SendMessage", "ToolSearch"]);
  team = await sessionTeam(claude, world);
  for (const window of [SENDER, JOINED]) expect((await am(["status", "ready"], as(window))).code).toBe(0);
  const added = await am(["bridge", "add", "claude-team", "--lead", AGENT, "--json"], as(SENDER));
  expect({ code: added.code, stderr: added.stderr }).toEqual({ code: 0, stderr: "" });
  expect(JSON.parse(added.stdout)).toMatchObject({ name: team, kind: "claude-team", lead: AGENT });
  expect((await am(["bridge", "join", `claude-team:${team}`], as(JOINED))).stdout).toBe(`joined ${team} as ${JOINED}\n`);
  expect((await am(["bridge", "join", `claude-team:${team}`, "--as", "gem"], as(SENDER))).code).toBe(0);
  // The lead polls its inbox only while it has a Claude teammate of its own.
  await typePrompt(claude, world, "SPAWN-HELPER please");
  await until(claude, world, "the helper in config.json", () => configOf().members.some((member: any) => member.name === "helper"));
  expect(
    configOf()
      .members.map((member: any) => member.name)
      .sort(),
  ).toEqual([JOINED, "gem", "helper", "team-lead"]);
});

afterAll(() => world?.stop());

describe(`claude ${versions.claude.version}: the claude-team bridge, against the mock model`, () => {
  test("agentmail send to the lead reaches the model's next request, framed as a teammate's message", async () => {
    const before = leadRequests(world).length;
    const sent = await am(["send", `claude-team:${team}/team-lead`, "MARK-IN-1: hello lead"], as(SENDER));
    expectSent(sent);
    expect(sent.stderr).toBe("");
    await until(claude, world, "the message in a lead request", () =>
      leadRequests(world)
        .slice(before)
        .some((request) => lastUserText(request.body).includes("MARK-IN-1")),
    );
    const delivered = leadRequests(world).find((request) => lastUserText(request.body).includes("MARK-IN-1"))!;
    expect(lastUserText(delivered.body)).toContain(`<teammate-message teammate_id=\\"${SENDER}\\"`);
    expect(world.mock.errors).toEqual([]);
  });

  test("the lead's SendMessage to a joined agent arrives through agentmail receive; a malformed inbox beside it is reported", async () => {
    writeFileSync(inbox("gem"), "{ not json");
    await typePrompt(claude, world, "TELL-CODEX now");
    await until(claude, world, "SendMessage's result", () => leadText().some((text) => text.includes("Message sent to codex")));
    const sync = await am(["bridge", "sync"], as(SENDER));
    expect({ code: sync.code, stderr: sync.stderr }).toEqual({ code: 0, stderr: "" });
    expect(sync.stdout).toContain(`left ${team} ~/.claude/teams/${team}/inboxes/gem.json: it is not JSON`);
    expect(sync.stdout).toMatch(new RegExp(`imported ${team} ~/\\.claude/teams/${team}/inboxes/codex\\.json -> ${JOINED} [A-Za-z0-9]{8}`));
    const received = await am(["receive", "--json"], as(JOINED));
    expect(JSON.parse(received.stdout)).toMatchObject({
      from: `claude-team:${team}/team-lead`,
      to: JOINED,
      message: "LEAD-1: please review PR 12",
      subject: "review request",
      via: { bridge: "claude-team", team },
    });
    expect(readFileSync(inbox("gem"), "utf8")).toBe("{ not json");
    expect(JSON.parse(readFileSync(inbox(JOINED), "utf8"))).toEqual([]);
  });

  test("storms of 200 each way at once (agentmail into the lead's inbox, the lead's SendMessages out) lose and duplicate nothing", async () => {
    const run = start(["bridge", "run", "--sweep", "1"], { ...as(SENDER), timeoutMs: 230_000 });
    try {
      await typePrompt(claude, world, "STORM-GO");
      const sendFrom = async (worker: number) => {
        for (let n = worker; n < STORM; n += 4) {
          const sent = await am(["send", `claude-team:${team}/team-lead`, `STORM-IN-${n}`], as(SENDER));
          expectSent(sent);
          expect(sent.stderr).toBe("");
        }
      };
      await Promise.all([0, 1, 2, 3].map(sendFrom));
      await until(
        claude,
        world,
        "every STORM-IN in a lead request",
        () => new Set(leadText().flatMap((text) => text.match(/STORM-IN-\d+\b/g) ?? [])).size === STORM,
        180_000,
      );
      const outs = () => world.mailbox(JOINED).filter((message) => message.message.startsWith("STORM-OUT-"));
      await until(claude, world, "every STORM-OUT imported", () => outs().length >= STORM && !storming, 180_000);
    } finally {
      process.kill(run.pid, "SIGTERM");
    }
    expect((await run.done).code).toBe(0);
    // The last request holds the whole history: each message delivered once shows once.
    const history = leadText().at(-1)!;
    const inCounts = new Map<string, number>();
    for (const marker of history.match(/STORM-IN-\d+\b/g) ?? []) inCounts.set(marker, (inCounts.get(marker) ?? 0) + 1);
    expect(inCounts.size).toBe(STORM);
    expect([...inCounts.values()].filter((count) => count !== 1)).toEqual([]);
    expect(history.match(/Message sent to codex/g)?.length).toBe(STORM + 1);
    expect(history).not.toContain("Failed to write");
    const outCounts = new Map<string, number>();
    for (const message of world.mailbox(JOINED)) {
      if (message.message.startsWith("STORM-OUT-")) outCounts.set(message.message, (outCounts.get(message.message) ?? 0) + 1);
    }
    expect(outCounts.size).toBe(STORM);
    expect([...outCounts.values()].filter((count) => count !== 1)).toEqual([]);
    expect(JSON.parse(readFileSync(inbox(JOINED), "utf8"))).toEqual([]);
    expect(world.mock.errors).toEqual([]);
  });
});
