/**
 * The mailman puts mail in front of agents through their agent CLI's own channel, end to end with the compiled
 * binary, against stand-ins (test/support/fake-agent.ts): a Claude Code stand-in with an inbox (registry entry and
 * socket, as Claude Code 2.1.332 has), one that holds mail as a bypass-permissions session does, a Gemini CLI
 * stand-in, and a bare shell. The real CLIs are in test/agents/channels-*.test.ts; these run in seconds.
 *
 * Nothing is typed: the stand-ins answer every submitted line with `got: …`, and none may show one. Waits poll with
 * generous deadlines; nothing measures time.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fakeClaude, installFakeAgents, startFakeAgent } from "../../support/fake-agent.ts";
import { removeDir, tempRepo } from "../../support/repo.ts";
import { TmuxServer } from "../../support/tmux-server.ts";
import { am, expectSent, oneJson, paneText, printedPid, stopMailman, storedMessages, waitFor } from "../../support/workflow.ts";

let repo: ReturnType<typeof tempRepo>;
let server: TmuxServer;
let bin: string;
const pids = new Set<number>();
const DAEMON = ["mailman", "--daemon", "--interval", "600", "--sweep", "0.3"];

const as = (name: string) => ({ env: server.agent(name).env, cwd: repo.dir });
const configDir = (name: string) => join(repo.dir, "..", `${repo.dir.split("/").pop()}-claude-${name}`);

interface Frame {
  priority: string;
  from?: string;
  msg_id?: string;
  message: { content: string };
}
const frames = (name: string): Frame[] =>
  existsSync(join(configDir(name), "frames.jsonl"))
    ? readFileSync(join(configDir(name), "frames.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line))
    : [];

interface Sent {
  id: string;
  to: string;
  read_flag: boolean;
  delivery?: { state: string; event?: string; channel?: string; reason?: string };
}
const sentBy = async (name: string) => oneJson(await am(["sent", "--json"], as(name))) as Sent[];
const sentOne = async (id: string, to: string) => (await sentBy("alice")).find((each) => each.id === id && each.to === to)!;

interface AgentState {
  name: string;
  outcome: string;
  detail: string;
  channel: string | null;
}
const mailmanAgent = async (name: string) =>
  (oneJson(await am(["mailman", "status", "--json"], as("alice"))) as { agents: AgentState[] }).agents.find((agent) => agent.name === name);

/** Nothing was typed into a stand-in: it shows no line it was given. */
const nothingTyped = (name: string) => expect(paneText(server, name)).not.toContain("got:");

async function startMailman(): Promise<void> {
  const started = await am(DAEMON, as("alice"));
  expect({ code: started.code, stderr: started.stderr }).toEqual({ code: 0, stderr: "" });
  const pid = printedPid(started.stdout);
  if (pid) pids.add(pid);
}

beforeAll(async () => {
  repo = tempRepo();
  bin = installFakeAgents(repo.dir);
  server = TmuxServer.start(["alice", "bob", "carol", "gem", "dave"], repo.dir);
  for (const [name, options] of [
    ["bob", ["--inbox"]],
    ["carol", ["--inbox", "--hold"]],
  ] as const) {
    mkdirSync(configDir(name), { recursive: true });
    await startFakeAgent(server, name, `CLAUDE_CONFIG_DIR='${configDir(name)}' ${fakeClaude(bin, ...options)}`);
  }
  await startFakeAgent(server, "gem", `node '${join(bin, "gemini")}'`);
  for (const name of ["bob", "carol", "gem", "dave"]) expect((await am(["status", "ready"], as(name))).code).toBe(0);
  await startMailman();
});

afterAll(async () => {
  await stopMailman(as("alice"), pids);
  server?.stop();
  if (repo) for (const name of ["bob", "carol"]) removeDir(configDir(name));
  repo?.remove();
});

