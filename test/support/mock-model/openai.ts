/** OpenAI Responses (Codex CLI): POST /v1/responses, streamed as SSE. */
import { sse, type MockModel, type Reply } from "./server.ts";

/** A tool as the model calls it: Codex groups an MCP server's tools in a namespace (`mcp__agentmail`, tool `send`). */
interface OpenaiTool {
  namespace?: string;
  name: string;
}

function openaiTools(body: any): Array<OpenaiTool & { qualified: string }> {
  const tools: Array<OpenaiTool & { qualified: string }> = [];
  for (const tool of Array.isArray(body?.tools) ? body.tools : []) {
    if (tool?.type === "namespace" && Array.isArray(tool.tools)) {
      const namespace = String(tool.name);
      for (const inner of tool.tools) {
        if (typeof inner?.name === "string")
          tools.push({ namespace, name: inner.name, qualified: `${namespace}${namespace.endsWith("_") ? "" : "__"}${inner.name}` });
      }
    } else if (typeof tool?.name === "string") tools.push({ name: tool.name, qualified: tool.name });
  }
  return tools;
}

/** Function tools by name; a namespace's tools as `<namespace>__<tool>`, the name Codex shows for them. */
export function openaiToolNames(body: any): string[] {
  return openaiTools(body).map((tool) => tool.qualified);
}

export function openaiReply(mock: MockModel, body: any, reply: Reply, tool: string | undefined): Response {
  const responseId = mock.nextId("resp");
  const model = String(body?.model ?? "mock");
  const base = { id: responseId, object: "response", created_at: Math.floor(Date.now() / 1000), model };
  const items: any[] = [];
  if (reply.text) {
    items.push({
      type: "message",
      id: mock.nextId("msg"),
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: reply.text, annotations: [] }],
    });
  }
  if ("tool" in reply && tool) {
    const offered = openaiTools(body).find((each) => each.qualified === tool)!;
    const name = offered.namespace === undefined ? { name: offered.name } : { namespace: offered.namespace, name: offered.name };
    items.push({
      type: "function_call",
      id: mock.nextId("fc"),
      call_id: mock.nextId("call"),
      ...name,
      arguments: JSON.stringify(reply.input),
      status: "completed",
    });
  }
  const events: Array<{ event: string; data: unknown }> = [];
  const event = (data: { type: string } & Record<string, unknown>) => events.push({ event: data.type, data });
  let sequence = 0;
  event({ type: "response.created", sequence_number: sequence++, response: { ...base, status: "in_progress", output: [] } });
  items.forEach((item, index) => {
    const started =
      item.type === "message" ? { ...item, status: "in_progress", content: [] } : { ...item, status: "in_progress", arguments: "" };
    event({ type: "response.output_item.added", sequence_number: sequence++, output_index: index, item: started });
    if (item.type === "message") {
      event({
        type: "response.output_text.delta",
        sequence_number: sequence++,
        item_id: item.id,
        output_index: index,
        content_index: 0,
        delta: item.content[0].text,
      });
    } else {
      event({
        type: "response.function_call_arguments.delta",
        sequence_number: sequence++,
        item_id: item.id,
        output_index: index,
        delta: item.arguments,
      });
    }
    event({ type: "response.output_item.done", sequence_number: sequence++, output_index: index, item });
  });
  const usage = {
    input_tokens: 100,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 10,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 110,
  };
  event({ type: "response.completed", sequence_number: sequence++, response: { ...base, status: "completed", output: items, usage } });
  return sse(events);
}
