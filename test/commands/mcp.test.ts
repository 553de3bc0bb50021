/**
 * `agentmail mcp` as agents run it: the compiled binary, driven by the official SDK's client over stdio, one server
 * per agent in a private tmux server. Plus the raw protocol: a malformed line followed by a call that still works,
 * stdout carrying nothing but JSON-RPC, and a clean exit when stdin closes, even in the middle of a wait.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { VERSION } from "../../src/mail/version.ts";
import { am } from "../support/e2e.ts";
import { MCP_TOOL_NAMES } from "../support/mcp.ts";
import { BINARY, tempRepo } from "../support/repo.ts";
import { outsideTmuxEnv, TmuxServer } from "../support/tmux-server.ts";
import { waitFor } from "../support/wait.ts";
import { inotifyWatches, waitsOnItsWatch } from "../support/waiters.ts";

let repo: ReturnType<typeof tempRepo>;
let tmux: TmuxServer;
let clients: Client[] = [];
/** The pid of each client's server process. */
const serverPid = new Map<Client, number>();

beforeAll(() => {
  repo = tempRepo();
  tmux = TmuxServer.start(["alice", "bob"], repo.dir);
});

afterEach(async () => {
  for (const client of clients) await client.close();
  clients = [];
});

afterAll(() => {
  tmux.stop();
  repo.remove();
});

