/**
 * `agentmail mcp` in process: the command's stdio loop on a finite input (what a client writes, then EOF), and
 * progress heartbeats during a wait, through the SDK's client on an in-memory transport.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { serveStdio } from "../../../src/commands/mcp.ts";
import { main } from "../../../src/commands/index.ts";
import { unifiedDiff } from "../../../src/hooks/diff.ts";
import { createServer } from "../../../src/mcp/server.ts";
import { setSink } from "../../../src/output/streams.ts";
import { MCP_TOOL_NAMES } from "../../support/mcp.ts";
import { tempRepo } from "../../support/repo.ts";
import { TmuxServer } from "../../support/tmux-server.ts";

let repo: ReturnType<typeof tempRepo>;
let tmux: TmuxServer;

beforeAll(() => {
  repo = tempRepo();
  tmux = TmuxServer.start(["alice"], repo.dir);
});
afterAll(() => {
  tmux.stop();
  repo.remove();
});

describe("agentmail mcp on stdio", () => {
  test("answers what arrives and ends with its input; console.log is kept off stdout and restored after", async () => {
    const lines = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "1" } },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
    ]
      .map((message) => JSON.stringify(message) + "\n")
      .concat("not json\n");
    let stdout = "";
    const consoleLog = console.log;
    setSink({ stdout: (text) => void (stdout += text), stderr: () => {} });
    try {
      await serveStdio(Readable.from(lines));
    } finally {
      setSink(null);
    }
    expect(console.log).toBe(consoleLog);
    const replies = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    const byId = new Map(replies.map((reply) => [reply.id, reply]));
    expect([...byId.keys()].sort()).toEqual([1, 2, null]);
    expect(byId.get(null).error.code).toBe(-32700);
    expect(
      byId
        .get(2)
        .result.tools.map((tool: { name: string }) => tool.name)
        .sort(),
    ).toEqual([...MCP_TOOL_NAMES].sort());
  });

  test("what a library prints with console.log goes to stderr, never into the protocol", async () => {
    let stdout = "";
    let stderr = "";
    const input = new Readable({
      read() {
        console.log("chatty library");
        this.push(null);
      },
    });
    setSink({ stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) });
    try {
      await serveStdio(input);
    } finally {
      setSink(null);
    }
    expect(stdout).toBe("");
    expect(stderr).toBe("chatty library\n");
  });

  test("the mcp command serves the process's stdin", async () => {
    const stdin = Object.getOwnPropertyDescriptor(process, "stdin");
    Object.defineProperty(process, "stdin", { value: Readable.from([]), configurable: true });
    try {
      expect(await main(["mcp"])).toBe(0);
    } finally {
      Object.defineProperty(process, "stdin", stdin!);
    }
  });

  test("a wait sends progress heartbeats to a client that asked for them", async () => {
    const alice = tmux.agent("alice");
    const server = createServer(() => ({ cwd: repo.dir, env: alice.env }), 20);
    mkdirSync(repo.mailDir, { recursive: true, mode: 0o700 });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "test", version: "1" });
    await client.connect(clientSide);
    const beats: number[] = [];
    const result = await client.callTool({ name: "wait", arguments: { timeout_seconds: 0.3 } }, undefined, {
      onprogress: (progress) => void beats.push(progress.progress),
    });
    expect(JSON.parse((result.content as { text: string }[])[0]!.text)).toBeNull();
    expect(beats.length).toBeGreaterThan(0);
    writeFileSync(join(repo.mailDir, "alice.jsonl"), "garbage\n", { mode: 0o600 });
    const received = await client.callTool({ name: "receive", arguments: {} });
    expect(JSON.parse((received.content as { text: string }[])[0]!.text)).toBeNull();
    await client.close();
  });
});

describe("diffs of large settings files", () => {
  test("beyond the matching budget the changed middle is one replaced block", () => {
    const before = Array.from({ length: 2100 }, (_, i) => `a${i}`).join("\n") + "\n";
    const after = Array.from({ length: 2100 }, (_, i) => `b${i}`).join("\n") + "\n";
    const diff = unifiedDiff("settings.json", before, after);
    expect(diff.split("\n").filter((line) => line.startsWith("-a")).length).toBe(2100);
    expect(diff.split("\n").filter((line) => line.startsWith("+b")).length).toBe(2100);
  });
});
