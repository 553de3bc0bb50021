/**
 * Errors as an MCP client sees them: malformed `arguments` get -32602 and one sentence (never -32603 and a
 * validation dump); arguments of the wrong type get the CLI's error document with one sentence; and every tool
 * error speaks MCP (call list-recipients, the message argument, the MCP server's environment), never CLI advice.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Invocation } from "../../../src/identity/invocation.ts";
import { serveStdio } from "../../../src/commands/mcp.ts";
import { setSink } from "../../../src/output/streams.ts";
import { connectInMemory } from "../../support/mcp.ts";
import { tempRepo } from "../../support/repo.ts";
import { outsideTmuxEnv, TmuxServer } from "../../support/tmux-server.ts";

let repo: ReturnType<typeof tempRepo>;
let tmux: TmuxServer;
let outsideRepo: string;
const clients: Client[] = [];

beforeAll(() => {
  repo = tempRepo();
  outsideRepo = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-norepo-")));
  tmux = TmuxServer.start(["alice", "bob"], repo.dir);
});
afterAll(async () => {
  for (const client of clients) await client.close();
  tmux.stop();
  repo.remove();
  rmSync(outsideRepo, { recursive: true, force: true });
});

const connect = (place: Invocation) => connectInMemory(clients, place);

async function errorOf(client: Client, name: string, args: Record<string, unknown>): Promise<{ code: string; message: string }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError).toBe(true);
  const [item] = result.content;
  if (item?.type !== "text") throw new Error("expected one text item");
  return (JSON.parse(item.text) as { error: { code: string; message: string } }).error;
}

/** Advice that only makes sense on a command line. */
const CLI_ADVICE =
  /'agentmail|agentmail (send|receive|recipients|status|onboard|cleanup|mailman|hooks|mcp)\b|run agentmail|\s-m\b|\bstdin\b|as an argument/;

/** Raw lines through the stdio loop, as a client writes them; returns the replies by id. */
async function rawExchange(calls: unknown[]): Promise<Map<unknown, Record<string, any>>> {
  const lines = [
    {
      jsonrpc: "2.0",
      id: "init",
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    ...calls,
  ].map((message) => JSON.stringify(message) + "\n");
  let stdout = "";
  setSink({ stdout: (text) => void (stdout += text), stderr: () => {} });
  try {
    await serveStdio(Readable.from(lines));
  } finally {
    setSink(null);
  }
  const replies = stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
  return new Map(replies.map((reply) => [reply.id, reply]));
}

describe("malformed arguments", () => {
  test("arguments that are not an object get -32602 and one sentence, and the server goes on", async () => {
    const replies = await rawExchange([
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "send", arguments: "hello" } },
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "receive", arguments: [1, 2] } },
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: 7 } },
      { jsonrpc: "2.0", id: 4, method: "tools/list" },
    ]);
    for (const id of [1, 2, 3]) {
      const { error } = replies.get(id)!;
      expect(error.code).toBe(-32602);
      expect(error.message).not.toContain("\n");
      expect(error.message.length).toBeLessThan(200);
    }
    expect(replies.get(1)!.error.message).toBe("Invalid params for tools/call: params.arguments must be an object, not a string");
    expect(replies.get(2)!.error.message).toBe("Invalid params for tools/call: params.arguments must be an object, not an array");
    expect(replies.get(3)!.error.message).toBe("Invalid params for tools/call: params.name must be a string, not a number");
    expect(replies.get(4)!.result.tools).toHaveLength(14);
  });

  test("arguments of the wrong type get the error document with one sentence naming the argument", async () => {
    const alice = await connect({ cwd: repo.dir, env: tmux.agent("alice").env });
    expect(await errorOf(alice, "send", { recipient: 5, message: ["x"] })).toEqual({
      code: "usage",
      message:
        "recipient must be a string or an array (who gets it: a window name (as the recipient list shows it), " +
        "name@project (another project's agent), several as a,b,c, @all, @GROUP, role:ROLE, or a bridge address: " +
        "feat124:NAME, roo:SLUG, dmail:NAME, claude-team:TEAM/MEMBER; or an array of these), not a number",
    });
    expect(await errorOf(alice, "send", { message: "hi" })).toEqual({
      code: "usage",
      message:
        "recipient is missing: give a string or an array (who gets it: a window name (as the recipient list shows it), " +
        "name@project (another project's agent), several as a,b,c, @all, @GROUP, role:ROLE, or a bridge address: " +
        "feat124:NAME, roo:SLUG, dmail:NAME, claude-team:TEAM/MEMBER; or an array of these)",
    });
    const element = await errorOf(alice, "send", { recipient: ["bob", 5], message: "hi" });
    expect(element.message).toStartWith("recipient.1 must be a string (who gets it");
    const empty = await errorOf(alice, "send", { recipient: [], message: "hi" });
    expect(empty.message).toStartWith("recipient must hold at least 1 item (who gets it");
    expect((await errorOf(alice, "wait", { timeout_seconds: "5" })).message).toStartWith("timeout_seconds must be a number");
    expect((await errorOf(alice, "wait", { timeout_seconds: 100_000 })).message).toStartWith("timeout_seconds must be at most 600");
    expect((await errorOf(alice, "wait", { timeout_seconds: -1 })).message).toStartWith("timeout_seconds must be at least 0");
    expect((await errorOf(alice, "status", { status: "busy" })).message).toBe(
      'status must be one of "ready", "work", "offline" (the availability to set; leave out to read the current one), not "busy"',
    );
  });

  test("an unknown tool names the tools there are", async () => {
    const alice = await connect({ cwd: repo.dir, env: tmux.agent("alice").env });
    expect(await errorOf(alice, "nope", {})).toEqual({
      code: "usage",
      message:
        'no tool named "nope"; the tools are send, sent, ack, receive, wait, status, list-recipients, reply, inbox, read, thread, claim, release, claims',
    });
  });
});

