import { defineCommand, output } from "../cli/definitions.ts";
import { currentInvocation } from "../identity/invocation.ts";
import { AGENT_COMMANDS, AGENT_TITLES } from "../mail/agents.ts";
import { terminalLine, terminalText } from "../mail/terminal-text.ts";
import type { SetupReport } from "../actions/setup.ts";
import { findingLine } from "../actions/doctor.ts";
import { binaryArg, binaryPath } from "./hooks/_args.ts";

const line = (text: string) => `${terminalLine(text)}\n`;

/** What setup did, file by file, then doctor's lines, the steps left and the verdict. */
function setupText(report: SetupReport): string {
  const dry = report.dry_run;
  const verb = (action: string) => (dry && action !== "unchanged" ? `would be ${action}` : action);
  let text = line(`agentmail setup of ${report.repository} (${report.scope} settings${dry ? "; dry run: nothing written" : ""}):`);
  const diffs: string[] = [];
  for (const each of report.agents) {
    const title = AGENT_TITLES[each.agent];
    if (each.found === null) {
      text += line(`  ${title}: not installed (no ${AGENT_COMMANDS[each.agent]} on PATH)`);
      continue;
    }
    text += line(`  ${title} (${each.found}):${each.error === null ? "" : ` not set up: ${each.error}`}`);
    for (const file of each.files) {
      text += line(`    ${verb(file.action)}: ${file.path} (${file.holds})${file.backup ? `; backup: ${file.backup}` : ""}`);
      if (file.diff) diffs.push(file.diff);
    }
  }
  if (report.git_guard) text += line(`  git pre-commit guard: ${verb(report.git_guard.action)}: ${report.git_guard.path}`);
  const { mailman } = report;
  const pid = mailman.pid === null ? "" : ` (pid ${mailman.pid})`;
  const mailmanLine = {
    started: `started${pid}`,
    running: `already runs${pid}`,
    "would start": "would be started",
    skipped: "not started (--no-mailman)",
    failed: `did not start: ${mailman.error}`,
  }[mailman.action];
  text += line(`  mailman: ${mailmanLine}`);
  // Diffs quote settings files, which are not ours: shown so that nothing in them acts on the terminal.
  if (diffs.length > 0) text += `\n${terminalText(diffs.join("\n"))}`;
  if (report.doctor) {
    text += line("doctor:");
    for (const finding of report.doctor.findings) text += `  ${findingLine(finding)}`;
  }
  if (report.next_steps.length > 0) {
    text += line("Left to do:");
    for (const step of report.next_steps) text += line(`  - ${step}`);
  }
  if (report.offers.length > 0) {
    text += line("Also:");
    for (const offer of report.offers) text += line(`  - ${offer}`);
  }
  if (dry) text += line("Dry run: run it again without --dry-run to make these changes.");
  else if (report.ready) text += line("Ready: agents started in tmux windows of this repository get their mail.");
  else text += line(`Not ready: ${report.next_steps.length} step${report.next_steps.length === 1 ? "" : "s"} left (above).`);
  return text;
}

export default defineCommand({
  meta: {
    name: "setup",
    description:
      "Set up this repository in one go: hooks and MCP server for each agent CLI installed, the mailman, doctor's findings and what is left",
    examples: [
      "agentmail setup",
      "agentmail setup --dry-run",
      "agentmail setup --user",
      "agentmail setup --git-guard",
      "agentmail setup --json",
    ],
  },
  args: {
    user: { type: "boolean", description: "Your user settings (~/.claude, ~/.codex or $CODEX_HOME, ~/.gemini) instead of the project's" },
    "dry-run": { type: "boolean", description: "Show every file it would change, as a diff, and change nothing" },
    "no-mailman": { type: "boolean", description: "Do not start the store's mailman" },
    "git-guard": {
      type: "boolean",
      description: "Also install the git pre-commit guard: commits of files other agents claimed are refused",
    },
    binary: binaryArg,
  },
  async run({ args }) {
    const invocation = currentInvocation();
    const { runSetup } = await import("../actions/setup.ts");
    const report = await runSetup(invocation, {
      scope: args.user ? "user" : "project",
      dryRun: args["dry-run"],
      mailman: !args["no-mailman"],
      gitGuard: args["git-guard"],
      binary: binaryPath(args.binary, invocation.cwd),
    });
    return output(report, () => setupText(report), { exitCode: report.ready || report.dry_run ? 0 : 1 });
  },
});
