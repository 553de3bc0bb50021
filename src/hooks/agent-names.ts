/** The agents `hooks install` knows, by the name the command takes. */
export const AGENTS = ["claude", "codex", "gemini"] as const;
export type AgentName = (typeof AGENTS)[number];
export type Scope = "project" | "user";

export const AGENT_TITLES: Record<AgentName, string> = { claude: "Claude Code", codex: "Codex CLI", gemini: "Gemini CLI" };
