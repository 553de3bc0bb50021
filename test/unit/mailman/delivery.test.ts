/**
 * The delivery feature in process, against stand-ins of the agent CLIs' channels: a Claude Code inbox (a registry
 * entry and a unix socket that records frames and can answer receipts) and a Codex app-server control socket (a
 * WebSocket server on a unix socket answering the JSON-RPC calls agentmail makes). The real CLIs are in test/agents.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createConnection, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stopHookMail, toolHookMail } from "../../../src/actions/hook-mail.ts";
import { createMessage, type Message } from "../../../src/mail/message.ts";
import type { Route } from "../../../src/mail/route.ts";
import { ADAPTERS, GEMINI_IDLE } from "../../../src/mailman/adapters.ts";
import { deliverAtOnce } from "../../../src/mailman/at-once.ts";
import {
  frameLine,
  paneOfSession,
  processStart,
  ReceiptListener,
  sendFrame,
  sessionAlive,
  sessionOfProcess,
} from "../../../src/mailman/claude-inbox.ts";
import { CodexControl, RpcError } from "../../../src/mailman/codex-control.ts";
import { deliverAlong } from "../../../src/mailman/deliver.ts";
import { DEFAULT_BUDGET, HOOK_HEAD } from "../../../src/mail/frame.ts";
import { codexDaemonAncestor, paneEnvironment, threadDirectory } from "../../../src/identity/codex-daemon.ts";
import { NativeDeliveries, RECEIPT_GRACE_MS } from "../../../src/mailman/native.ts";
import { FileStore } from "../../../src/store/file/file-store.ts";
import { lastFramed, readRoutes } from "../../../src/store/local/routes-file.ts";
import { codexDaemon } from "../../support/codex-control.ts";
import { waitFor } from "../../support/wait.ts";

let dir: string;
const children: ReturnType<typeof Bun.spawn>[] = [];
beforeAll(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-delivery-")));
});
afterAll(() => {
  for (const child of children) child.kill(9);
  rmSync(dir, { recursive: true, force: true });
});

const fresh = (name: string) => {
  const root = join(dir, name);
  mkdirSync(root, { recursive: true });
  return { root, store: new FileStore(root) };
};
const mail = (to: string, body: string, fields: object = {}): Message => createMessage("alice", to, body, new Date(), fields);

/** A stand-in of Claude Code's inbox: records each frame; `receipt` (a status) is answered to a frame's `from`. */
async function inbox(path: string, receipt?: () => string | null): Promise<{ frames: any[]; server: Server }> {
  const frames: any[] = [];
  const server = createServer((connection) => {
    let buffer = "";
    connection.on("data", (data) => {
      buffer += data;
      if (!buffer.includes("\n")) return;
      const frame = JSON.parse(buffer.slice(0, buffer.indexOf("\n")));
      frames.push(frame);
      const status = receipt?.() ?? null;
      if (status && frame.from) {
        const back = createConnection(frame.from.slice(4));
        back.on("connect", () => back.end(`${JSON.stringify({ type: "control", status, orig_msg_id: frame.msg_id })}\n`));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return { frames, server };
}

/**
 * A process in `cwd` with `env`, whose /proc entries the adapters read (a sleep: it runs until killed); returned once
 * it runs the program (before its exec, /proc shows the parent's environment).
 */
async function agentProcess(cwd: string, env: Record<string, string>, program = "sleep"): Promise<number> {
  const child = Bun.spawn([program, "300"], { cwd, env, stdin: "ignore", stdout: "ignore", stderr: "ignore" });
  children.push(child);
  await waitFor(`${program} ${child.pid} to run its program`, () => {
    try {
      return readFileSync(`/proc/${child.pid}/cmdline`, "utf8").endsWith("300\0");
    } catch {
      return false;
    }
  });
  return child.pid;
}

/**
 * A stand-in Codex CLI for /proc: `sleep` copied as `<tag>-bin/codex` (its executable is named codex), with a home and
 * a working directory for it, each new under the scratch dir.
 */
function codexSetup(tag: string): { codex: string; home: string; work: string } {
  const bin = join(dir, `${tag}-bin`);
  mkdirSync(bin, { recursive: true });
  copyFileSync(realpathSync(Bun.which("sleep")!), join(bin, "codex"));
  const work = join(dir, `${tag}-work`);
  mkdirSync(work, { recursive: true });
  return { codex: join(bin, "codex"), home: join(dir, `${tag}-home`), work };
}

describe("Claude Code's inbox", () => {
  test("the registry: the live session that is the pane's process or runs under it; stale and foreign files passed over", async () => {
    const config = join(dir, "claude-config");
    mkdirSync(join(config, "sessions"), { recursive: true });
    const live = { pid: process.pid, procStart: processStart(process.pid)!, tmux: "a:b:@1.%7", messagingSocketPath: "/x.sock" };
    writeFileSync(join(config, "sessions", `${process.pid}.json`), JSON.stringify(live));
    writeFileSync(join(config, "sessions", "1.json"), JSON.stringify({ ...live, pid: 1, procStart: "1" }));
    writeFileSync(join(config, "sessions", "2.json"), "not json");
    writeFileSync(join(config, "sessions", "notes.txt"), "x");
    expect(sessionOfProcess(config, process.pid, "%7")).toMatchObject({ pid: process.pid, messagingSocketPath: "/x.sock" });
    // Its `tmux` field names another pane: not this pane's session.
    expect(sessionOfProcess(config, process.pid, "%8")).toBeNull();
    expect(sessionOfProcess(join(dir, "nowhere"), process.pid, "%7")).toBeNull();
    // The session runs under the pane's process (a wrapper, a shell): found; a process it does not run under: not.
    expect(sessionOfProcess(config, process.ppid, "%7")).toMatchObject({ pid: process.pid });
    const other = await agentProcess(dir, { PATH: process.env.PATH! });
    expect(sessionOfProcess(config, other, "%7")).toBeNull();
    expect(paneOfSession({ pid: 1, tmux: "my:session:@3.%12" })).toBe("%12");
    expect(paneOfSession({ pid: 1 })).toBeNull();
    expect(sessionAlive(process.pid, live.procStart)).toBe(true);
    expect(sessionAlive(process.pid, "0")).toBe(false);
    expect(processStart(999_999_999)).toBeNull();
  });

  test("pane ids repeat across tmux servers: a session in %3 of one server is never the route into %3 of another", async () => {
    const config = join(dir, "claude-shared");
    mkdirSync(join(config, "sessions"), { recursive: true });
    const env = { CLAUDE_CONFIG_DIR: config, PATH: process.env.PATH! };
    const alice = await agentProcess(dir, env);
    const carol = await agentProcess(dir, env);
    await waitFor(`the start times of processes ${alice} and ${carol} in /proc`, () => processStart(alice) && processStart(carol));
    const entry = { pid: alice, procStart: processStart(alice), tmux: "agents:@1.%3", messagingSocketPath: "/alice.sock", status: "idle" };
    writeFileSync(join(config, "sessions", `${alice}.json`), JSON.stringify(entry));
    // carol holds %3 of another server, and registered no inbox: no route (her hooks bring her mail), never alice's.
    const found = await ADAPTERS.claude.find(carol, "%3", {});
    expect(found.route).toBeNull();
    expect(found.route === null && found.none.reason).toContain(
      `no Claude Code session registry entry is the process in pane %3 (pid ${carol}`,
    );
    expect(await ADAPTERS.claude.find(alice, "%3", {})).toMatchObject({ route: { socket: "/alice.sock", pid: alice } });
  });

  test("a frame is one JSON line of priority next; receipts come to a socket of this process beside the session's", async () => {
    expect(JSON.parse(frameLine("hi"))).toEqual({ type: "user", message: { role: "user", content: "hi" }, priority: "next" });
    expect(frameLine("hi", { from: "/r.sock", msgId: "u-1" })).toEndWith('"from":"uds:/r.sock","msg_id":"u-1"}\n');
    const socket = join(dir, "session.sock");
    const session = await inbox(socket, () => "held");
    const receipts: unknown[] = [];
    const listener = await ReceiptListener.open(socket, (receipt) => void receipts.push(receipt));
    try {
      expect(listener.path).toBe(join(dir, `${process.pid}.sock`));
      await sendFrame(socket, frameLine("hello", { from: listener.path, msgId: "m-1" }));
      await waitFor("the receipt of the frame", () => receipts.length > 0);
      expect(session.frames[0]).toMatchObject({ message: { content: "hello" }, msg_id: "m-1" });
      expect(receipts[0]).toMatchObject({ status: "held", orig_msg_id: "m-1" });
      await expect(sendFrame(join(dir, "nobody.sock"), "x\n")).rejects.toThrow();
    } finally {
      listener.close();
      session.server.close();
    }
  });

  test("the adapter finds the session in a pane from its own environment; without an inbox it says why; Gemini has none", async () => {
    const home = join(dir, "claude-home");
    const config = join(home, ".claude");
    mkdirSync(join(config, "sessions"), { recursive: true });
    const pid = await agentProcess(home, { HOME: home, PATH: process.env.PATH! });
    await waitFor(`the start time of process ${pid} in /proc`, () => processStart(pid));
    const entry = { pid, procStart: processStart(pid), tmux: "s:@1.%21", status: "busy", version: "2.1.332" };
    writeFileSync(join(config, "sessions", `${pid}.json`), JSON.stringify({ ...entry, messagingSocketPath: "/tmp/cc-socks/1.sock" }));
    expect(await ADAPTERS.claude.find(pid, "%21", {})).toMatchObject({
      route: { channel: "claude-inbox", pane: "%21", socket: "/tmp/cc-socks/1.sock", pid, status: "busy" },
    });
    writeFileSync(join(config, "sessions", `${pid}.json`), JSON.stringify(entry));
    const none = await ADAPTERS.claude.find(pid, "%21", {});
    expect(none.route).toBeNull();
    expect(none.route === null && none.none.reason).toContain("has no inbox");
    expect((await ADAPTERS.claude.find(pid, "%99", {})).route).toBeNull();
    expect(await ADAPTERS.gemini.find(pid, "%21", {})).toEqual({ route: null, none: { reason: GEMINI_IDLE, hooks: true } });
  });
});

describe("Codex CLI's control socket", () => {
  test("the client: upgrade, initialize, calls and errors; a request of the daemon's own is refused", async () => {
    const path = join(dir, "control-a.sock");
    const daemon = codexDaemon(path, { activeTurn: "turn-9", cwd: "/repo" });
    const client = await CodexControl.open(path);
    try {
      expect((await client.loadedThreads()).map((thread) => [thread.id, thread.ephemeral])).toEqual([
        ["t-1", false],
        ["t-side", true],
      ]);
      expect(await client.activeTurn("t-1")).toBe("turn-9");
      expect(await client.steer("t-1", "turn-9", "mail")).toEqual({ turnId: "turn-9" });
      expect(await client.queue("t-1", "mail")).toEqual({ queuedSubmission: { id: "q-1" } });
      const error = await client.request("nope", {}).catch((caught) => caught);
      expect(error).toBeInstanceOf(RpcError);
      expect((error as RpcError).code).toBe(-32601);
      expect(daemon.calls.find((call) => call.method === "initialize")?.params.capabilities.experimentalApi).toBe(true);
    } finally {
      client.close();
      daemon.server.stop(true);
    }
    await expect(CodexControl.open(join(dir, "no-daemon.sock"))).rejects.toThrow();
  });

  test("the adapter finds the thread whose cwd is the TUI's, passing over ephemeral ones; none or no daemon says why", async () => {
    const home = join(dir, "codex-home");
    mkdirSync(join(home, "app-server-control"), { recursive: true });
    const cwd = join(dir, "codex-work");
    mkdirSync(cwd, { recursive: true });
    const pid = await agentProcess(cwd, { CODEX_HOME: home, PATH: process.env.PATH! });
    await waitFor(`the start time of process ${pid} in /proc`, () => processStart(pid));
    expect((await ADAPTERS.codex.find(pid, "%5", {})).route).toBeNull();
    const daemon = codexDaemon(join(home, "app-server-control", "app-server-control.sock"), { activeTurn: null, cwd });
    try {
      expect(await ADAPTERS.codex.find(pid, "%5", {})).toMatchObject({
        route: { channel: "codex-control", threadId: "t-1", pane: "%5", pid },
      });
    } finally {
      daemon.server.stop(true);
    }
    const elsewhere = codexDaemon(join(home, "app-server-control", "app-server-control.sock"), { activeTurn: null, cwd: "/other" });
    try {
      const found = await ADAPTERS.codex.find(pid, "%5", {});
      expect(found.route === null && found.none.reason).toContain("has no thread loaded in");
    } finally {
      elsewhere.server.stop(true);
    }
  });
  test("a second Codex CLI of the same daemon in the directory (another tmux server, or none): no route, and said why", async () => {
    const { codex, home, work: cwd } = codexSetup("adapter");
    mkdirSync(join(home, "app-server-control"), { recursive: true });
    const env = { CODEX_HOME: home, PATH: process.env.PATH!, TMUX: "/tmp/a,1,0", TMUX_PANE: "%5" };
    const pid = await agentProcess(cwd, env, codex);
    const daemon = codexDaemon(join(home, "app-server-control", "app-server-control.sock"), { activeTurn: null, cwd });
    try {
      expect(await ADAPTERS.codex.find(pid, "%5", {})).toMatchObject({ route: { channel: "codex-control", threadId: "t-1" } });
      // Pane %5 of a second server, its thread not loaded yet: the one thread may be either's.
      await agentProcess(cwd, { ...env, TMUX: "/tmp/b,2,0" }, codex);
      const found = await ADAPTERS.codex.find(pid, "%5", {});
      expect(found.route).toBeNull();
      expect(found.route === null && found.none.reason).toContain(`2 Codex CLIs work in ${cwd} with the daemon of ${home}`);
      expect(found.route === null && found.none.reason).toContain("cannot be told");
    } finally {
      daemon.server.stop(true);
    }
  });
});

describe("delivering a frame along a route", () => {
  test("Codex: a running turn is steered, an idle thread queued, a steer that finds no turn queued; read at once", async () => {
    const { root, store } = fresh("codex-deliver");
    const path = join(dir, "control-b.sock");
    const state = { activeTurn: "turn-1" as string | null, steerFails: false, cwd: "/repo" };
    const daemon = codexDaemon(path, state);
    const route: Route = { channel: "codex-control", pane: "%2", control: path, threadId: "t-1", pid: process.pid };
    try {
      const deliver = async (body: string) => {
        const message = mail("bob", body);
        await store.append(message);
        return {
          message,
          delivered: await deliverAlong({ store, root, agent: "bob", route, messages: [message], budget: DEFAULT_BUDGET }),
        };
      };
      const steered = await deliver("one");
      expect(steered.delivered).toMatchObject({ channel: "codex-steer", carried: [{ id: steered.message.id, shown: "whole" }] });
      expect(daemon.calls.find((call) => call.method === "turn/steer")?.params.input[0].text).toContain(`ID: ${steered.message.id}`);
      state.steerFails = true;
      const fallback = await deliver("two");
      expect(fallback.delivered.channel).toBe("codex-queue");
      expect((await store.deliveries("bob")).get(fallback.message.id)!.map((event) => event.channel)).toEqual([
        "codex-steer",
        "codex-queue",
      ]);
      state.activeTurn = null;
      expect((await deliver("three")).delivered.channel).toBe("codex-queue");
      expect(await store.countUnread("bob")).toBe(0);
      // Nothing fresh, or everything announced already: nothing is sent.
      expect((await deliverAlong({ store, root, agent: "bob", route, messages: [], budget: DEFAULT_BUDGET })).channel).toBeNull();
      expect(
        (await deliverAlong({ store, root, agent: "bob", route, messages: [steered.message], budget: DEFAULT_BUDGET })).channel,
      ).toBeNull();
    } finally {
      daemon.server.stop(true);
    }
    const gone = mail("bob", "four");
    await store.append(gone);
    expect((await deliverAlong({ store, root, agent: "bob", route, messages: [gone], budget: DEFAULT_BUDGET })).channel).toBeNull();
    expect(await store.announced("bob")).toEqual(new Set());
  });

  test("a burst: one window's frames show five messages whole in all; a frame that could only list waits for the burst's end", async () => {
    const { root, store } = fresh("codex-burst");
    const path = join(dir, "control-burst.sock");
    const daemon = codexDaemon(path, { activeTurn: null, steerFails: false, cwd: "/repo" });
    const route: Route = { channel: "codex-control", pane: "%2", control: path, threadId: "t-1", pid: process.pid };
    const frames = () => daemon.calls.filter((call) => call.method === "thread/queue/add");
    const arrive = async (bodies: string[], created = new Date()) => {
      const messages = bodies.map((body) => createMessage("alice", "bob", body, created));
      for (const message of messages) await store.append(message);
      return deliverAlong({ store, root, agent: "bob", route, messages, budget: DEFAULT_BUDGET });
    };
    try {
      const first = await arrive(["m0", "m1", "m2"]);
      expect(first.carried.map((each) => each.shown)).toEqual(["whole", "whole", "whole"]);
      const second = await arrive(["m3", "m4", "m5", "m6"]);
      expect(second.carried.map((each) => each.shown)).toEqual(["whole", "whole", "listed", "listed"]);
      // The window's five are shown: more mail while the burst still comes is not framed yet.
      const held = await arrive(["m7", "m8"]);
      expect(held.channel).toBeNull();
      expect(held.due).toBeGreaterThan(Date.now());
      expect(frames().length).toBe(2);
      // Once no mail came for a while, a frame lists it: nothing more shown whole.
      const later = await arrive(["m9"], new Date(Date.now() - 5_000));
      expect(later.carried.map((each) => each.shown)).toEqual(["listed"]);
      expect(frames().length).toBe(3);
    } finally {
      daemon.server.stop(true);
    }
  });

  test("Claude Code: a frame that cannot be written gives its messages back (failed), so they may be announced again", async () => {
    const { root, store } = fresh("claude-fail");
    const message = mail("bob", "lost socket");
    await store.append(message);
    const route: Route = { channel: "claude-inbox", pane: "%3", socket: join(dir, "gone.sock"), pid: process.pid };
    const delivered = await deliverAlong({ store, root, agent: "bob", route, messages: [message], budget: DEFAULT_BUDGET });
    expect(delivered.channel).toBeNull();
    expect(delivered.detail).toContain("did not take the frame");
    expect((await store.deliveries("bob")).get(message.id)!.map((event) => event.event)).toEqual(["notified", "failed"]);
    expect(await store.announced("bob")).toEqual(new Set());
  });
});

describe("the mailman's native deliveries and Claude Code's receipts", () => {
  test("accepted: read once the grace passed, the route kept for send; held: recorded, then approved and read", async () => {
    const { root, store } = fresh("native");
    const socket = join(dir, "native-session.sock");
    let answer: string | null = null;
    const session = await inbox(socket, () => answer);
    const route: Route = { channel: "claude-inbox", pane: "%4", socket, pid: process.pid, procStart: processStart(process.pid)! };
    const reports: string[] = [];
    const native = new NativeDeliveries({
      store,
      root,
      budget: DEFAULT_BUDGET,
      log: () => {},
      report: (_, outcome) => void reports.push(outcome),
    });
    try {
      const first = mail("bob", "accepted");
      await store.append(first);
      expect((await native.deliver("bob", route, [first])).channel).toBe("claude-inbox");
      expect(session.frames[0].from).toStartWith("uds:");
      expect(lastFramed(root, "bob")).toBeGreaterThan(0);
      expect(await store.countUnread("bob")).toBe(1);
      expect(await native.settle(Date.now())).not.toBeNull();
      await native.settle(Date.now() + RECEIPT_GRACE_MS + 1);
      expect(await store.countUnread("bob")).toBe(0);
      expect(readRoutes(root).bob).toMatchObject({ holds: false, route: { socket } });

      answer = "held";
      const second = mail("bob", "held");
      await store.append(second);
      await native.deliver("bob", route, [second]);
      await waitFor("the second message held", async () => (await store.deliveries("bob")).get(second.id)?.at(-1)?.event === "held");
      expect(reports).toContain("held");
      expect(readRoutes(root).bob?.holds).toBe(true);
      await native.settle(Date.now() + RECEIPT_GRACE_MS + 1);
      expect(await store.countUnread("bob")).toBe(1);
      // Its user approves: Claude Code says delivered, on the mailman's socket.
      const listenerPath = join(dir, `${process.pid}.sock`);
      const approve = createConnection(listenerPath);
      const msgId = session.frames[1].msg_id;
      approve.on("connect", () => approve.end(`${JSON.stringify({ type: "control", status: "delivered", orig_msg_id: msgId })}\n`));
      await waitFor("bob's mail read once the user approved", async () => (await store.countUnread("bob")) === 0);

      answer = null;
      const third = mail("bob", "refused");
      await store.append(third);
      await native.deliver("bob", route, [third]);
      const refuse = createConnection(listenerPath);
      const refusedId = session.frames[2].msg_id;
      refuse.on("connect", () =>
        refuse.end(`${JSON.stringify({ type: "control", status: "expired", status_detail: "refused", orig_msg_id: refusedId })}\n`),
      );
      await waitFor("the third message refused", async () => (await store.deliveries("bob")).get(third.id)?.at(-1)?.event === "refused");
      expect(native.refusal(route)).toContain("refuses mail from other sessions");
      expect(readRoutes(root).bob).toBeUndefined();
      expect(await store.announced("bob")).toEqual(new Set());
    } finally {
      await native.close();
      session.server.close();
    }
  });

  test("send delivers at once along a verified route: read at once, paced, skipped for a route that holds", async () => {
    const { root, store } = fresh("at-once");
    const socket = join(dir, "at-once.sock");
    const session = await inbox(socket);
    const route: Route = { channel: "claude-inbox", pane: "%6", socket, pid: process.pid, procStart: processStart(process.pid)! };
    try {
      const first = mail("bob", "at once");
      await store.append(first);
      await deliverAtOnce(store, root, [first], { bob: { route, verified_at: "x", holds: false } }, {});
      expect(session.frames.length).toBe(1);
      expect(await store.countUnread("bob")).toBe(0);
      // Within the pace of the last frame: left to the mailman.
      const second = mail("bob", "too soon");
      await store.append(second);
      await deliverAtOnce(store, root, [second], { bob: { route, verified_at: "x", holds: false } }, {});
      expect(session.frames.length).toBe(1);
      await deliverAtOnce(store, root, [second], { bob: { route, verified_at: "x", holds: true } }, {});
      await deliverAtOnce(store, root, [second], { bob: { route: { ...route, procStart: "0" }, verified_at: "x", holds: false } }, {});
      expect(session.frames.length).toBe(1);
    } finally {
      session.server.close();
    }
  });
});

describe("the hooks: fresh mail only, within the budget", () => {
  const target = (store: FileStore, budget = DEFAULT_BUDGET) => ({
    store,
    root: store.root,
    agent: "bob",
    pane: "%1",
    confirm: () => {},
    budget,
  });

  test("the end-of-turn hook shows urgent first, lists what does not fit, and never shows what an arrival announced", async () => {
    const { store } = fresh("stop-hook");
    const [plain, urgent, third] = [mail("bob", "plain"), mail("bob", "urgent", { priority: "urgent" }), mail("bob", "third")];
    for (const message of [plain, urgent, third]) await store.append(message);
    await store.announce("bob", [{ id: third.id, event: "notified", at: "x", channel: "claude-inbox", shown: "whole" }]);
    let text = "";
    expect(await stopHookMail(target(store, { ...DEFAULT_BUDGET, messages: 1 }), (chunk) => void (text += chunk))).toBe(2);
    expect(text).toStartWith(`${HOOK_HEAD}\nFrom: alice\nID: ${urgent.id}\nPriority: urgent\n`);
    expect(text).toContain(`(1 more unread, not shown here: run agentmail receive to read each)\n- ${plain.id} from alice: plain\n`);
    expect(text).not.toContain(third.id);
    text = "";
    expect(await stopHookMail(target(store), (chunk) => void (text += chunk))).toBe(0);
    expect(text).toBe("");
    expect((await store.deliveries("bob")).get(urgent.id)!.at(-1)).toMatchObject({ channel: "stop-hook", shown: "whole" });
  });

  test("the post-tool hook: nothing without fresh mail; with it, one text, claimed, then the shown messages read", async () => {
    const { store } = fresh("tool-hook");
    let text = "";
    expect(await toolHookMail(target(store), (chunk) => void (text = chunk))).toBe(0);
    const message = mail("bob", "mid-turn");
    await store.append(message);
    expect(await toolHookMail(target(store), (chunk) => void (text = chunk))).toBe(1);
    expect(text).toBe(`${HOOK_HEAD}\nFrom: alice\nID: ${message.id}\n\n> mid-turn\n`);
    expect(await store.countUnread("bob")).toBe(0);
    const announced = mail("bob", "announced");
    await store.append(announced);
    await store.announce("bob", [{ id: announced.id, event: "held", at: "x" }]);
    expect(await toolHookMail(target(store), () => {})).toBe(0);
  });

  test("the post-tool hook shows fresh mail even while .announced still lists a message a plain receive has read", async () => {
    const { store } = fresh("tool-hook-stale");
    const framed = mail("bob", "framed, then received");
    await store.append(framed);
    await store.announce("bob", [{ id: framed.id, event: "notified", at: "x", channel: "claude-inbox", shown: "whole" }]);
    await store.markRead("bob", framed.id);
    const later = mail("bob", "later");
    await store.append(later);
    let text = "";
    expect(await toolHookMail(target(store), (chunk) => void (text = chunk))).toBe(1);
    expect(text).toContain(`ID: ${later.id}\n`);
  });

  const expired = (body: string) => mail("bob", body, { expires_at: new Date(Date.now() - 1_000).toISOString() });
  const notice = (message: Message) => `returned ${message.id} to alice: its time to live ran out at ${String(message.expires_at)}, unread`;
  /** What alice got back: the ids of the messages her bounces return. */
  const bouncedBack = async (store: FileStore) => (await store.unread("alice")).map((bounce) => bounce.bounce_of);

  test("both hooks return mail whose time to live ran out to its sender, never show it, and say so last, as receive does", async () => {
    for (const [name, hook] of [
      ["stop", stopHookMail],
      ["tool", toolHookMail],
    ] as const) {
      const { store } = fresh(`expired-${name}`);
      const [late, fresh2] = [expired("too late"), mail("bob", "in time")];
      for (const message of [late, fresh2]) await store.append(message);
      let text = "";
      expect(await hook(target(store), (chunk) => void (text += chunk))).toBe(1);
      expect(text).toStartWith(`${HOOK_HEAD}\nFrom: alice\nID: ${fresh2.id}\n`);
      expect(text).toEndWith(`\n${notice(late)}`);
      expect(text).not.toContain("too late");
      expect(await bouncedBack(store)).toEqual([late.id]);
      // Nothing else to show: the notice alone, which the end-of-turn hook hands over with exit 2 like mail.
      const alone = expired("alone and late");
      await store.append(alone);
      text = "";
      expect(await hook(target(store), (chunk) => void (text += chunk))).toBe(1);
      expect(text).toBe(notice(alone));
      expect(await store.countUnread("bob")).toBe(0);
    }
  });

  test("a flood of expired mail is named five at a time in a hook, the rest counted", async () => {
    const { store } = fresh("expired-flood");
    const late = Array.from({ length: 8 }, (_, index) => expired(`late ${index}`));
    for (const message of late) await store.append(message);
    let text = "";
    expect(await stopHookMail(target(store), (chunk) => void (text += chunk))).toBe(8);
    expect(text.split("\n")).toEqual([
      ...late.slice(0, 5).map(notice),
      "returned 3 more to their senders: their time to live ran out, unread",
    ]);
    expect((await bouncedBack(store)).sort()).toEqual(late.map((message) => message.id).sort());
  });
});

describe("hooks run in Codex's app-server daemon", () => {
  test("the thread's directory comes from the hook input; no daemon above a plain process", () => {
    expect(threadDirectory('{"session_id":"t","cwd":"/repo/x"}')).toBe("/repo/x");
    expect(threadDirectory('{"session_id":"t"}')).toBeNull();
    expect(threadDirectory("not json")).toBeNull();
    expect(codexDaemonAncestor()).toBeNull();
  });

  test("the TUI in the thread's directory gives the pane; the hook's next command finds it again; two TUIs give none", async () => {
    const { codex, home, work } = codexSetup("tui");
    const env = { HOME: home, PATH: process.env.PATH!, TMUX: "/tmp/t,1,0", TMUX_PANE: "%41", AGENTMAIL_NAME: "second" };
    await agentProcess(work, env, codex);
    const daemonEnv = { HOME: home, TMUX: "/tmp/t,1,0", TMUX_PANE: "%40", AGENTMAIL_NAME: "first", OTHER: "kept" };
    const shell = process.pid;
    expect(paneEnvironment(daemonEnv, JSON.stringify({ cwd: work }), shell)).toEqual({
      ...daemonEnv,
      TMUX_PANE: "%41",
      AGENTMAIL_NAME: "second",
    });
    expect(paneEnvironment(daemonEnv, "", shell)).toMatchObject({ TMUX_PANE: "%41" });
    await agentProcess(work, { ...env, TMUX_PANE: "%42" }, codex);
    expect(paneEnvironment(daemonEnv, JSON.stringify({ cwd: work }), shell)).toBeNull();
    expect(paneEnvironment(daemonEnv, JSON.stringify({ cwd: join(dir, "nobody") }), shell)).toBeNull();
  });

  test("a TUI outside tmux in the thread's directory counts too: the hook speaks for nobody rather than for the pane", async () => {
    const { codex, home, work } = codexSetup("outside");
    const daemonEnv = { HOME: home, TMUX: "/tmp/t,1,0", TMUX_PANE: "%40" };
    await agentProcess(work, { HOME: home, PATH: process.env.PATH!, TMUX: "/tmp/t,1,0", TMUX_PANE: "%41" }, codex);
    expect(paneEnvironment(daemonEnv, JSON.stringify({ cwd: work }), process.pid)).toMatchObject({ TMUX_PANE: "%41" });
    await agentProcess(work, { HOME: home, PATH: process.env.PATH! }, codex);
    expect(paneEnvironment(daemonEnv, JSON.stringify({ cwd: work }), process.pid)).toBeNull();
  });
});
