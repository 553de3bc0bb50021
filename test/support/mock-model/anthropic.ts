/** Anthropic Messages (Claude Code): POST /v1/messages, streamed as SSE or, when stream is false, one JSON message. */
import { sse, type MockModel, type Reply } from "./server.ts";

/** The main loop offers tools; side queries (a title, a summary) offer none and must not take a scripted turn. */
export function isAnthropicConversation(body: any): boolean {
  return Array.isArray(body?.tools) && body.tools.length > 0;
}

export function anthropicToolNames(body: any): string[] {
  return Array.isArray(body?.tools) ? body.tools.map((tool: { name?: string }) => String(tool.name)) : [];
}

export function anthropicReply(mock: MockModel, body: any, reply: Reply, tool: string | undefined, more: string[] = []): Response {
  const model = String(body?.model ?? "mock");
  const content: any[] = [];
  if (reply.text) content.push({ type: "text", text: reply.text });
  if ("tool" in reply && tool) {
    content.push({ type: "tool_use", id: mock.nextId("toolu"), name: tool, input: reply.input });
    const also = reply.also ?? [];
    for (let index = 0; index < also.length; index++) {
      content.push({ type: "tool_use", id: mock.nextId("toolu"), name: more[index], input: also[index]!.input });
    }
  }
  const stopReason = "tool" in reply ? "tool_use" : "end_turn";
  const usage = { input_tokens: 100, output_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const id = mock.nextId("msg");
  if (body?.stream !== true) {
    return Response.json({ id, type: "message", role: "assistant", model, content, stop_reason: stopReason, stop_sequence: null, usage });
  }
  const events: Array<{ event: string; data: unknown }> = [];
  const event = (data: { type: string }) => events.push({ event: data.type, data });
  event({
    type: "message_start",
    message: {
      id,
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1 },
    },
  } as any);
  content.forEach((block, index) => {
    if (block.type === "text") {
      event({ type: "content_block_start", index, content_block: { type: "text", text: "" } } as any);
      event({ type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } } as any);
    } else {
      event({ type: "content_block_start", index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } } as any);
      event({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } } as any);
    }
    event({ type: "content_block_stop", index } as any);
  });
  event({ type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 10 } } as any);
  event({ type: "message_stop" });
  return sse(events);
}