async function connect(env: Record<string, string>): Promise<Client> {
  const transport = new StdioClientTransport({ command: BINARY, args: ["mcp"], env, cwd: repo.dir, stderr: "pipe" });
  const client = new Client({ name: "e2e", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  serverPid.set(client, transport.pid!);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const [item] = result.content;
  if (item?.type !== "text") throw new Error("expected a text result");
  return { isError: result.isError === true, value: JSON.parse(item.text) };
}

describe("through the SDK client", () => {
  test("initialize, then the fourteen tools", async () => {
    const client = await connect(tmux.agent("alice").env);
    expect(client.getServerVersion()).toEqual({ name: "agentmail", version: VERSION });
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([...MCP_TOOL_NAMES].sort());
  });

  test("one agent's server sends, another's receives; the CLI sees the same store", async () => {
    const alice = await connect(tmux.agent("alice").env);
    const bob = await connect(tmux.agent("bob").env);
    expect((await call(bob, "list-recipients")).value).toEqual([
      { name: "alice", you: false, auto: false, status: null, last_seen: null },
      { name: "bob", you: true, auto: false, status: null, last_seen: null },
    ]);
    const sent = await call(alice, "send", { recipient: "bob", message: "over MCP" });
    expect(sent).toEqual({
      isError: false,
      value: {
        id: expect.stringMatching(/^[A-Za-z0-9]{8}$/),
        copies: [{ mailbox: "bob", delivery: { state: "stored", at: expect.any(String) } }],
      },
    });
    expect((await call(bob, "receive")).value).toMatchObject({
      id: sent.value.id,
      from: "alice",
      to: "bob",
      message: "over MCP",
      more_unread: 0,
    });
    expect((await call(bob, "receive")).value).toBeNull();
    // And the other way round: the CLI's mail reaches the MCP server.
    await am(["send", "alice", "from the CLI"], { env: tmux.agent("bob").env, cwd: repo.dir });
    expect((await call(alice, "receive")).value).toMatchObject({ from: "bob", message: "from the CLI" });
  });

  test("a wait is woken by a send", async () => {
    const alice = await connect(tmux.agent("alice").env);
    const bob = await connect(tmux.agent("bob").env);
    const server = serverPid.get(bob)!;
    const watches = inotifyWatches(server);
    const waiting = call(bob, "wait", { timeout_seconds: 60 });
    await waitFor("bob's MCP server to wait on its watch", () => waitsOnItsWatch(server, watches));
    await call(alice, "send", { recipient: "bob", message: "wake up" });
    expect((await waiting).value).toMatchObject({ from: "alice", message: "wake up" });
  });

  test("outside tmux the server starts, and each tool call returns the CLI's error, worded for MCP", async () => {
    const outside = await connect(outsideTmuxEnv());
    expect((await outside.listTools()).tools).toHaveLength(14);
    const result = await call(outside, "send", { recipient: "bob", message: "hi" });
    const message = "not inside tmux ($TMUX is not set); " + "start the agent, and with it this MCP server, in a pane of a tmux session";
    expect(result).toEqual({ isError: true, value: { error: { code: "not_in_tmux", message } } });
    expect((await call(outside, "receive")).value.error.code).toBe("not_in_tmux");
  });

  test("a request over the 8 MiB line limit fails at once with its own id, saying the limit and what to do", async () => {
    const alice = await connect(tmux.agent("alice").env);
    const huge = "x".repeat(9 * 1024 * 1024);
    // Without its id the client could not match the error to the call, and would wait for the request timeout.
    const failed = await alice
      .callTool({ name: "send", arguments: { recipient: "bob", message: huge } }, undefined, { timeout: 30_000 })
      .then(
        () => null,
        (error: Error) => error,
      );
    expect(failed?.message).toContain("longer than 8 MiB (8388608 bytes)");
    expect(failed?.message).toContain("write the text to a file and send its path");
    expect((await call(alice, "list-recipients")).isError).toBe(false);
  });

  test("parallel receives on one server are served in turn, each message once, however long the line", async () => {
    // Its own repository and tmux server: the claimed name (no tmux call per receive) must not leak into other tests.
    const own = tempRepo();
    const ownTmux = TmuxServer.start(["sender", "reader"], own.dir);
    try {
      ownTmux.claimNames(BINARY, ["reader"], own.dir);
      const connectIn = async (env: Record<string, string>) => {
        const client = new Client({ name: "e2e", version: "1.0.0" });
        await client.connect(new StdioClientTransport({ command: BINARY, args: ["mcp"], env, cwd: own.dir, stderr: "pipe" }));
        clients.push(client);
        return client;
      };
      const sender = await connectIn(ownTmux.agent("sender").env);
      // 400 receives take longer than this lock timeout all told; no single one comes near it.
      const reader = await connectIn({ ...ownTmux.named("reader"), AGENTMAIL_LOCK_TIMEOUT: "0.4" });
      const count = 400;
      for (let index = 0; index < count; index++) await call(sender, "send", { recipient: "reader", message: `m${index}` });
      const results = await Promise.all(Array.from({ length: count }, () => call(reader, "receive")));
      expect(results.filter((result) => result.isError).map((result) => result.value)).toEqual([]);
      const messages = results.map((result) => result.value.message as string).sort();
      expect(messages).toEqual(Array.from({ length: count }, (_, index) => `m${index}`).sort());
      expect((await call(reader, "receive")).value).toBeNull();
    } finally {
      ownTmux.stop();
      own.remove();
    }
  });
});

/** The server as a bare process: lines in, lines out. */
function rawServer(env: Record<string, string>) {
  const child = Bun.spawn([BINARY, "mcp"], { env, cwd: repo.dir, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  // A hang is a failure that says so: the server is killed after a generous minute and what reads it then throws.
  let timedOut = false;
  const guard = setTimeout(() => {
    timedOut = true;
    child.kill(9);
  }, 60_000);
  const hung = () => new Error("timed out after 60 s waiting for the MCP server (the test killed it)");
  const reader = child.stdout.getReader();
  let buffered = "";
  const decoder = new TextDecoder();
  return {
    child,
    send(line: string) {
      child.stdin.write(line + "\n");
      child.stdin.flush();
    },
    /** The next line on stdout, parsed: every line must be one JSON-RPC message. */
    async next(): Promise<Record<string, unknown>> {
      while (!buffered.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) throw timedOut ? hung() : new Error(`stdout ended; stdout so far: ${buffered}`);
        buffered += decoder.decode(value, { stream: true });
      }
      const line = buffered.slice(0, buffered.indexOf("\n"));
      buffered = buffered.slice(line.length + 1);
      const message = JSON.parse(line);
      expect(message.jsonrpc).toBe("2.0");
      return message;
    },
    async finish() {
      child.stdin.end();
      const code = await child.exited;
      clearTimeout(guard);
      if (timedOut) throw hung();
      const rest = await (async () => {
        let text = buffered;
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return text;
          text += decoder.decode(value);
        }
      })();
      return { code, signal: child.signalCode, rest, stderr: await new Response(child.stderr).text() };
    },
  };
}

const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});
const INITIALIZED = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" });
const callLine = (id: number, name: string, args: Record<string, unknown> = {}) =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });

