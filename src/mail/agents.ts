/**
 * Agents, as the rest of agentmail names them: the agent CLIs agentmail works with (their names, as `hooks install`
 * and `guard` take them, and titles), how long one of their tool calls to `agentmail mcp` may wait, and how available
 * an agent says it is.
 */

/** The agents `hooks install` knows, by the name the command takes. */
export const AGENTS = ["claude", "codex", "gemini"] as const;
export type AgentName = (typeof AGENTS)[number];
export type Scope = "project" | "user";

export const AGENT_TITLES: Record<AgentName, string> = { claude: "Claude Code", codex: "Codex CLI", gemini: "Gemini CLI" };

/** The program each agent CLI installs on PATH: how `setup` finds out which are installed. */
export const AGENT_COMMANDS: Record<AgentName, string> = { claude: "claude", codex: "codex", gemini: "gemini" };

/**
 * How long the MCP `wait` tool may block. Agents give up on a tool call after a while (Codex CLI after 60 s unless
 * its config says otherwise), so the limit is finite and `hooks install` sets the agents' call timeouts above it.
 */
export const MAX_WAIT_SECONDS = 600;
export const DEFAULT_WAIT_SECONDS = 60;

/** How available an agent says it is: ready (remind me of mail), work (do not interrupt), offline (gone). */
export const AVAILABILITIES = ["ready", "work", "offline"] as const;
export type Availability = (typeof AVAILABILITIES)[number];
