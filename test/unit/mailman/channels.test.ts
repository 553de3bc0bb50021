/**
 * The mailman's channel into an agent CLI (src/mailman/channels.ts, frameMail) once a route is found, in process:
 * a real Run (as loop.ts makes it, with the real native deliveries) against a private tmux server whose agents are
 * stand-in Claude Codes with an inbox (test/support/fake-agent.ts). A frame delivered is counted and noted with its
 * channel; the route found is kept and used again while the same session holds the pane; within the pace the next
 * frame waits; a frame that could only list mail waits for the burst's end; a frame a session's inbox did not take
 * forgets the route, says it waits, and goes along the route found afresh; a session that holds the mail at once is
 * left held. Without a route (no window, no agent CLI in it, a CLI with no channel) nothing is framed, why is recorded
 * on the messages once per reason, and a route kept for `send` is forgotten; so are routes an earlier mailman kept
 * that no longer lead into this project's agent of that name.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_BUDGET, FRAME_PACE_MS, type Budget } from "../../../src/mail/frame.ts";
import { createMessage, type Message } from "../../../src/mail/message.ts";
import { frameMail, keepRoutesInProject } from "../../../src/mailman/channels.ts";
import { GEMINI_IDLE } from "../../../src/mailman/adapters.ts";
import { newRun } from "../../../src/mailman/loop.ts";
import { projectPanes } from "../../../src/mailman/panes.ts";
import type { Run } from "../../../src/mailman/run-state.ts";
import { FileStore } from "../../../src/store/file/file-store.ts";
import { ensureRoot } from "../../../src/store/paths.ts";
import { lastFramed, readRoutes, writeRoutes } from "../../../src/store/local/routes-file.ts";
import type { Route } from "../../../src/mail/route.ts";
import type { Pane } from "../../../src/tmux/windows.ts";
import { fakeClaude, installFakeAgents, startFakeAgent } from "../../support/fake-agent.ts";
import { tempRepo } from "../../support/repo.ts";
import { TmuxServer } from "../../support/tmux-server.ts";
import { waitFor } from "../../support/wait.ts";

let repo: ReturnType<typeof tempRepo>;
let server: TmuxServer;
let root: string;
let store: FileStore;

/** Each stand-in's Claude Code config dir: its registry entry, its inbox socket and the frames it took. */
const configDir = (name: string) => join(repo.dir, `.claude-${name}`);

/** The stand-in Claude Codes: bob, dave and erin accept frames; carol holds them, answering before the send returns. */
const AGENTS: [string, string[]][] = [
  ["bob", ["--inbox"]],
  ["carol", ["--inbox", "--hold-first"]],
  ["dave", ["--inbox"]],
  ["erin", ["--inbox"]],
];

beforeAll(async () => {
  repo = tempRepo();
  root = ensureRoot(repo.mailDir);
  store = new FileStore(root);
  const bin = installFakeAgents(repo.dir);
  server = TmuxServer.start(["alice", "gem", ...AGENTS.map(([name]) => name)], repo.dir);
  await startFakeAgent(server, "gem", `node '${join(bin, "gemini")}'`);
  for (const [name, options] of AGENTS) {
    mkdirSync(configDir(name), { recursive: true });
    await startFakeAgent(server, name, `CLAUDE_CONFIG_DIR='${configDir(name)}' ${fakeClaude(bin, ...options)}`);
    await waitFor(`${name}'s inbox socket`, () => existsSync(session(name).messagingSocketPath));
  }
});

afterAll(() => {
  server?.stop();
  repo?.remove();
});

/** The stand-in's registry entry (the one file in its sessions/), and where it is. */
function session(name: string): { path: string; pid: number; messagingSocketPath: string } {
  const dir = join(configDir(name), "sessions");
  const [file] = existsSync(dir) ? readdirSync(dir) : [];
  if (file === undefined) return { path: "", pid: 0, messagingSocketPath: join(configDir(name), "none") };
  const path = join(dir, file);
  return { path, ...JSON.parse(readFileSync(path, "utf8")) };
}

