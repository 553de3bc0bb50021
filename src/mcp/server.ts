/**
 * `agentmail mcp`: the tools of ./tools.ts served over stdio with the official SDK. Identity is resolved per call from
 * the server's own environment, so a server started outside tmux still answers the handshake and the tool list, and
 * each call then fails with the CLI's not_in_tmux error.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { here, type Place } from "../actions/context.ts";
import { toAgentmailError } from "../core/errors.ts";
import { VERSION } from "../core/version.ts";
import { log } from "../output/log.ts";
import type { SkipReporter } from "../store/mailbox.ts";
import { TOOLS, type ToolContext, type ToolDefinition } from "./tools.ts";

const INSTRUCTIONS =
  "agentmail carries mail between the AI agents working side by side in one tmux session, one agent per window; " +
  "a window's name is its address. Call list-recipients to see who is there, send to write to one, receive (or wait) " +
  "to read your mail, reply to answer a message in its thread, inbox to look without taking. Mail is kept until it " +
  "is received, and each message is delivered exactly once.";

const reportSkip: SkipReporter = (mailbox, offset, reason) => log.warn(`skipped the line at byte ${offset} of ${mailbox}: ${reason}`);

function jsonResult(value: unknown, isError = false): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value) }], ...(isError ? { isError: true } : {}) };
}

/** Runs one tool call; every failure becomes an isError result carrying the CLI's --json error document. */
export async function callTool(tool: ToolDefinition, args: Record<string, unknown>, context: ToolContext): Promise<CallToolResult> {
  try {
    return jsonResult(await tool.run(args, context));
  } catch (thrown) {
    const error = toAgentmailError(thrown);
    return jsonResult({ error: { code: error.code, message: error.message } }, true);
  }
}

/** `placeOf` gives each call its cwd and environment: the server process's own, read at call time, like the CLI. */
export function createServer(placeOf: () => Place = here, heartbeatMs?: number): McpServer {
  const server = new McpServer({ name: "agentmail", version: VERSION }, { instructions: INSTRUCTIONS });
  for (const tool of TOOLS) {
    server.registerTool(tool.name, { title: tool.title, description: tool.description, inputSchema: tool.inputSchema, annotations: tool.annotations }, (args, extra) => {
      const progressToken = extra._meta?.progressToken;
      let progress = 0;
      const heartbeat =
        progressToken === undefined
          ? undefined
          : (message: string) => extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress: ++progress, message } });
      return callTool(tool, args as Record<string, unknown>, { place: placeOf(), signal: extra.signal, onSkip: reportSkip, heartbeat, heartbeatMs });
    });
  }
  return server;
}

/** Serves until the transport closes (stdin reached its end, or stdout went away). */
export async function serve(transport: Transport, placeOf: () => Place = here): Promise<void> {
  const server = createServer(placeOf);
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = resolve;
  });
  server.server.onerror = (error) => log.warn(`mcp: ${error.message}`);
  await server.connect(transport);
  await closed;
}
