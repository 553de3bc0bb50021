/**
 * What `hooks install` and `hooks uninstall` share: parse the request, edit every file of the agent (all read and
 * checked before any is written, so one unparseable file leaves all of them untouched), and report what changed.
 */
import { homedir } from "node:os";
import { isAbsolute, resolve } from "node:path";
import type { Place } from "../actions/context.ts";
import { AGENT_TITLES, type AgentName, type Scope } from "../core/agent-config/agent-names.ts";
import { configEdits, type ConfigEdit } from "../core/agent-config/agents.ts";
import { unifiedDiff } from "../core/agent-config/diff.ts";
import { AgentmailError } from "../core/errors.ts";
import { log } from "../output/log.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { backupConfigFile, backupRoot, readConfigFile, removeConfigFile, writeConfigFile, type ConfigFile } from "../store/config-files.ts";
import { findRepository } from "../store/paths.ts";
import type { HooksAction, HooksFlags } from "./hooks-args.ts";

interface Request {
  agent: AgentName;
  scope: Scope;
  dryRun: boolean;
  binary: string;
}

function parseRequest(action: HooksAction, flags: HooksFlags, cwd: string): Request {
  if (flags.project && flags.user) throw new AgentmailError("usage", `give --project or --user, not both; run 'agentmail hooks ${action} --help'`);
  const given = flags.binary ?? "agentmail";
  if (given.trim() === "") throw new AgentmailError("usage", "--binary needs a path to the agentmail binary");
  // A relative path would be resolved against whatever directory the agent runs hooks in: pin it now.
  const binary = given.includes("/") && !isAbsolute(given) ? resolve(cwd, given) : given;
  return { agent: flags.agent as AgentName, scope: flags.user ? "user" : "project", dryRun: flags.dryRun, binary };
}

interface Planned {
  edit: ConfigEdit;
  file: ConfigFile;
  after: string;
}

type Outcome = "created" | "updated" | "removed" | "unchanged";

interface Report {
  path: string;
  holds: ConfigEdit["holds"];
  action: Outcome;
  backup?: string;
  diff?: string;
}

/** A file with nothing left but an empty object (or nothing at all) is removed rather than left behind. */
const isEmptySettings = (text: string) => text.trim() === "" || text.replace(/\s/g, "") === "{}";

function apply(action: HooksAction, planned: Planned, request: Request, backups: { root: string; now: Date }): Report {
  const { edit, file, after } = planned;
  const base = { path: edit.path, holds: edit.holds };
  if (after === file.text) return { ...base, action: "unchanged" };
  const removing = action === "uninstall" && isEmptySettings(after);
  const outcome: Outcome = removing ? "removed" : file.exists ? "updated" : "created";
  if (request.dryRun) return { ...base, action: outcome, diff: unifiedDiff(edit.path, file.text, removing ? "" : after) };
  const backup = file.exists ? backupConfigFile(file, backups.root, backups.now) : undefined;
  // Project settings are shared through the repository; user settings (~/.claude.json holds tokens) stay private.
  if (removing) removeConfigFile(file, after);
  else writeConfigFile(file, after, request.scope === "project" ? 0o644 : 0o600);
  return { ...base, action: outcome, ...(backup ? { backup } : {}) };
}

function nextSteps(action: HooksAction, request: Request): string {
  const title = AGENT_TITLES[request.agent];
  if (action === "uninstall") return `Restart ${title} to drop them.\n`;
  const onPath = request.binary === "agentmail" ? " Hooks and the MCP server run `agentmail`: keep it on PATH, or install again with --binary <path>." : "";
  const trust = {
    claude: request.scope === "project" ? " Claude Code asks once to approve the project's MCP server (.mcp.json)." : "",
    codex: " Codex asks you to review and trust new hooks once; a project's .codex/ is read only in a trusted project.",
    gemini: request.scope === "project" ? " Gemini CLI runs project hooks only in a trusted folder." : "",
  }[request.agent];
  return `Restart ${title} to load them.${onPath}${trust}\n`;
}

function printReport(action: HooksAction, request: Request, reports: Report[]): void {
  const lines = [`${AGENT_TITLES[request.agent]}, ${request.scope} settings${request.dryRun ? " (dry run: nothing written)" : ""}:`];
  for (const report of reports) {
    const verb = request.dryRun && report.action !== "unchanged" ? `would be ${report.action}` : report.action;
    lines.push(`  ${verb}: ${report.path} (${report.holds})${report.backup ? `; backup: ${report.backup}` : ""}`);
  }
  const diffs = reports.flatMap((report) => (report.diff ? [report.diff] : []));
  const changed = reports.some((report) => report.action !== "unchanged");
  writeStdout(lines.join("\n") + "\n" + (diffs.length > 0 ? "\n" + diffs.join("\n") : "") + (changed && !request.dryRun ? nextSteps(action, request) : ""));
}

export async function runHooks(action: HooksAction, flags: HooksFlags, place: Place): Promise<number> {
  const request = parseRequest(action, flags, place.cwd);
  const home = place.env.HOME || homedir();
  const projectRoot = findRepository(place.cwd, place.env)?.workTree ?? place.cwd;
  const edits = configEdits(request.agent, request.scope, { projectRoot, home, env: place.env }, request.binary);
  const planned = edits.map((edit): Planned => {
    const file = readConfigFile(edit.path);
    return { edit, file, after: edit[action](file.text) };
  });
  // One time stamp for the run: the backups of one install sit in one directory.
  const backups = { root: backupRoot(place.env, home), now: new Date() };
  const reports = planned.map((each) => apply(action, each, request, backups));
  if (action === "install" && !request.dryRun && request.binary === "agentmail" && !Bun.which("agentmail", { PATH: place.env.PATH ?? "" })) {
    log.warn("agentmail is not on PATH: the hooks and the MCP server will fail until it is; put the binary on PATH, or install again with --binary <path>");
  }
  if (flags.json) printJson({ agent: request.agent, scope: request.scope, dry_run: request.dryRun, binary: request.binary, files: reports });
  else printReport(action, request, reports);
  return 0;
}
