/** What Claude Code needs to run headless against the mock model, and how to tell that a run ended well. */
import type { AgentRun, World } from "./world.ts";

export const claudeEnv = (world: World): Record<string, string> => ({
  ANTHROPIC_BASE_URL: world.mock.url,
  ANTHROPIC_API_KEY: "dummy",
  DISABLE_TELEMETRY: "1",
  DISABLE_AUTOUPDATER: "1",
  DISABLE_ERROR_REPORTING: "1",
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  // 2.1.332 defers MCP tools behind its ToolSearch tool: the scripted model calls them directly, so list them all.
  ENABLE_TOOL_SEARCH: "false",
});

/** The last line of stream-json output: the run's result. */
export function resultOf(run: AgentRun): { type?: string; subtype?: string; is_error?: boolean } {
  const last = run.stdout.trim().split("\n").at(-1) ?? "";
  try {
    return JSON.parse(last);
  } catch {
    return {};
  }
}

export const succeeded = (run: AgentRun): boolean => {
  const result = resultOf(run);
  return result.type === "result" && result.subtype === "success" && result.is_error === false;
};