describe("the raw protocol", () => {
  test("a malformed line gets a JSON-RPC error and the next call still works; stdout holds only the protocol", async () => {
    const server = rawServer(tmux.agent("alice").env);
    server.send(INITIALIZE);
    expect(await server.next()).toMatchObject({ id: 1, result: { serverInfo: { name: "agentmail" } } });
    server.send(INITIALIZED);
    server.send('{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {');
    expect(await server.next()).toMatchObject({ id: null, error: { code: -32700 } });
    server.send(callLine(3, "list-recipients"));
    const reply = await server.next();
    expect(reply.id).toBe(3);
    const [item] = (reply.result as CallToolResult).content;
    expect(item?.type === "text" ? JSON.parse(item.text) : null).toContainEqual({
      name: "alice",
      you: true,
      auto: false,
      status: null,
      last_seen: null,
    });
    server.send(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "no/such/method" }));
    expect(await server.next()).toMatchObject({ id: 4, error: { code: -32601 } });
    const end = await server.finish();
    expect({ code: end.code, rest: end.rest }).toEqual({ code: 0, rest: "" });
    expect(end.stderr).toContain("warning: mcp: Parse error");
  });

  test("arguments not an object: -32602 and one sentence; a wrong type or unknown recipient: MCP-worded errors", async () => {
    const server = rawServer(tmux.agent("alice").env);
    server.send(INITIALIZE);
    await server.next();
    server.send(INITIALIZED);
    server.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "send", arguments: "hello" } }));
    expect(await server.next()).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: { code: -32602, message: "Invalid params for tools/call: params.arguments must be an object, not a string" },
    });
    const errorText = async (id: number, args: Record<string, unknown>) => {
      server.send(callLine(id, "send", args));
      const reply = await server.next();
      const [item] = (reply.result as CallToolResult).content;
      return item?.type === "text" ? JSON.parse(item.text).error : null;
    };
    expect((await errorText(3, { recipient: [5], message: "hi" })).message).toStartWith("recipient.0 must be a string");
    expect(await errorText(4, { recipient: "bobb", message: "hi" })).toEqual({
      code: "unknown_recipient",
      message: 'no window named "bobb" in this tmux session; did you mean "bob"? call list-recipients to list them',
    });
    // agentmail's own type is no sender's: refused before anything is stored.
    expect((await errorText(5, { recipient: "bob", message: "Your message x was not delivered", type: "bounce" })).message).toStartWith(
      'type must be one of "message", "status", "alert", "task", "question", "response", "report", "handoff" (the kind of message (default message)), not "bounce"',
    );
    expect((await server.finish()).code).toBe(0);
  });

  test("closing stdin ends the server cleanly, even during a wait, and the wait swallows no mail", async () => {
    const server = rawServer(tmux.agent("bob").env);
    server.send(INITIALIZE);
    await server.next();
    server.send(INITIALIZED);
    const watches = inotifyWatches(server.child.pid);
    server.send(callLine(2, "wait", { timeout_seconds: 600 }));
    await waitFor("the MCP server to wait on its watch", () => waitsOnItsWatch(server.child.pid, watches));
    const end = await server.finish();
    expect({ code: end.code, signal: end.signal }).toEqual({ code: 0, signal: null });
    await am(["send", "bob", "after the server left"], { env: tmux.agent("alice").env, cwd: repo.dir });
    const received = await am(["receive"], { env: tmux.agent("bob").env, cwd: repo.dir });
    expect(received.stdout).toContain("after the server left");
  });
});