describe("every tool error speaks MCP", () => {
  test("outside tmux", async () => {
    const outside = await connect({ cwd: repo.dir, env: outsideTmuxEnv() });
    const calls = [
      ["send", { recipient: "bob", message: "hi" }],
      ["receive", {}],
      ["wait", { timeout_seconds: 0 }],
      ["status", {}],
      ["list-recipients", {}],
    ] as const;
    for (const [name, args] of calls) {
      const error = await errorOf(outside, name, args);
      expect(error.code).toBe("not_in_tmux");
      expect(error.message).not.toMatch(CLI_ADVICE);
      expect(error.message).toContain("MCP server");
    }
    const deadPane = await connect({ cwd: repo.dir, env: { ...tmux.agent("alice").env, TMUX_PANE: "%9999" } });
    expect((await errorOf(deadPane, "receive", {})).message).not.toMatch(CLI_ADVICE);
  });

  test("outside a repository", async () => {
    const client = await connect({ cwd: outsideRepo, env: tmux.agent("alice").env });
    for (const [name, args] of [
      ["send", { recipient: "bob", message: "hi" }],
      ["receive", {}],
      ["status", { status: "ready" }],
    ] as const) {
      const error = await errorOf(client, name, args);
      expect(error.code).toBe("no_store");
      expect(error.message).not.toMatch(CLI_ADVICE);
      expect(error.message).toContain("MCP server's environment");
    }
  });

  test("an unknown recipient points to list-recipients; an empty message to the message argument", async () => {
    const alice = await connect({ cwd: repo.dir, env: tmux.agent("alice").env });
    const unknown = await errorOf(alice, "send", { recipient: "bobb", message: "hi" });
    expect(unknown.message).toBe('no window named "bobb" in this tmux session; did you mean "bob"? call list-recipients to list them');
    const empty = await errorOf(alice, "send", { recipient: "bob", message: " " });
    expect(empty.message).not.toMatch(CLI_ADVICE);
    expect(empty.message).toContain("message argument");
    for (const error of [unknown, empty]) expect(error.message).not.toMatch(CLI_ADVICE);
  });
});
