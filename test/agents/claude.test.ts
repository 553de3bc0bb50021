/**
 * Claude Code, headless (`claude -p … --output-format stream-json --verbose`), against the mock Anthropic Messages
 * API. `--allowedTools mcp__agentmail` stands for the user's approval of the agentmail tools: headless runs refuse
 * a tool call the user has not allowed.
 */
import { describeAgent } from "./scenarios.ts";
import type { AgentRun } from "./world.ts";

function resultOf(run: AgentRun): { type?: string; subtype?: string; is_error?: boolean } {
  const last = run.stdout.trim().split("\n").at(-1) ?? "";
  try {
    return JSON.parse(last);
  } catch {
    return {};
  }
}

describeAgent({
  agent: "claude",
  installArgs: [],
  configure: (world) => ({
    ANTHROPIC_BASE_URL: world.mock.url,
    ANTHROPIC_API_KEY: "dummy",
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  }),
  command: (binary, prompt) => [binary, "-p", prompt, "--output-format", "stream-json", "--verbose", "--allowedTools", "mcp__agentmail"],
  sessionEnd: true,
  succeeded: (run) => {
    const result = resultOf(run);
    return result.type === "result" && result.subtype === "success" && result.is_error === false;
  },
});
