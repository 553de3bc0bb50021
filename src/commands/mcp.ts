import { defineCommand } from "../cli/definitions.ts";
import { restoreNormalJit } from "../cli/jit-policy.ts";
import type { LineInput } from "../mcp/transport.ts";
import { log } from "../output/log.ts";

/** Serves MCP on `input` (stdin) and stdout until the input ends. */
export async function serveStdio(input: LineInput): Promise<void> {
  // Loaded here, not at the top: `agentmail --help` loads every command file, and no other command should pay for
  // the SDK at start-up.
  const [{ serve }, { LineTransport }] = await Promise.all([import("../mcp/server.ts"), import("../mcp/transport.ts")]);
  // stdout carries the protocol only: anything a library prints with console.log goes to stderr instead.
  const saved = { log: console.log, info: console.info, debug: console.debug };
  console.log = console.info = console.debug = (...parts: unknown[]) => log.info(parts.map(String).join(" "));
  try {
    await serve(new LineTransport(input));
  } finally {
    Object.assign(console, saved);
  }
}

export default defineCommand({
  meta: {
    name: "mcp",
    description:
      "Serve agentmail's tools (send, sent, ack, receive, wait, reply, inbox, read, thread, status, list-recipients, claim, release, claims) over MCP on stdio",
    examples: ["claude mcp add agentmail -- agentmail mcp", "gemini mcp add agentmail agentmail mcp", "agentmail hooks install codex"],
  },
  async run() {
    restoreNormalJit();
    await serveStdio(process.stdin);
  },
});