describe("Claude Code's inbox", () => {
  test("an idle session gets its mail as one frame, nothing typed; the message is read once no bad receipt came", async () => {
    const id = expectSent(await am(["send", "bob", "PR #12 is ready for review"], as("alice")));
    const framed = await waitFor("a frame carrying the message in bob's inbox", () =>
      frames("bob").find((frame) => frame.message.content.includes(id)),
    );
    if (!framed) throw new Error(`no frame reached bob:\n${paneText(server, "bob")}`);
    expect(framed.priority).toBe("next");
    expect(framed.message.content).toStartWith(
      'agentmail: a message for you ("bob") from alice: mail between agents, not typed by your user; ' +
        'each message\'s text is quoted, its every line starting with ">".\n\n',
    );
    expect(framed.message.content).toContain(`From: alice\nID: ${id}\n\n> PR #12 is ready for review\n`);
    // Receipts go to a socket the mailman listens on beside the session's.
    expect(framed.from).toMatch(new RegExp(`^uds:${configDir("bob")}/socks/\\d+\\.sock$`));
    await waitFor("the frame on bob's screen", () => paneText(server, "bob").includes("inbox: agentmail: a message for you"));
    nothingTyped("bob");
    expect((await sentOne(id, "bob")).delivery).toMatchObject({
      state: expect.stringMatching(/^(notified|read)$/),
      channel: "claude-inbox",
    });
    const read = await waitFor("bob's mail marked read", () =>
      storedMessages(join(repo.mailDir, "bob.jsonl")).every((message) => message.read_flag),
    );
    expect(read).toBe(true);
    expect(await mailmanAgent("bob")).toMatchObject({ outcome: "notified", channel: "claude-inbox" });
    expect((await am(["receive", "--hook"], as("bob"))).code).toBe(0);
  });

  test("once the mailman verified the route, send frames a message itself, with no mailman running", async () => {
    const routes = join(repo.mailDir, ".mailman", "routes.json");
    expect(await waitFor("bob's verified route", () => existsSync(routes) && readFileSync(routes, "utf8").includes('"bob"'))).toBe(true);
    await stopMailman(as("alice"), pids);
    try {
      // Past the pace of the last frame to bob (2 s): the send's own frame is not held back.
      const framedAt = statSync(join(repo.mailDir, ".mailman", "framed", "bob")).mtimeMs;
      await waitFor("the pacing interval to pass", () => Date.now() > framedAt + 2_500);
      const id = expectSent(await am(["send", "bob", "sent while no mailman runs"], as("alice")));
      expect(frames("bob").some((frame) => frame.message.content.includes(id))).toBe(true);
      expect(storedMessages(join(repo.mailDir, "bob.jsonl")).find((message) => message.id === id)?.read_flag).toBe(true);
      nothingTyped("bob");
    } finally {
      await startMailman();
    }
  });

  test("a session that holds the mail (bypass permissions): held, reported with the setting, left unread, never hooked", async () => {
    const id = expectSent(await am(["send", "carol", "held for approval"], as("alice")));
    const held = await waitFor("sent to say held", async () => (await sentOne(id, "carol")).delivery?.event === "held");
    expect(held).toBe(true);
    expect((await sentOne(id, "carol")).delivery!.reason).toContain('"crossSessionInbound": "accept"');
    expect((await sentOne(id, "carol")).delivery).toMatchObject({ state: "stored", event: "held", channel: "claude-inbox" });
    expect((await am(["sent"], as("alice"))).stdout).toMatch(new RegExp(`${id} .* to carol  stored, held via claude-inbox`));
    expect(await waitFor("mailman status to say held", async () => (await mailmanAgent("carol"))?.outcome === "held")).toBe(true);
    const state = await mailmanAgent("carol");
    expect(state).toMatchObject({ outcome: "held", channel: "claude-inbox" });
    expect(state!.detail).toContain("crossSessionInbound");
    // The hook leaves it to the user's approval; it stays unread.
    expect(await am(["receive", "--hook"], as("carol"))).toMatchObject({ code: 0, stderr: "" });
    expect(storedMessages(join(repo.mailDir, "carol.jsonl")).map((message) => message.read_flag)).toEqual([false]);
    const doctor = await am(["doctor"], as("carol"));
    expect(doctor.stdout).toContain('problem delivery: "carol": 1 message held: Claude Code holds it');
    nothingTyped("carol");
  });

  test("a burst of 50 reaches the model as a few frames within the budget; each message in exactly one of them", async () => {
    const before = frames("bob").length;
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) ids.push(expectSent(await am(["send", "bob", "-s", `Burst ${i}`, `burst body ${i}`], as("alice"))));
    const all = await waitFor("every message of the burst framed", () => {
      const burst = frames("bob").slice(before);
      return ids.every((id) => burst.some((frame) => frame.message.content.includes(id))) ? burst : null;
    });
    if (!all) throw new Error(`not every message of the burst was framed:\n${JSON.stringify(frames("bob").slice(before)).slice(0, 2000)}`);
    expect(all.length).toBeLessThanOrEqual(12);
    for (const frame of all) expect(frame.message.content.length).toBeLessThanOrEqual(4000);
    for (const id of ids) expect(all.filter((frame) => frame.message.content.includes(id)).length).toBe(1);
    nothingTyped("bob");
  });
});

describe("no channel of its own", () => {
  test("an idle Gemini CLI cannot be reached: recorded with why, and nothing typed (typing is opt-in)", async () => {
    const id = expectSent(await am(["send", "gem", "for gemini"], as("alice")));
    const unreachable = await waitFor(
      "sent to say unreachable for gem",
      async () => (await sentOne(id, "gem")).delivery?.event === "unreachable",
    );
    expect(unreachable).toBe(true);
    expect((await sentOne(id, "gem")).delivery!.reason).toContain("Gemini CLI cannot be reached while idle");
    expect(await waitFor("mailman status to say hooks for gem", async () => (await mailmanAgent("gem"))?.outcome === "hooks")).toBe(true);
    expect(paneText(server, "gem")).not.toContain("got:");
    expect((await am(["doctor"], as("gem"))).stdout).toContain('note delivery: "gem" (pane');
  });

  test("a pane running a shell is never typed into; the mail waits, recorded unreachable", async () => {
    const screen = paneText(server, "dave");
    const id = expectSent(await am(["send", "dave", "for a shell"], as("alice")));
    const unreachable = await waitFor(
      "sent to say unreachable for dave",
      async () => (await sentOne(id, "dave")).delivery?.event === "unreachable",
    );
    expect(unreachable).toBe(true);
    expect((await sentOne(id, "dave")).delivery!.reason).toContain("runs bash, not an agent CLI");
    expect(paneText(server, "dave")).toBe(screen);
  });
});
