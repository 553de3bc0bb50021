/**
 * The MCP server in process (coverage counts it): the SDK's client talks to createServer() over an in-memory
 * transport, each client playing one agent of a private tmux server, exactly as `agentmail mcp` would in its pane.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { joinRole, leaveRole } from "../../../src/actions/roles.ts";
import type { Invocation } from "../../../src/identity/invocation.ts";
import { MAX_MESSAGE_BYTES } from "../../../src/mail/message.ts";
import { serve } from "../../../src/mcp/server.ts";
import { z } from "zod";
import { CLAIM_ARGUMENTS } from "../../../src/actions/claims.ts";
import { FOLLOW_ARGUMENTS } from "../../../src/actions/follow.ts";
import { VIEW_ARGUMENTS } from "../../../src/actions/mailbox-view.ts";
import { RECEIVE_ARGUMENTS } from "../../../src/actions/receive.ts";
import { REPLY_ARGUMENTS } from "../../../src/actions/reply.ts";
import { SEND_ARGUMENTS } from "../../../src/actions/send.ts";
import { STATUS_ARGUMENTS } from "../../../src/actions/status.ts";
import { RECIPIENTS_ARGUMENTS } from "../../../src/identity/recipients.ts";
import { FIELD_ARGUMENTS, FILTER_ARGUMENTS } from "../../../src/mail/fields.ts";
import { defineTool, TOOLS } from "../../../src/mcp/tools.ts";
import { connectInMemory, MCP_TOOL_NAMES } from "../../support/mcp.ts";
import { runInProcess } from "../../support/in-process.ts";
import { tempRepo } from "../../support/repo.ts";
import { watchWaits } from "../../support/waiters.ts";
import { waitFor } from "../../support/workflow.ts";
import { outsideTmuxEnv, TmuxServer } from "../../support/tmux-server.ts";

let repo: ReturnType<typeof tempRepo>;
let tmux: TmuxServer;
const clients: Client[] = [];

beforeAll(() => {
  repo = tempRepo();
  tmux = TmuxServer.start(["alice", "bob", "carol"], repo.dir);
});

afterAll(async () => {
  for (const client of clients) await client.close();
  tmux.stop();
  repo.remove();
});

const connect = (place: Invocation, heartbeatMs?: number) => connectInMemory(clients, place, heartbeatMs);

const agent = (name: string) => connect({ cwd: repo.dir, env: tmux.agent(name).env });

function json(result: unknown): unknown {
  const { content } = result as CallToolResult;
  expect(content).toHaveLength(1);
  const [item] = content;
  if (item?.type !== "text") throw new Error("expected one text item");
  return JSON.parse(item.text);
}

const callTool = (client: Client, name: string, args: Record<string, unknown>) => call(client, name, args);

async function call(client: Client, name: string, args: Record<string, unknown> = {}, signal?: AbortSignal) {
  const result = (await client.callTool({ name, arguments: args }, undefined, signal ? { signal } : undefined)) as CallToolResult;
  return { isError: result.isError === true, value: json(result) };
}

describe("tool list", () => {
  test("fourteen tools, each with a one-sentence description for the model and an object schema", async () => {
    const { tools } = await (await agent("alice")).listTools();
    expect(tools.map((tool) => tool.name)).toEqual(MCP_TOOL_NAMES);
    for (const tool of tools) {
      expect(tool.description!.length).toBeGreaterThan(60);
      // One sentence: a single full stop, at the end (tool lists cost every agent context on every turn).
      expect(tool.description!.trimEnd().endsWith(".")).toBe(true);
      expect(tool.description!.split(/[.!?](\s|$)/).filter((part) => part.trim() !== "").length).toBe(1);
      expect(tool.inputSchema.type).toBe("object");
    }
    const send = tools.find((tool) => tool.name === "send")!;
    expect(send.inputSchema.required).toEqual(["recipient", "message"]);
    expect(tools.find((tool) => tool.name === "status")!.inputSchema.properties).toMatchObject({
      status: { enum: ["ready", "work", "offline"] },
    });
    expect(TOOLS.map((tool) => tool.name)).toEqual(tools.map((tool) => tool.name));
  });

  test("an argument both interfaces take is described once: --help and the tool's schema say the same", async () => {
    const { tools } = await (await agent("alice")).listTools();
    const toolArgument = (tool: string, name: string) =>
      (tools.find((each) => each.name === tool)!.inputSchema.properties![name] as { description: string }).description;
    const cliArgument = async (command: string, name: string) => {
      const help = JSON.parse((await runInProcess([command, "--help", "--json"])).stdout) as {
        arguments: { name: string; description: string }[];
        options: { name: string; description: string }[];
      };
      return [...help.arguments, ...help.options].find((each) => each.name === name)!.description;
    };
    // The send's recipient names every form at both: another project's agent and the bridges alike.
    for (const description of [await cliArgument("send", "recipient"), toolArgument("send", "recipient")]) {
      expect(description).toContain("name@project (another project's agent)");
      expect(description).toContain("claude-team:TEAM/MEMBER");
    }
    // [tool, its argument, command, its argument as --help names it, what both say]: each interface adds only how the
    // argument is given after it (an array, seconds, a duration's forms, the values it takes, a default, stdin).
    const pairs = [
      ["send", "recipient", "send", "recipient", SEND_ARGUMENTS.recipient],
      ["send", "message", "send", "message", SEND_ARGUMENTS.message],
      ["send", "subject", "send", "--subject", FIELD_ARGUMENTS.subject],
      ["send", "type", "send", "--type", FIELD_ARGUMENTS.type],
      ["send", "priority", "send", "--priority", FIELD_ARGUMENTS.priority],
      ["send", "tags", "send", "--tag", FIELD_ARGUMENTS.tag],
      ["send", "needs_response", "send", "--needs-response", FIELD_ARGUMENTS.needsResponse],
      ["send", "ttl_seconds", "send", "--ttl", SEND_ARGUMENTS.ttl],
      ["send", "wait_for", "send", "--wait-for", SEND_ARGUMENTS.waitFor],
      ["send", "timeout_seconds", "send", "--timeout", SEND_ARGUMENTS.timeout],
      ["reply", "id", "reply", "id", REPLY_ARGUMENTS.id],
      ["reply", "message", "reply", "message", REPLY_ARGUMENTS.message],
      ["reply", "subject", "reply", "--subject", FIELD_ARGUMENTS.subject],
      ["inbox", "all", "inbox", "--all", VIEW_ARGUMENTS.all],
      ["inbox", "archived", "inbox", "--archived", VIEW_ARGUMENTS.archived],
      ["inbox", "from", "inbox", "--from", FILTER_ARGUMENTS.from],
      ["inbox", "type", "inbox", "--type", FILTER_ARGUMENTS.type],
      ["inbox", "priority", "inbox", "--priority", FILTER_ARGUMENTS.priority],
      ["inbox", "tag", "inbox", "--tag", FILTER_ARGUMENTS.tag],
      ["inbox", "thread", "inbox", "--thread", FILTER_ARGUMENTS.thread],
      ["read", "id", "read", "id", VIEW_ARGUMENTS.id],
      ["thread", "id", "thread", "id", VIEW_ARGUMENTS.threadId],
      ["sent", "unread", "sent", "--unread", FOLLOW_ARGUMENTS.unread],
      ["sent", "undelivered", "sent", "--undelivered", FOLLOW_ARGUMENTS.undelivered],
      ["ack", "ids", "ack", "id...", FOLLOW_ARGUMENTS.ids],
      ["wait", "timeout_seconds", "receive", "--wait", RECEIVE_ARGUMENTS.wait],
      ["status", "status", "status", "ready|work|offline", STATUS_ARGUMENTS.status],
      ["list-recipients", "all", "recipients", "--all", RECIPIENTS_ARGUMENTS.all],
      ["claim", "paths", "claim", "path|glob...", CLAIM_ARGUMENTS.paths],
      ["claim", "shared", "claim", "--shared", CLAIM_ARGUMENTS.shared],
      ["claim", "reason", "claim", "--reason", CLAIM_ARGUMENTS.reason],
      ["claim", "ttl_seconds", "claim", "--ttl", CLAIM_ARGUMENTS.ttl],
      ["claim", "wait_seconds", "claim", "--wait", CLAIM_ARGUMENTS.wait],
      ["claim", "renew", "claim", "--renew", CLAIM_ARGUMENTS.renew],
      ["release", "paths", "release", "path|glob...", CLAIM_ARGUMENTS.released],
      ["claims", "mine", "claims", "--mine", CLAIM_ARGUMENTS.mine],
    ] as const;
    const differing: string[] = [];
    for (const [tool, argument, command, name, said] of pairs) {
      const described: [string, string][] = [
        [`the ${tool} tool's ${argument}`, toolArgument(tool, argument)],
        [`${command} ${name}`, await cliArgument(command, name)],
      ];
      for (const [where, description] of described) {
        if (!description.startsWith(said)) differing.push(`${where}: "${description}" does not start "${said}"`);
      }
    }
    expect(differing).toEqual([]);
  });

  test("a tool's run takes its arguments as its schema types them", async () => {
    const echo = defineTool({
      name: "echo",
      title: "Echo",
      description: "Returns what it was given.",
      inputSchema: { count: z.number().optional(), words: z.array(z.string()) },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      async run(args) {
        const count: number | undefined = args.count;
        const words: string[] = args.words;
        // @ts-expect-error: no argument of that name is in the schema
        void args.cuont;
        return { count, words };
      },
    });
    expect(await echo.run({ words: ["a"] }, {} as Parameters<typeof echo.run>[1])).toEqual({ count: undefined, words: ["a"] });
  });

  test("the server introduces itself and how to use it", async () => {
    const client = await agent("alice");
    expect(client.getServerVersion()).toMatchObject({ name: "agentmail" });
    expect(client.getInstructions()).toContain("list-recipients");
  });
});

describe("mail through the tools", () => {
  test("send from one agent, receive from another: the CLI's JSON documents, and null when nothing is left", async () => {
    const alice = await agent("alice");
    const bob = await agent("bob");
    const sent = await call(alice, "send", { recipient: "bob", message: "PR #12 is ready" });
    expect(sent.isError).toBe(false);
    expect(sent.value).toEqual({
      id: expect.stringMatching(/^[A-Za-z0-9]{8}$/),
      copies: [{ mailbox: "bob", delivery: { state: "stored", at: expect.any(String) } }],
    });
    const received = await call(bob, "receive");
    expect(received.value).toMatchObject({
      id: (sent.value as { id: string }).id,
      from: "alice",
      to: "bob",
      message: "PR #12 is ready",
      read_flag: true,
    });
    expect((await call(bob, "receive")).value).toBeNull();
  });

  test("receive and wait say in more_unread how many messages are still unread after the one returned", async () => {
    const alice = await agent("alice");
    const bob = await agent("bob");
    for (const message of ["one", "two", "three"]) await call(alice, "send", { recipient: "bob", message });
    expect((await call(bob, "receive")).value).toMatchObject({ message: "one", more_unread: 2 });
    expect((await call(bob, "wait", { timeout_seconds: 0 })).value).toMatchObject({ message: "two", more_unread: 1 });
    expect((await call(bob, "receive")).value).toMatchObject({ message: "three", more_unread: 0 });
    expect((await call(bob, "receive")).value).toBeNull();
  });

  test("mail whose time to live ran out goes back to its sender: the result says so after its document, as the CLI's stderr does", async () => {
    const alice = await agent("alice");
    const bob = await agent("bob");
    const send = async (message: string, ttl?: number) =>
      ((await call(alice, "send", { recipient: "bob", message, ...(ttl ? { ttl_seconds: ttl } : {}) })).value as { id: string }).id;
    const receive = async (tool: "receive" | "wait") =>
      ((await bob.callTool({ name: tool, arguments: tool === "wait" ? { timeout_seconds: 0 } : {} })) as CallToolResult).content;
    const notice = (id: string) =>
      expect.stringMatching(new RegExp(`^returned ${id} to alice: its time to live ran out at \\S+Z, unread$`));
    const late = await send("too late", 1);
    const sentAt = Date.now();
    const inTime = await send("in time");
    await waitFor("the time to live to run out", () => Date.now() > sentAt + 1_050);
    const [document, said, ...rest] = await receive("receive");
    expect(JSON.parse((document as { text: string }).text)).toMatchObject({ id: inTime, message: "in time", more_unread: 0 });
    expect(said).toEqual({ type: "text", text: notice(late) });
    expect(rest).toEqual([]);
    // Nothing left to show: the document is null, and the notice still follows it.
    const alone = await send("alone and late", 1);
    const aloneAt = Date.now();
    await waitFor("the time to live to run out", () => Date.now() > aloneAt + 1_050);
    expect(await receive("wait")).toEqual([
      { type: "text", text: "null" },
      { type: "text", text: notice(alone) },
    ]);
    const bounces = [(await call(alice, "receive")).value, (await call(alice, "receive")).value] as { bounce_of: string }[];
    expect(bounces.map((bounce) => bounce.bounce_of).sort()).toEqual([late, alone].sort());
  });

  test("more_unread counts the mail of the agent's roles too, which its next receive takes", async () => {
    const alice = await agent("alice");
    const bob = await agent("bob");
    const place = { cwd: repo.dir, env: tmux.agent("bob").env };
    await joinRole(place, "triage");
    try {
      await call(alice, "send", { recipient: "bob", message: "own" });
      await call(alice, "send", { recipient: "role:triage", message: "for the role" });
      expect((await call(bob, "receive")).value).toMatchObject({ message: "own", more_unread: 1 });
      expect((await call(bob, "receive")).value).toMatchObject({ message: "for the role", more_unread: 0 });
    } finally {
      // The other tests list the roles: none is left behind, whatever happened here.
      await leaveRole(place, "triage");
      while ((await call(bob, "receive")).value !== null);
    }
  });

  test("wait returns a message sent while it waits, and null when the time runs out", async () => {
    const alice = await agent("alice");
    const carol = await agent("carol");
    const waits = watchWaits();
    const waiting = call(carol, "wait", { timeout_seconds: 30 });
    await waitFor("carol's wait to wait on its watch", () => waits.begun > 0).finally(() => waits.restore());
    await call(alice, "send", { recipient: "carol", message: "wake up" });
    expect((await waiting).value).toMatchObject({ from: "alice", message: "wake up" });
    expect((await call(carol, "wait", { timeout_seconds: 0 })).value).toBeNull();
  });

  test("a long wait tells a client that asked for progress that it is still alive", async () => {
    const alice = await agent("alice");
    const carol = await connect({ cwd: repo.dir, env: tmux.agent("carol").env }, 20);
    const progress: unknown[] = [];
    const waiting = carol.callTool({ name: "wait", arguments: { timeout_seconds: 30 } }, undefined, {
      onprogress: (update) => progress.push(update),
    });
    await waitFor("two progress notifications of the wait", () => progress.length >= 2, 30_000, 10);
    await call(alice, "send", { recipient: "carol", message: "done at last" });
    expect(json(await waiting)).toMatchObject({ message: "done at last" });
    expect(progress[0]).toMatchObject({ progress: 1, message: "still waiting for mail" });
  });

  test("a cancelled wait returns nothing and leaves later mail unread", async () => {
    const alice = await agent("alice");
    const carol = await agent("carol");
    const cancel = new AbortController();
    const waits = watchWaits();
    const waiting = call(carol, "wait", { timeout_seconds: 30 }, cancel.signal);
    await waitFor("carol's wait to wait on its watch", () => waits.begun > 0).finally(() => waits.restore());
    cancel.abort();
    await expect(waiting).rejects.toThrow();
    await call(alice, "send", { recipient: "carol", message: "after the cancel" });
    expect((await call(carol, "receive")).value).toMatchObject({ message: "after the cancel" });
  });

  test("status sets and reads the availability; list-recipients marks the caller", async () => {
    const bob = await agent("bob");
    expect((await call(bob, "status", { status: "work" })).value).toMatchObject({ name: "bob", status: "work" });
    expect((await call(bob, "status")).value).toMatchObject({ name: "bob", status: "work", since: expect.any(String) });
    expect((await call(bob, "list-recipients")).value).toEqual([
      { name: "alice", you: false, auto: false, status: null, last_seen: null },
      { name: "bob", you: true, auto: false, status: "work", last_seen: expect.any(String) },
      { name: "carol", you: false, auto: false, status: null, last_seen: null },
    ]);
  });

  test("send takes every address form and arrays of them; list-recipients shows names tmux chose, groups and roles", async () => {
    const shell = "bash --norc --noprofile -i";
    const line = tmux.run(["new-window", "-d", "-P", "-F", "#{window_id} #{pane_id}", "-t", `${tmux.session}:`, "-c", repo.dir, shell]);
    const [windowId] = line.trim().split(" ") as [string];
    try {
      const alice = await agent("alice");
      const autoName = tmux.run(["display-message", "-p", "-t", windowId, "#{window_name}"]).trim();
      const inPane = (name: string) => ({ env: { TMUX: tmux.agent(name).env.TMUX, TMUX_PANE: tmux.agent(name).paneId }, cwd: repo.dir });
      await runInProcess(["group", "add", "pair", "bob", "carol"], inPane("alice"));
      await runInProcess(["join", "triage"], inPane("carol"));
      const listed = (await call(alice, "list-recipients")).value as unknown[];
      expect(listed).toContainEqual({ name: autoName, you: false, auto: true, status: null, last_seen: null });
      expect(listed.slice(-2)).toEqual([
        { name: "@pair", members: ["bob", "carol"] },
        { name: "role:triage", members: ["carol"] },
      ]);
      const bob = await agent("bob");
      const carol = await agent("carol");
      const idOf = async (client: Client, args: Record<string, unknown>) => ((await call(client, "send", args)).value as { id: string }).id;
      const many = await idOf(alice, { recipient: ["bob", "carol,alice"], message: "to both" });
      expect((await call(bob, "receive")).value).toMatchObject({ id: many, to: "bob" });
      expect((await call(carol, "receive")).value).toMatchObject({ id: many, to: "carol" });
      const group = await idOf(alice, { recipient: "@pair", message: "pair" });
      expect((await call(bob, "receive")).value).toMatchObject({ id: group });
      expect((await call(carol, "receive")).value).toMatchObject({ id: group });
      const role = await idOf(bob, { recipient: "role:triage", message: "take it" });
      expect((await call(carol, "receive")).value).toMatchObject({ id: role, to: "role:triage" });
      const warned = await call(alice, "send", { recipient: autoName, message: "shell" });
      expect(warned.value).toMatchObject({ id: expect.any(String), warnings: [expect.stringContaining("is a name tmux chose")] });
      const noGroup = await call(alice, "send", { recipient: "@piar", message: "x" });
      expect(noGroup.value).toEqual({
        error: {
          code: "unknown_recipient",
          message: 'no group named "piar"; did you mean "@pair"? call list-recipients to list the groups',
        },
      });
      const lonely = await call(alice, "send", { recipient: "role:nobody", message: "x" });
      expect(lonely).toMatchObject({ isError: true, value: { error: { code: "unknown_recipient" } } });
    } finally {
      tmux.run(["kill-window", "-t", windowId]);
    }
  });

  test("status of an agent that never set one is null", async () => {
    expect((await call(await agent("carol"), "status")).value).toEqual({ name: "carol", status: null });
  });
});

describe("errors come back as isError results with the CLI's code and message", () => {
  test("an unknown recipient names the closest windows", async () => {
    const result = await call(await agent("alice"), "send", { recipient: "bobb", message: "hi" });
    expect(result.isError).toBe(true);
    expect(result.value).toEqual({ error: { code: "unknown_recipient", message: expect.stringContaining('did you mean "bob"') } });
  });

  test("the message size limit is the CLI's", async () => {
    const result = await call(await agent("alice"), "send", { recipient: "bob", message: "x".repeat(MAX_MESSAGE_BYTES + 1) });
    expect(result.value).toMatchObject({ error: { code: "message_too_large" } });
    const empty = await call(await agent("alice"), "send", { recipient: "bob", message: "  " });
    expect(empty.value).toMatchObject({ error: { code: "empty_message" } });
  });

  test("outside tmux the server still answers, and every tool says why it cannot work", async () => {
    const outside = await connect({ cwd: repo.dir, env: outsideTmuxEnv() });
    expect((await outside.listTools()).tools).toHaveLength(14);
    for (const [name, args] of [
      ["send", { recipient: "bob", message: "hi" }],
      ["receive", {}],
      ["wait", { timeout_seconds: 1 }],
      ["status", { status: "ready" }],
      ["list-recipients", {}],
    ] as const) {
      const result = await call(outside, name, args);
      expect(result.isError).toBe(true);
      expect(result.value).toEqual({ error: { code: "not_in_tmux", message: expect.stringContaining("not inside tmux") } });
    }
  });

  test("arguments that break the schema are refused before any tool runs", async () => {
    const result = await call(await agent("alice"), "wait", { timeout_seconds: 100_000 }).catch((error: Error) => ({
      isError: true,
      value: error.message,
    }));
    expect(result.isError).toBe(true);
  });
});

describe("serve", () => {
  test("resolves once the transport closes", async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const serving = serve(serverSide, () => ({ cwd: repo.dir, env: outsideTmuxEnv() }));
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(clientSide);
    await client.close();
    await serving;
  });
});

describe("claims through the tools", () => {
  test("claim, a refusal worded for a tool caller, a wait that gets the claim once released, claims and release", async () => {
    const alice = await agent("alice");
    const bob = await agent("bob");
    // The documents are the CLI's --json ones: read loosely here.
    const call = (client: Client, name: string, args: Record<string, unknown>) =>
      callTool(client, name, args) as Promise<{ isError: boolean; value: any }>;
    const claimed = await call(alice, "claim", { paths: ["mcp/**"], reason: "tool test", ttl_seconds: 600 });
    expect(claimed.isError).toBe(false);
    expect(claimed.value).toMatchObject({
      holder: "alice",
      claims: [{ path: "mcp/**", holder: "alice", shared: false, reason: "tool test" }],
    });
    const refused = await call(bob, "claim", { paths: "mcp/a.ts" });
    expect(refused.isError).toBe(true);
    expect(refused.value.error.code).toBe("claimed");
    expect(refused.value.error.message).toContain('mcp/a.ts is claimed by alice: mcp/** (exclusive, alice, "tool test"');
    expect(refused.value.error.message).toContain("the claim tool with wait_seconds");
    expect(refused.value.error.message).not.toContain("agentmail claim");
    const listed = await call(bob, "claims", {});
    expect(
      listed.value.filter((claim: { path: string }) => claim.path.startsWith("mcp")).map((claim: { state: string }) => claim.state),
    ).toEqual(["live"]);
    const waiting = call(bob, "claim", { paths: "mcp/a.ts", wait_seconds: 60 });
    const released = await call(alice, "release", { paths: "mcp/**" });
    expect(released.value).toMatchObject({ holder: "alice", released: [{ path: "mcp/**" }] });
    expect((await waiting).value).toMatchObject({ holder: "bob", claims: [{ path: "mcp/a.ts", holder: "bob" }] });
    expect((await call(bob, "claims", { mine: true })).value.map((claim: { path: string }) => claim.path)).toEqual(["mcp/a.ts"]);
    expect((await call(bob, "release", {})).value).toMatchObject({ released: [{ path: "mcp/a.ts" }] });
  });
});
