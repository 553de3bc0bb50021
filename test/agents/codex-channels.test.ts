/**
 * Codex CLI, interactive in a private tmux server against the mock model, with agentmail's hooks installed and
 * trusted (`hooks install codex --user --trust`) and the mailman running (no typing): mail reaches an idle TUI as a
 * queued turn and a busy one through `turn/steer`, after its running tool's output, through the app-server daemon's
 * control socket; nothing is typed. Two TUIs share one daemon (and so run their hooks in it): each TUI's hooks speak
 * for its own pane, and each gets its own mail. The daemon outlives tmux: it is stopped by its pid files. The
 * "protocol" tests check what agentmail relies on in Codex itself, apart from agentmail.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import type { Turn } from "../support/mock-model/server.ts";
import { ensureAgent } from "./install-agents.ts";
import { AGENT, carries, Interactive, SENDER, until } from "./interactive.ts";

setDefaultTimeout(180_000);

const SECOND = "agent2";
let lab: Interactive;
let codexHome: string;
let secondDir: string;

const isTitle = (body: unknown) => carries(body, "Generate a concise, single-line task title");
type Item = { type?: string; role?: string; content?: unknown; output?: unknown };
const lastInput = (body: { input?: Item[] }): Item | undefined => (body?.input ?? []).at(-1);

/** The model: the title side request gets a title; a tool's output gets "Done."; RUN-SLEEP-<s> runs `sleep <s>`. */
function route(turn: Turn) {
  if (isTitle(turn.body)) return { text: "Agent task" };
  const last = lastInput(turn.body);
  if (last?.type === "function_call_output") return { text: "Done." };
  const sleep = JSON.stringify(last ?? "").match(/RUN-SLEEP-(\d+)/);
  if (sleep) return { tool: "exec_command", input: { cmd: `sleep ${sleep[1]}`, yield_time_ms: 30_000 } };
  return { text: "Done." };
}

const conversation = () => lab.world.mock.conversation.filter((request) => !isTitle(request.body));
const requestCarrying = (text: string, after = 0) => conversation().find((request) => request.at >= after && carries(request.body, text));

interface SentRecord {
  id: string;
  to: string;
  read_flag: boolean;
  delivery?: { event: string; channel?: string };
}
const sent = async (id: string, to: string) =>
  (JSON.parse((await lab.world.agentmail(["sent", "--json"], SENDER)).stdout) as SentRecord[]).find(
    (record) => record.id === id && record.to === to,
  );

/** A JSON-RPC exchange over the control socket (WebSocket over unix), written here apart from agentmail's client. */
class RawControl {
  private buffer = Buffer.alloc(0);
  private readonly answers = new Map<number, { result?: unknown; error?: { code: number; message: string } }>();
  private constructor(private readonly socket: ReturnType<typeof connect>) {}

