/**
 * `agentmail mcp`: the tools of ./tools.ts served over stdio with the SDK's protocol core. Identity is resolved per
 * call from the server's own environment, so a server started outside tmux still answers the handshake and the tool
 * list, and each call then fails with the CLI's not_in_tmux error.
 *
 * tools/list and tools/call are our own handlers, not McpServer's: its tools/call answers arguments of the wrong
 * type with a multi-line validation text instead of our error document, and words nothing for a model.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { currentInvocation, type Invocation } from "../identity/invocation.ts";
import { AgentmailError, toAgentmailError } from "../mail/errors.ts";
import { VERSION } from "../mail/version.ts";
import { log } from "../output/log.ts";
import { describeIssue } from "./argument-errors.ts";
import { TOOLS, type ToolContext, type ToolDefinition } from "./tools.ts";

const INSTRUCTIONS =
  "agentmail carries mail between the AI agents working side by side in one tmux session, one agent per window; " +
  "a window's name is its address. Call list-recipients to see who is there, send to write to one, receive (or wait) " +
  "to read your mail, reply to answer a message in its thread (or ack it when done), inbox to look without taking; " +
  "sent follows what you sent (send can wait_for a reply). Mail is kept until it is received, and each message is " +
  "delivered exactly once. Before editing files others may edit too, claim them " +
  "(claims lists who holds what), and release them when you are done.";

const reportSkip: ToolContext["onSkip"] = (mailbox, where, reason) => log.warn(`skipped the line at ${where} of ${mailbox}: ${reason}`);

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

function jsonResult(value: unknown, isError = false): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value) }], ...(isError ? { isError: true } : {}) };
}

/** The tool as tools/list shows it: the input schema as JSON Schema (draft 7, as the SDK writes it). */
function listing(tool: ToolDefinition): Tool {
  const inputSchema = z.toJSONSchema(z.object(tool.inputSchema), { target: "draft-7", io: "input" }) as Tool["inputSchema"];
  // Tasks (long calls polled by the client) are not offered: `wait` blocks and sends progress instead.
  const { name, title, description, annotations } = tool;
  return { name, title, description, inputSchema, annotations, execution: { taskSupport: "forbidden" } };
}

/** Each tool's argument schema, made once: zod compiles an object schema's parser on its first use. */
const argumentSchemas = new Map<ToolDefinition, z.ZodObject>();

/** The arguments as the tool's schema reads them, or a usage error in one sentence naming the first bad one. */
function parseArguments(tool: ToolDefinition, args: Record<string, unknown>): Record<string, unknown> {
  let schema = argumentSchemas.get(tool);
  if (!schema) argumentSchemas.set(tool, (schema = z.object(tool.inputSchema)));
  const parsed = schema.safeParse(args);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const about = tool.inputSchema[String(issue.path[0])]?.description;
  throw new AgentmailError("usage", describeIssue(issue, args, about));
}

/**
 * Runs one tool call; every failure becomes an isError result carrying the CLI's --json error document, its message
 * worded for MCP (the next step names tools and arguments, not commands and flags).
 */
async function callTool(tool: ToolDefinition, args: Record<string, unknown>, context: ToolContext): Promise<CallToolResult> {
  const notes: string[] = [];
  try {
    const result = jsonResult(await tool.run(parseArguments(tool, args), { ...context, note: (text) => void notes.push(text) }));
    // What the CLI says on stderr beside its document: a text block each, after the document, which stays as it is.
    for (const text of notes) result.content.push({ type: "text", text });
    return result;
  } catch (thrown) {
    const error = toAgentmailError(thrown);
    return jsonResult({ error: { code: error.code, message: error.wordedFor("mcp") } }, true);
  }
}

function context(extra: Extra, invocation: Invocation, heartbeatMs: number | undefined): ToolContext {
  const progressToken = extra._meta?.progressToken;
  let progress = 0;
  if (progressToken === undefined) return { invocation, signal: extra.signal, onSkip: reportSkip, heartbeatMs };
  const heartbeat = (message: string) =>
    extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress: ++progress, message } });
  return { invocation, signal: extra.signal, onSkip: reportSkip, heartbeat, heartbeatMs };
}

/** `invocationOf` gives each call its cwd and environment: the server process's own, read at call time, like the CLI. */
export function createServer(invocationOf: () => Invocation = currentInvocation, heartbeatMs?: number): Server {
  const server = new Server({ name: "agentmail", version: VERSION }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS.map(listing) }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const tool = TOOLS.find((each) => each.name === request.params.name);
    if (!tool) {
      const message = `no tool named "${request.params.name}"; the tools are ${TOOLS.map((each) => each.name).join(", ")}`;
      return jsonResult({ error: { code: "usage", message } }, true);
    }
    return callTool(tool, request.params.arguments ?? {}, context(extra, invocationOf(), heartbeatMs));
  });
  return server;
}

/** Serves until the transport closes (stdin reached its end, or stdout went away). */
export async function serve(transport: Transport, invocationOf: () => Invocation = currentInvocation): Promise<void> {
  const server = createServer(invocationOf);
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve;
  });
  server.onerror = (error) => log.warn(`mcp: ${error.message}`);
  await server.connect(transport);
  await closed;
}
