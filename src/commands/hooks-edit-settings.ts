/**
 * What `hooks install` and `hooks uninstall` share: parse the request, edit every file of the agent (all read and
 * checked before any is written, so one unparseable file leaves all of them untouched), and report what changed.
 */
import { homedir } from "node:os";
import { isAbsolute, resolve } from "node:path";
import type { Invocation } from "../actions/context.ts";
import { AGENT_TITLES, type AgentName, type Scope } from "../hooks/agent-names.ts";
import { configEdits, type ConfigEdit } from "../hooks/agents.ts";
import { unifiedDiff } from "../hooks/diff.ts";
import { AgentmailError } from "../core/errors.ts";
import { terminalText } from "../core/terminal-text.ts";
import { log } from "../output/log.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import {
  backupConfigFile,
  backupRoot,
  readConfigFile,
  refuseReadOnly,
  removeConfigFile,
  writeConfigFile,
  type ConfigFile,
} from "../store/config-files.ts";
import { findRepository } from "../store/paths.ts";
import type { HooksAction, HooksFlags } from "./hooks-args.ts";

interface Request {
  agent: AgentName;
  scope: Scope;
  dryRun: boolean;
  binary: string;
  trust: boolean;
}

function parseRequest(action: HooksAction, flags: HooksFlags, cwd: string): Request {
  const { agent } = flags;
  if (flags.project && flags.user)
    throw new AgentmailError("usage", `give --project or --user, not both; run 'agentmail hooks ${action} --help'`);
  const given = flags.binary ?? "agentmail";
  if (given.trim() === "") throw new AgentmailError("usage", "--binary needs a path to the agentmail binary");
  // A relative path would be resolved against whatever directory the agent runs hooks in: pin it now.
  const binary = given.includes("/") && !isAbsolute(given) ? resolve(cwd, given) : given;
  if (flags.trust && agent !== "codex") {
    const instead = agent === "gemini" ? "Gemini CLI asks you to trust the folder itself" : "Claude Code needs no trust entries";
    throw new AgentmailError("usage", `--trust is for codex (Codex CLI skips hooks you have not trusted); ${instead}`);
  }
  return { agent: agent as AgentName, scope: flags.user ? "user" : "project", dryRun: flags.dryRun, binary, trust: flags.trust };
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

function outcomeOf(action: HooksAction, { file, after }: Planned): Outcome {
  if (after === file.text) return "unchanged";
  if (action === "uninstall" && isEmptySettings(after)) return "removed";
  return file.exists ? "updated" : "created";
}

/**
 * Changes the files in three passes, so that a refusal or a failed backup leaves every file as it was: refuse any
 * read-only file, back up every file that will change, then write.
 */
function apply(action: HooksAction, plan: Planned[], request: Request, backups: { root: string; now: Date }): Report[] {
  const outcomes = plan.map((each) => outcomeOf(action, each));
  const changes = (i: number) => outcomes[i] !== "unchanged";
  if (request.dryRun) {
    return plan.map(({ edit, file, after }, i) => {
      const base = { path: edit.path, holds: edit.holds, action: outcomes[i]! };
      return changes(i) ? { ...base, diff: unifiedDiff(edit.path, file.text, outcomes[i] === "removed" ? "" : after) } : base;
    });
  }
  const verb = action === "install" ? "install" : "remove";
  for (const [i, { edit, file }] of plan.entries()) if (changes(i)) refuseReadOnly(file, `${verb} its ${edit.holds}`);
  const backupPaths = plan.map(({ file }, i) => (changes(i) && file.exists ? backupConfigFile(file, backups.root, backups.now) : null));
  return plan.map(({ edit, file, after }, i) => {
    // Project settings are shared through the repository; user settings (~/.claude.json holds tokens) stay private.
    if (outcomes[i] === "removed") removeConfigFile(file, after);
    else if (changes(i)) writeConfigFile(file, after, request.scope === "project" ? 0o644 : 0o600);
    const backup = backupPaths[i];
    return { path: edit.path, holds: edit.holds, action: outcomes[i]!, ...(backup ? { backup } : {}) };
  });
}

/** Codex skips untrusted hooks silently, so an install without --trust must say how to trust them. */
function codexTrustStep(scope: Scope): string {
  const project = scope === "project" ? " (and a project's .codex/ only in a trusted project)" : "";
  const command = `agentmail hooks install codex${scope === "user" ? " --user" : ""} --trust`;
  return `Codex CLI runs only hooks you have trusted${project}: run '${command}' to trust them, or review them in Codex with /hooks.`;
}

function nextSteps(action: HooksAction, request: Request): string {
  const title = AGENT_TITLES[request.agent];
  if (action === "uninstall") return `Restart ${title} to drop them.\n`;
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

function printReport(action: HooksAction, request: Request, reports: Report[]): void {
  const lines = [`${AGENT_TITLES[request.agent]}, ${request.scope} settings${request.dryRun ? " (dry run: nothing written)" : ""}:`];
  for (const report of reports) {
    const verb = request.dryRun && report.action !== "unchanged" ? `would be ${report.action}` : report.action;
    lines.push(`  ${verb}: ${report.path} (${report.holds})${report.backup ? `; backup: ${report.backup}` : ""}`);
  }
  const diffs = reports.flatMap((report) => (report.diff ? [report.diff] : []));
  const changed = reports.some((report) => report.action !== "unchanged");
  // Paths and diffs quote settings files, which are not ours: shown so that nothing in them acts on the terminal.
  const steps = changed && !request.dryRun ? nextSteps(action, request) : "";
  writeStdout(terminalText(lines.join("\n") + "\n" + (diffs.length > 0 ? "\n" + diffs.join("\n") : "") + steps));
}

export async function runHooks(action: HooksAction, flags: HooksFlags, place: Invocation): Promise<number> {
  const request = parseRequest(action, flags, place.cwd);
  const home = place.env.HOME || homedir();
  const projectRoot = findRepository(place.cwd, place.env)?.workTree ?? place.cwd;
  // Uninstall always takes out trust entries an install with --trust wrote.
  const trust = request.trust || action === "uninstall";
  const edits = configEdits(request.agent, request.scope, { projectRoot, home, env: place.env }, request.binary, { trust });
  const files = edits.map((edit) => readConfigFile(edit.path));
  const texts = new Map(files.map((file, index) => [edits[index]!.path, file.text]));
  const planned = edits.map((edit, index): Planned => {
    const file = files[index]!;
    return { edit, file, after: action === "install" ? edit.install(file.text, texts) : edit.uninstall(file.text) };
  });
  // One time stamp for the run: the backups of one install sit in one directory.
  const backups = { root: backupRoot(place.env, home), now: new Date() };
  const reports = apply(action, planned, request, backups);
  if (
    action === "install" &&
    !request.dryRun &&
    request.binary === "agentmail" &&
    !Bun.which("agentmail", { PATH: place.env.PATH ?? "" })
  ) {
    log.warn(
      "agentmail is not on PATH: the hooks and the MCP server will fail until it is; put the binary on PATH, or install again with --binary <path>",
    );
  }
  if (flags.json)
    printJson({ agent: request.agent, scope: request.scope, dry_run: request.dryRun, binary: request.binary, files: reports });
  else printReport(action, request, reports);
  return 0;
}