/** The frames the stand-in's inbox took, as Claude Code would put them before its model. */
const frames = (name: string): string[] => {
  const path = join(configDir(name), "frames.jsonl");
  return existsSync(path)
    ? readFileSync(path, "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line).message.content as string)
    : [];
};

/** A mailman's Run as runMailman makes it (loop.ts newRun), logging into `logs`; its receipt sockets are closed by the caller. */
function newTestRun(logs: string[], budget: Budget = DEFAULT_BUDGET): Run {
  const env = server.agent("alice").env;
  const log = (line: string) => void logs.push(line);
  return newRun({ store, root, env, project: null, intervalMs: 60_000, sweepMs: 1_000, log, signal: new AbortController().signal, budget });
}

/** Runs `check` with a new Run and its log (newTestRun), then closes the Run's receipt sockets. */
async function withRun(check: (run: Run, logs: string[]) => Promise<void>, budget?: Budget): Promise<void> {
  const logs: string[] = [];
  const run = newTestRun(logs, budget);
  try {
    await check(run, logs);
  } finally {
    await run.native.close();
  }
}

const panes = async (): Promise<Pane[]> => (await projectPanes(server.agent("alice").env, null))!;

/** Mail from alice to `name`, stored; what a sweep finds fresh. */
async function mail(name: string, ...bodies: string[]): Promise<Message[]> {
  const messages = bodies.map((body) => createMessage("alice", name, body));
  for (const message of messages) await store.append(message);
  return messages;
}

/** One sweep's framing of `name`'s fresh mail. */
const frame = async (run: Run, name: string, messages: Message[]) =>
  frameMail(run, { name, unread: messages.length, status: null, statusPane: null }, messages, await panes());

/** What each message's delivery record says, event by event. */
const events = async (name: string, messages: Message[]) => {
  const records = await store.deliveries(name);
  return messages.map((message) => (records.get(message.id) ?? []).map((event) => event.event));
};

/** How many frames carried `message`. */
const framedTimes = (name: string, message: Message) => frames(name).filter((text) => text.includes(message.id)).length;

const pastPace = (name: string) =>
  waitFor(`the pace of ${name}'s last frame to pass`, () => Date.now() > lastFramed(root, name) + FRAME_PACE_MS);

describe("a frame delivered", () => {
  test("counted and noted with its channel; the next waits for the pace; then goes along the route kept for the same session", () =>
    withRun(async (run, logs) => {
      const pane = server.agent("bob").paneId;
      const [first] = await mail("bob", "PR #12 is ready");
      expect(await frame(run, "bob", [first!])).toBe(true);
      expect(framedTimes("bob", first!)).toBe(1);
      const line = `framed 1 message for "bob" via claude-inbox in ${pane}`;
      expect(logs).toEqual([line]);
      expect(run.state.frames).toBe(1);
      expect(run.state.last_action).toBe(line);
      expect(run.state.agents.bob).toMatchObject({ outcome: "notified", channel: "claude-inbox" });
      expect(run.state.agents.bob!.detail).toStartWith(`1 message via claude-inbox in ${pane} (session ${session("bob").pid} `);
      expect(await events("bob", [first!])).toEqual([["notified"]]);
      expect(run.routes.get("bob")).toMatchObject({ cli: "claude", paneId: pane, route: { socket: session("bob").messagingSocketPath } });

      // Mail within the pace of that frame waits for the next one; the mailman wakes when it is due (the earlier of
      // this and another agent's due time).
      const later = await mail("bob", "and the tests pass", "and the docs");
      run.paceDue = Date.now() + 3_600_000;
      expect(await frame(run, "bob", later)).toBe(true);
      expect(run.paceDue).toBe(lastFramed(root, "bob") + FRAME_PACE_MS);
      expect(frames("bob").length).toBe(1);
      expect(await events("bob", later)).toEqual([[], []]);
      expect(run.state.frames).toBe(1);

      // The session's registry entry goes: finding the route afresh would fail, so a frame proves the kept one is used.
      rmSync(session("bob").path);
      await pastPace("bob");
      expect(await frame(run, "bob", later)).toBe(true);
      expect(later.map((message) => framedTimes("bob", message))).toEqual([1, 1]);
      expect(frames("bob").length).toBe(2);
      expect(logs.at(-1)).toBe(`framed 2 messages for "bob" via claude-inbox in ${pane}`);
      expect(run.state.frames).toBe(2);
      expect(run.state.agents.bob).toMatchObject({ outcome: "notified", channel: "claude-inbox" });
    }));

  test("a session that holds the mail before the send returns: framed and logged, but left held, not noted as notified", () =>
    withRun(async (run, logs) => {
      const pane = server.agent("carol").paneId;
      const [message] = await mail("carol", "needs your approval");
      expect(await frame(run, "carol", [message!])).toBe(true);
      expect(framedTimes("carol", message!)).toBe(1);
      expect(await events("carol", [message!])).toEqual([["notified", "held"]]);
      expect(run.state.agents.carol).toMatchObject({ outcome: "held", channel: "claude-inbox" });
      expect(run.state.agents.carol!.detail).toStartWith(`1 message held in pane ${pane}: Claude Code holds it`);
      expect(logs.some((line) => line.startsWith('mail for "carol" held: '))).toBe(true);
      expect(logs.at(-1)).toBe(`framed 1 message for "carol" via claude-inbox in ${pane}`);
      expect(run.state.frames).toBe(1);
      // The state says held, as the receipt left it: the frame's line is the log's only.
      expect(run.state.last_action).toBeNull();
    }));
});

describe("a frame the session's inbox did not take", () => {
  test("the route is forgotten and the agent noted waiting; its mail, given back, goes once along the route found afresh", () =>
    withRun(async (run, logs) => {
      const [first] = await mail("dave", "hello");
      expect(await frame(run, "dave", [first!])).toBe(true);
      const kept = session("dave").messagingSocketPath;
      expect(run.routes.get("dave")?.route).toMatchObject({ socket: kept });
      // The session opens its inbox anew elsewhere (its registry entry says where): the kept route leads nowhere.
      const moved = `${kept}.moved`;
      renameSync(kept, moved);
      const entry = session("dave");
      writeFileSync(entry.path, JSON.stringify({ ...JSON.parse(readFileSync(entry.path, "utf8")), messagingSocketPath: moved }));
      await pastPace("dave");
      const [second] = await mail("dave", "are you there?");

      expect(await frame(run, "dave", [second!])).toBe(true);
      const why = `Claude Code's inbox ${kept} did not take the frame (ENOENT)`;
      expect(logs.at(-1)).toBe(`could not frame mail for "dave": ${why}; will retry`);
      expect(run.state.agents.dave).toMatchObject({ outcome: "waiting", detail: why });
      expect(run.routes.has("dave")).toBe(false);
      expect(run.state.frames).toBe(1);
      // Its claim withdrawn: the message is fresh again, for the next frame or a hook.
      expect(await events("dave", [second!])).toEqual([["notified", "failed"]]);
      expect(await store.announced("dave")).not.toContain(second!.id);

      expect(await frame(run, "dave", [second!])).toBe(true);
      expect(framedTimes("dave", second!)).toBe(1);
      expect(run.routes.get("dave")?.route).toMatchObject({ socket: moved });
      expect(run.state.agents.dave).toMatchObject({ outcome: "notified", channel: "claude-inbox" });
      expect(run.state.frames).toBe(2);
    }));
});

describe("a burst", () => {
  test("a frame that could only list mail waits for the burst's end, the route kept and nothing noted; then lists it once", () =>
    withRun(
      async (run, logs) => {
        const pane = server.agent("erin").paneId;
        const [first] = await mail("erin", "first of a burst");
        expect(await frame(run, "erin", [first!])).toBe(true);
        await pastPace("erin");
        const [second] = await mail("erin", "second of the burst");
        const before = structuredClone(run.state);

        expect(await frame(run, "erin", [second!])).toBe(true);
        expect(run.paceDue).toBeGreaterThan(Date.now());
        expect(frames("erin").length).toBe(1);
        expect(await events("erin", [second!])).toEqual([[]]);
        expect(run.state).toEqual(before);
        expect(run.routes.has("erin")).toBe(true);
        expect(logs).toEqual([`framed 1 message for "erin" via claude-inbox in ${pane}`]);

        const due = run.paceDue!;
        await waitFor("the burst's list to be due", () => Date.now() > due);
        expect(await frame(run, "erin", [second!])).toBe(true);
        expect(framedTimes("erin", second!)).toBe(1);
        expect((await store.deliveries("erin")).get(second!.id)).toMatchObject([{ event: "notified", shown: "listed" }]);
        expect(logs.at(-1)).toBe(`framed 1 message for "erin" via claude-inbox in ${pane}`);
        expect(run.state.frames).toBe(2);
      },
      // One message shown whole per arrival window: the next frame in the window could only list.
      { ...DEFAULT_BUDGET, messages: 1 },
    ));
});

describe("no route into the agent", () => {
  /** A route `send` could use, kept for `name` by an earlier mailman, into `pane`'s session `pid`. */
  const routeFor = (pane: string, pid: number): Route => ({ channel: "claude-inbox", pane, socket: join(repo.dir, "gone.sock"), pid });
  const reasons = async (name: string, message: Message) =>
    ((await store.deliveries(name)).get(message.id) ?? []).map((event) => [event.event, event.reason]);

  test("no window, a shell, a CLI with no channel: nothing framed, why recorded once per reason, the route for send forgotten", async () => {
    const verified = (pane: string) => ({ route: routeFor(pane, 1), verified_at: new Date().toISOString(), holds: false });
    writeRoutes(root, {
      ghost: verified("%999"),
      alice: verified(server.agent("alice").paneId),
      gem: verified(server.agent("gem").paneId),
    });
    await withRun(async (run, logs) => {
      const [ghost] = await mail("ghost", "anyone?");
      const [shell] = await mail("alice", "to a shell");
      const [gemini] = await mail("gem", "to gemini");
      for (let sweep = 0; sweep < 2; sweep++) {
        expect(await frame(run, "ghost", [ghost!])).toBe(false);
        expect(await frame(run, "alice", [shell!])).toBe(false);
        expect(await frame(run, "gem", [gemini!])).toBe(false);
      }
      const shellWhy = `pane ${server.agent("alice").paneId} runs bash, not an agent CLI`;
      expect(await reasons("ghost", ghost!)).toEqual([["unreachable", "no tmux window of this project has its name"]]);
      expect(await reasons("alice", shell!)).toEqual([
        ["unreachable", `no agent CLI runs in its window (${shellWhy}); nothing is typed there`],
      ]);
      expect(await reasons("gem", gemini!)).toEqual([["unreachable", GEMINI_IDLE]]);
      expect(run.state.agents.ghost).toMatchObject({ outcome: "no_window" });
      expect(run.state.agents.alice).toMatchObject({ outcome: "no_agent_pane", detail: shellWhy });
      expect(run.state.agents.gem).toMatchObject({ outcome: "hooks", detail: GEMINI_IDLE });
      // Each said once, not on every sweep.
      expect(logs).toEqual([
        'dropped "ghost": no window with that name',
        `not framing mail for "alice": ${shellWhy}; no agent CLI there; will retry`,
        `no channel into "gem": ${GEMINI_IDLE}`,
      ]);
      expect(readRoutes(root)).toEqual({});
      expect(run.state.frames).toBeUndefined();
    });
  });

  test("routes an earlier mailman kept for send stay only while they lead into this project's agent of that name", async () => {
    const dave = { pane: server.agent("dave").paneId, pid: session("dave").pid };
    const kept = (route: Route) => ({ route, verified_at: new Date().toISOString(), holds: false });
    writeRoutes(root, {
      dave: kept(routeFor(dave.pane, dave.pid)),
      // dave's session, kept as erin's route: it leads into another agent's window.
      erin: kept(routeFor(dave.pane, dave.pid)),
      // Pane ids repeat across tmux servers: a process that does not hold the pane is another server's.
      bob: kept(routeFor(server.agent("bob").paneId, process.pid)),
    });
    await withRun(async (run) => {
      await keepRoutesInProject(run);
      expect(Object.keys(readRoutes(root))).toEqual(["dave"]);
    });
  });
});
