/**
 * Claude Code, headless (`claude -p … --output-format stream-json --verbose`), against the mock Anthropic Messages
 * API. `--allowedTools mcp__agentmail` stands for the user's approval of the agentmail tools: headless runs refuse
 * a tool call the user has not allowed.
 */
import { claudeEnv, succeeded } from "./claude-env.ts";
import { describeAgent } from "./scenarios.ts";

describeAgent({
  agent: "claude",
  installArgs: [],
  configure: claudeEnv,
  command: (binary, prompt) => [binary, "-p", prompt, "--output-format", "stream-json", "--verbose", "--allowedTools", "mcp__agentmail"],
  sessionEnd: true,
  succeeded,
});
