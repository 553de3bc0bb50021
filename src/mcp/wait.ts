/**
 * How long the MCP `wait` tool may block. Agents give up on a tool call after a while (Codex CLI after 60 s unless
 * its config says otherwise), so the limit is finite and `hooks install` sets the agents' call timeouts above it.
 */
export const MAX_WAIT_SECONDS = 600;
export const DEFAULT_WAIT_SECONDS = 60;
