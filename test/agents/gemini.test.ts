/**
 * Gemini CLI, headless (`gemini -p … -o json`), against the mock Gemini API. What the user approves themselves:
 * the folder (GEMINI_CLI_TRUST_WORKSPACE=true, the headless form of trusting it when Gemini asks; a project's hooks
 * and MCP server load only in a trusted folder, and headless Gemini refuses an untrusted one), and the agentmail
 * tools (a policy rule in ~/.gemini/policies; headless runs leave tools that would need a confirmation out).
 */
import { describeAgent } from "./scenarios.ts";
import type { AgentRun } from "./world.ts";

function resultOf(run: AgentRun): { response?: unknown; error?: unknown } {
  try {
    return JSON.parse(run.stdout);
  } catch {
    return {};
  }
}

describeAgent({
  agent: "gemini",
  installArgs: [],
  configure: (world) => {
    world.writeHomeFile(
      ".gemini/settings.json",
      JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } } }, null, 2) + "\n",
    );
    world.writeHomeFile(
      ".gemini/policies/agentmail.toml",
      '[[rule]]\nmcpName = "agentmail"\ntoolName = "*"\ndecision = "allow"\npriority = 100\n',
    );
    return {
      GOOGLE_GEMINI_BASE_URL: world.mock.url,
      GEMINI_API_KEY: "dummy",
      GEMINI_CLI_NO_RELAUNCH: "true",
      GEMINI_CLI_TRUST_WORKSPACE: "true",
    };
  },
  command: (binary, prompt) => [binary, "-p", prompt, "-o", "json"],
  sessionEnd: true,
  succeeded: (run) => {
    const result = resultOf(run);
    return typeof result.response === "string" && result.error === undefined;
  },
});