  static async open(path: string): Promise<RawControl> {
    const socket = connect(path);
    const control = new RawControl(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once("error", reject);
      socket.once("connect", () => {
        const key = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
        socket.write(
          `GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
        );
      });
      let head = Buffer.alloc(0);
      const onHead = (chunk: Buffer) => {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf("\r\n\r\n");
        if (end < 0) return;
        socket.off("data", onHead);
        if (!head.toString().startsWith("HTTP/1.1 101")) return reject(new Error(head.toString()));
        socket.on("data", (data: Buffer) => control.read(data));
        control.read(head.subarray(end + 4));
        resolve();
      };
      socket.on("data", onHead);
    });
    return control;
  }

  private read(data: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, data]);
    while (this.buffer.length >= 2) {
      let length = this.buffer[1]! & 0x7f;
      let offset = 2;
      if (length === 126) [length, offset] = [this.buffer.readUInt16BE(2), 4];
      else if (length === 127) [length, offset] = [Number(this.buffer.readBigUInt64BE(2)), 10];
      if (this.buffer.length < offset + length) return;
      const payload = this.buffer.subarray(offset, offset + length).toString();
      this.buffer = this.buffer.subarray(offset + length);
      try {
        const message = JSON.parse(payload);
        if (message.id !== undefined && (message.result !== undefined || message.error !== undefined))
          this.answers.set(message.id, message);
      } catch {
        // A ping or close frame.
      }
    }
  }

  private next = 1;
  async call(method: string, params: object): Promise<{ result?: any; error?: { code: number; message: string } }> {
    const id = this.next++;
    const payload = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    const mask = Buffer.from(crypto.getRandomValues(new Uint8Array(4)));
    const header =
      payload.length < 126
        ? Buffer.from([0x81, 0x80 | payload.length])
        : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
    this.socket.write(Buffer.concat([header, mask, Buffer.from(payload.map((byte, i) => byte ^ mask[i % 4]!))]));
    return until(`the answer to ${method}`, () => this.answers.get(id), 10_000);
  }

  close(): void {
    this.socket.destroy();
  }
}

beforeAll(async () => {
  const codex = ensureAgent("codex").binary;
  lab = new Interactive([SECOND]);
  const { world } = lab;
  world.mock.otherwise(route);
  codexHome = join(world.home, ".codex");
  lab.ownsCodexHome(codexHome);
  secondDir = join(world.repo.dir, "second");
  mkdirSync(secondDir, { recursive: true });
  world.writeHomeFile(
    ".codex/config.toml",
    [
      'model = "mock-model"',
      'model_provider = "mock"',
      'approval_policy = "never"',
      'sandbox_mode = "danger-full-access"',
      "",
      "[model_providers.mock]",
      'name = "mock"',
      `base_url = "${world.mock.url}/v1"`,
      'env_key = "OPENAI_API_KEY"',
      'wire_api = "responses"',
      "",
      `[projects."${world.repo.dir}"]`,
      'trust_level = "trusted"',
      "",
      `[projects."${secondDir}"]`,
      'trust_level = "trusted"',
      "",
    ].join("\n"),
  );
  const install = await world.agentmail(["hooks", "install", "codex", "--user", "--trust"], AGENT, { CODEX_HOME: codexHome });
  if (install.code !== 0) throw new Error(`hooks install failed: ${install.stderr}`);
  const env = { OPENAI_API_KEY: "dummy", CODEX_HOME: codexHome };
  lab.launch(AGENT, [codex], env);
  await until(
    "the first TUI's thread loaded in the daemon",
    () => loadedIn(world.repo.dir),
    90_000,
    () => lab.screen(AGENT),
  );
  lab.launch(SECOND, [codex], env, secondDir);
  await until(
    "the second TUI's thread loaded in the same daemon",
    () => loadedIn(secondDir),
    90_000,
    () => lab.screen(SECOND),
  );
  await lab.startMailman();
});

afterAll(async () => {
  await lab?.stop();
});

/** Whether the daemon has a loaded, non-ephemeral thread in `cwd`. */
async function loadedIn(cwd: string): Promise<boolean> {
  const socket = join(codexHome, "app-server-control", "app-server-control.sock");
  if (!existsSync(socket)) return false;
  let control: RawControl | null = null;
  try {
    control = await RawControl.open(socket);
    await control.call("initialize", { clientInfo: { name: "agentmail-tests", version: "1" }, capabilities: { experimentalApi: true } });
    const loaded = (await control.call("thread/loaded/list", {})).result?.data as string[];
    for (const threadId of loaded ?? []) {
      const thread = (await control.call("thread/read", { threadId })).result?.thread;
      if (thread?.cwd === cwd && thread.ephemeral === false && thread.status?.type === "idle") return true;
    }
    return false;
  } catch {
    return false;
  } finally {
    control?.close();
  }
}

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
    expect(await sent(id, AGENT)).toMatchObject({ read_flag: true, delivery: { event: "notified", channel: "codex-queue" } });
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
    expect(await sent(id, AGENT)).toMatchObject({ read_flag: true, delivery: { event: "notified", channel: "codex-steer" } });
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
    expect(await sent(id, SECOND)).toMatchObject({ delivery: { event: "notified", channel: "codex-queue" } });
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
