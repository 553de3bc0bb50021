/**
 * The mock model server the agents suite points Claude Code, Codex CLI and Gemini CLI at, in process: each API's
 * stream is well formed and carries the scripted reply, tool calls name the tool the agent offered, side calls do not
 * use up the script, and every request is recorded.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { MockModel, resolveTool, type Turn } from "./mock-model/server.ts";
import { sampleOf } from "./mock-model/gemini.ts";

let mock: MockModel;

beforeAll(() => {
  mock = new MockModel();
});
afterAll(() => mock.stop());
beforeEach(() => mock.reset());

/** The events of an SSE body: the `event:` name (if any) and the parsed `data:` of each. */
async function events(response: Response): Promise<Array<{ event?: string; data: any }>> {
  expect(response.headers.get("content-type")).toBe("text/event-stream");
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((block) => block.trim() !== "")
    .map((block) => {
      const lines = block.split("\n");
      const event = lines.find((line) => line.startsWith("event: "))?.slice(7);
      const data = JSON.parse(lines.find((line) => line.startsWith("data: "))!.slice(6));
      return event ? { event, data } : { data };
    });
}

const post = (path: string, body: unknown) =>
  fetch(`${mock.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

const anthropicTools = [{ name: "Bash" }, { name: "mcp__agentmail__send" }, { name: "mcp__agentmail__receive" }];

describe("Anthropic Messages", () => {
  test("a streamed text reply: message_start, one text block, end_turn, message_stop; the request is recorded", async () => {
    mock.script({ text: "Hi there." });
    const received = await events(
      await post("/v1/messages?beta=true", {
        model: "m",
        stream: true,
        tools: anthropicTools,
        messages: [{ role: "user", content: "hello" }],
      }),
    );
    expect(received.map((each) => each.event)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(received.every((each) => each.data.type === each.event)).toBe(true);
    expect(received[2]!.data.delta).toEqual({ type: "text_delta", text: "Hi there." });
    expect(received[4]!.data.delta.stop_reason).toBe("end_turn");
    expect(mock.requests.map((request) => [request.method, request.path, request.query, request.turn])).toEqual([
      ["POST", "/v1/messages", "?beta=true", 0],
    ]);
    expect(mock.conversation[0]!.body.messages[0].content).toBe("hello");
  });

  test("a tool call names the offered tool that ends with the asked name, with its input as JSON, then the next reply", async () => {
    mock.script({ tool: "send", input: { recipient: "bob", message: "hi" } }, { text: "Sent." });
    const call = await events(await post("/v1/messages", { stream: true, tools: anthropicTools, messages: [] }));
    expect(call[1]!.data.content_block).toMatchObject({ type: "tool_use", name: "mcp__agentmail__send" });
    expect(JSON.parse(call[2]!.data.delta.partial_json)).toEqual({ recipient: "bob", message: "hi" });
    expect(call[4]!.data.delta.stop_reason).toBe("tool_use");
    const next = await events(await post("/v1/messages", { stream: true, tools: anthropicTools, messages: [] }));
    expect(next[2]!.data.delta.text).toBe("Sent.");
    expect(mock.conversation.map((request) => request.toolName)).toEqual(["mcp__agentmail__send", undefined]);
  });

  test("a side query without tools gets a plain answer and leaves the script alone; stream false gets one JSON message", async () => {
    mock.script({ text: "For the conversation." });
    const side = await (await post("/v1/messages", { stream: false, messages: [] })).json();
    expect(side).toMatchObject({ type: "message", role: "assistant", content: [{ type: "text", text: "Done." }], stop_reason: "end_turn" });
    const main: any = await (await post("/v1/messages", { stream: false, tools: anthropicTools, messages: [] })).json();
    expect(main.content).toEqual([{ type: "text", text: "For the conversation." }]);
    expect(mock.conversation.length).toBe(1);
  });

  test("several tool calls in one turn (also): each a tool_use block, in order; other APIs refuse them", async () => {
    mock.script({
      tool: "send",
      input: { message: "a" },
      also: [
        { tool: "receive", input: {} },
        { tool: "Bash", input: { command: "ls" } },
      ],
    });
    const call = await events(await post("/v1/messages", { stream: true, tools: anthropicTools, messages: [] }));
    const blocks = call.filter((each) => each.event === "content_block_start").map((each) => each.data.content_block.name);
    expect(blocks).toEqual(["mcp__agentmail__send", "mcp__agentmail__receive", "Bash"]);
    mock.script({ tool: "SendMessage", unlisted: true, input: { to: "codex" } });
    const deferred = await events(await post("/v1/messages", { stream: true, tools: anthropicTools, messages: [] }));
    expect(deferred[1]!.data.content_block).toMatchObject({ type: "tool_use", name: "SendMessage" });
    mock.script({ tool: "receive", input: {}, also: [{ tool: "receive", input: {} }] });
    expect(
      (await post("/v1/responses", { stream: true, input: [], tools: [{ type: "function", name: "mcp__agentmail__receive" }] })).status,
    ).toBe(500);
    expect(mock.errors).toEqual(["POST /v1/responses: the openai mock answers with one tool call at a time"]);
  });

  test("a diversion answers the requests it picks and leaves the script to the others (a team's teammates)", async () => {
    const teammate = (turn: Turn) => turn.text.includes("# Agent Teammate Communication");
    mock.divert(teammate, { text: "helper: idle." }).script({ text: "lead 1" }, { text: "lead 2" });
    const ask = async (system: string) =>
      ((await (await post("/v1/messages", { stream: false, system, tools: anthropicTools, messages: [] })).json()) as any).content[0].text;
    expect(await ask("lead")).toBe("lead 1");
    expect(await ask("# Agent Teammate Communication")).toBe("helper: idle.");
    expect(await ask("lead")).toBe("lead 2");
    expect(mock.conversation.map((request) => request.diverted === true)).toEqual([false, true, false]);
    mock.otherwise((turn) => ({ text: `responder ${turn.index}` }));
    expect(await ask("lead")).toBe("responder 3");
  });

  test("probes and token counts are answered", async () => {
    expect((await fetch(mock.url, { method: "HEAD" })).status).toBe(200);
    expect(await (await post("/v1/messages/count_tokens", {})).json()).toEqual({ input_tokens: 100 });
  });
});

describe("OpenAI Responses", () => {
  test("a text reply streams created, item added, text delta, item done, completed with usage", async () => {
    mock.script({ text: "Hello." });
    const received = await events(await post("/v1/responses", { model: "gpt", stream: true, input: [], tools: [] }));
    expect(received.map((each) => each.event)).toEqual([
      "response.created",
      "response.output_item.added",
      "response.output_text.delta",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(received[2]!.data.delta).toBe("Hello.");
    expect(received[3]!.data.item.content).toEqual([{ type: "output_text", text: "Hello.", annotations: [] }]);
    expect(received[4]!.data.response.usage.total_tokens).toBe(110);
  });

  test("a function call carries the offered tool's name and its arguments as a JSON string", async () => {
    mock.script({ tool: "receive", input: {}, text: "Let me look." });
    const tools = [
      { type: "function", name: "shell" },
      { type: "namespace", tools: [{ name: "mcp__agentmail__receive" }] },
    ];
    const received = await events(await post("/v1/responses", { stream: true, input: [], tools }));
    const done = received.filter((each) => each.event === "response.output_item.done").map((each) => each.data.item);
    expect(done.map((item) => item.type)).toEqual(["message", "function_call"]);
    expect(done[1]).toMatchObject({ name: "mcp__agentmail__receive", arguments: "{}" });
    expect(received.at(-1)!.data.response.output.length).toBe(2);
  });
});

describe("Gemini", () => {
  const geminiTools = [{ functionDeclarations: [{ name: "read_file" }, { name: "mcp_agentmail_send" }] }];

  test("streamGenerateContent answers one data-only SSE chunk with the text or the function call", async () => {
    mock.script({ text: "Hi." }, { tool: "send", input: { recipient: "bob", message: "x" } });
    const path = "/v1beta/models/gemini-2.5-pro:streamGenerateContent";
    const text = await events(await post(`${path}?alt=sse`, { contents: [], tools: geminiTools }));
    expect(text).toEqual([
      {
        data: expect.objectContaining({
          candidates: [{ content: { role: "model", parts: [{ text: "Hi." }] }, finishReason: "STOP", index: 0 }],
        }),
      },
    ]);
    const call = await events(await post(`${path}?alt=sse`, { contents: [], tools: geminiTools }));
    expect(call[0]!.data.candidates[0].content.parts).toEqual([
      { functionCall: { name: "mcp_agentmail_send", args: { recipient: "bob", message: "x" } } },
    ]);
  });

  test("generateContent with a schema answers JSON text that fits it, without using the script", async () => {
    mock.script({ text: "For the conversation." });
    const schema = {
      type: "object",
      properties: { reasoning: { type: "string" }, next_speaker: { type: "string", enum: ["model", "user"] } },
    };
    const answer: any = await (
      await post("/v1beta/models/flash:generateContent", { generationConfig: { responseJsonSchema: schema } })
    ).json();
    expect(JSON.parse(answer.candidates[0].content.parts[0].text)).toEqual({ reasoning: "mock", next_speaker: "user" });
    expect(await (await post("/v1beta/models/flash:countTokens", {})).json()).toEqual({ totalTokens: 100 });
    expect((await post("/v1beta/models/flash:embedContent", {})).status).toBe(404);
    expect(mock.conversation.length).toBe(0);
  });

  test("sampleOf fills objects, arrays, numbers (at their minimum) and Gemini's upper-case types", () => {
    expect(
      sampleOf({
        type: "OBJECT",
        properties: { n: { type: "INTEGER" }, ok: { type: "BOOLEAN" }, list: { type: "ARRAY" }, model: { enum: ["pro", "flash"] } },
      }),
    ).toEqual({
      n: 1,
      ok: false,
      list: [],
      model: "flash",
    });
    expect(sampleOf({ type: "object", properties: { score: { type: "integer", minimum: 5, maximum: 100 } } })).toEqual({ score: 5 });
    expect(sampleOf(undefined)).toBe("mock");
  });
});

describe("scripting and recording", () => {
  test("a script function sees the turn (index, API, tools, body text); when the script runs out the model says Done.", async () => {
    const seen: Turn[] = [];
    mock.script((turn) => {
      seen.push(turn);
      return { text: "First." };
    });
    await post("/v1/responses", {
      stream: true,
      input: [{ content: "marker-123" }],
      tools: [{ type: "function", name: "mcp__agentmail__wait" }],
    });
    const second = await events(await post("/v1/responses", { stream: true, input: [], tools: [] }));
    expect(seen.map((turn) => [turn.index, turn.api, turn.tools, turn.text.includes("marker-123")])).toEqual([
      [0, "openai", ["mcp__agentmail__wait"], true],
    ]);
    expect(second[2]!.data.delta).toBe("Done.");
  });

  test("a tool the agent did not offer, or an unknown path, is a recorded error the test can fail on", async () => {
    mock.script({ tool: "send", input: {} });
    const response = await post("/v1/messages", { stream: true, tools: [{ name: "Bash" }], messages: [] });
    expect(response.status).toBe(500);
    expect((await post("/v2/unknown", {})).status).toBe(404);
    expect(mock.errors).toEqual(["POST /v1/messages: the agent offered no single tool named like 'send'; it offered: Bash"]);
  });

  test("resolveTool prefers an exact name and refuses an ambiguous one", () => {
    expect(resolveTool(["send", "mcp__agentmail__send"], "send")).toBe("send");
    expect(resolveTool(["agentmail__send", "resend"], "send")).toBe("agentmail__send");
    expect(() => resolveTool(["mcp__agentmail__send", "mcp_agentmail_send"], "send")).toThrow(/no single tool/);
    expect(() => resolveTool([], "send")).toThrow(/offered: none/);
  });
});
