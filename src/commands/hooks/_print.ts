/** What `hooks install` and `hooks uninstall` print: each settings file's outcome, dry-run diffs, and what to do next. */
import { AGENT_TITLES, type Scope } from "../../mail/agents.ts";
import type { AgentHooksRequest, GitHookResult, HooksChange, HooksRequest, HooksResult } from "../../actions/hooks.ts";
import { terminalText } from "../../mail/terminal-text.ts";
import { log } from "../../output/log.ts";
import { output, type Output } from "../../cli/definitions.ts";

/** Codex skips untrusted hooks silently, so an install without --trust must say how to trust them. */
function codexTrustStep(scope: Scope): string {
  const project = scope === "project" ? " (and a project's .codex/ only in a trusted project)" : "";
  const command = `agentmail hooks install codex${scope === "user" ? " --user" : ""} --trust`;
  return `Codex CLI runs only hooks you have trusted${project}: run '${command}' to trust them, or review them in Codex with /hooks.`;
}

function nextSteps(change: HooksChange, request: AgentHooksRequest): string {
  const title = AGENT_TITLES[request.agent];
  if (change === "uninstall") return `Restart ${title} to drop them.\n`;
  const onPath =
    request.binary === "agentmail"
      ? " Hooks and the MCP server run `agentmail`: keep it on PATH, or install again with --binary <path>."
      : "";
  const trust = {
    claude: request.scope === "project" ? " Claude Code asks once to approve the project's MCP server (.mcp.json)." : "",
    codex: request.trust ? "" : `\n${codexTrustStep(request.scope)}`,
    gemini:
      request.scope === "project"
        ? "\nGemini CLI loads a project's hooks and MCP server only in a trusted folder: " +
          "trust this one when Gemini asks (headless: GEMINI_CLI_TRUST_WORKSPACE=true)."
        : "",
  }[request.agent];
  return `Restart ${title} to load them.${onPath}${trust}\n`;
}

function reportText(change: HooksChange, request: AgentHooksRequest, { files }: HooksResult): string {
  const lines = [`${AGENT_TITLES[request.agent]}, ${request.scope} settings${request.dryRun ? " (dry run: nothing written)" : ""}:`];
  for (const report of files) {
    const verb = request.dryRun && report.action !== "unchanged" ? `would be ${report.action}` : report.action;
    lines.push(`  ${verb}: ${report.path} (${report.holds})${report.backup ? `; backup: ${report.backup}` : ""}`);
  }
  const diffs = files.flatMap((report) => (report.diff ? [report.diff] : []));
  const changed = files.some((report) => report.action !== "unchanged");
  // Paths and diffs quote settings files, which are not ours: shown so that nothing in them acts on the terminal.
  const steps = changed && !request.dryRun ? nextSteps(change, request) : "";
  return terminalText(lines.join("\n") + "\n" + (diffs.length > 0 ? "\n" + diffs.join("\n") : "") + steps);
}

export function hooksOutput(change: HooksChange, request: AgentHooksRequest, result: HooksResult): Output {
  if (result.notOnPath) {
    log.warn(
      "agentmail is not on PATH: the hooks and the MCP server will fail until it is; put the binary on PATH, or install again with --binary <path>",
    );
  }
  const json = { agent: request.agent, scope: request.scope, dry_run: request.dryRun, binary: request.binary, files: result.files };
  return output(json, () => reportText(change, request, result));
}

/** What `hooks install git` and `hooks uninstall git` print: the pre-commit hook's outcome, and what it does. */
export function gitHookOutput(change: HooksChange, request: HooksRequest, result: GitHookResult): Output {
  if (result.notOnPath) {
    log.warn(
      "agentmail is not on PATH: the pre-commit hook lets every commit through unchecked (saying so) until it is; put the binary on PATH, or install again with --binary <path>",
    );
  }
  return output({ agent: "git", dry_run: request.dryRun, binary: request.binary, hook: result.hook }, () =>
    gitHookText(change, request, result),
  );
}

function gitHookText(change: HooksChange, request: HooksRequest, result: GitHookResult): string {
  const { path, action, chained } = result.hook;
  const verb = request.dryRun && !["unchanged", "absent"].includes(action) ? `would be ${action}` : action;
  const before = chained === null ? "" : action === "restored" ? `; put back: ${chained}` : `; runs first: ${chained}`;
  const lines = [`git pre-commit hook${request.dryRun ? " (dry run: nothing written)" : ""}:`, `  ${verb}: ${path}${before}`];
  if (change === "install" && !request.dryRun) {
    lines.push(
      "Commits that change paths another agent has claimed are refused, in every worktree of this repository.",
      "A human who knows better bypasses it: AGENTMAIL_GUARD=off git commit ...",
    );
  }
  return terminalText(lines.join("\n") + "\n");
}
