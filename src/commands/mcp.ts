import { log } from "../output/log.ts";
import { defineCommand } from "./command.ts";

export default defineCommand({
  meta: { name: "mcp", description: "Serve agentmail's tools (send, receive, wait, status, list-recipients) to an AI agent over MCP on stdio" },
  examples: ["claude mcp add agentmail -- agentmail mcp", "gemini mcp add agentmail agentmail mcp", "agentmail hooks install codex"],
  async run() {
    // Loaded here, not at the top: `agentmail --help` loads every command file, and no other command should pay for
    // the SDK at start-up.
    const [{ serve }, { LineTransport }] = await Promise.all([import("../mcp/server.ts"), import("../output/mcp-transport.ts")]);
    // stdout carries the protocol only: anything a library prints with console.log goes to stderr instead.
    console.log = console.info = console.debug = (...parts: unknown[]) => log.info(parts.map(String).join(" "));
    await serve(new LineTransport(process.stdin));
    return 0;
  },
});
