/**
 * `hooks install` and `hooks uninstall`: edit every settings file of an agent (all read and checked before any is
 * written, so one unparseable file leaves all of them untouched), and report what changed in each; for git, the
 * pre-commit guard in the hooks directory git uses for this repository.
 */
import { homedir } from "node:os";
import type { AgentName, Scope } from "../mail/agents.ts";
import { configEdits, type ConfigEdit } from "../hooks/settings-edits.ts";
import { unifiedDiff } from "../hooks/diff.ts";
import {
  backupConfigFile,
  backupRoot,
  readConfigFile,
  refuseReadOnly,
  removeConfigFile,
  writeConfigFile,
  type ConfigFile,
} from "../hooks/config-files.ts";
import { findRepository } from "../store/paths.ts";
import type { Invocation } from "../identity/invocation.ts";
import { gitHooksDir, hooksPathSetting } from "../hooks/git.ts";
import { installGitHook, uninstallGitHook, unusableHooksDir, type GitHookReport } from "../hooks/git-hook.ts";

export type HooksChange = "install" | "uninstall";

export interface HooksRequest {
  /** An agent CLI's settings, or git's pre-commit hook (actions/git-hook.ts). */
  agent: AgentName | "git";
  scope: Scope;
  dryRun: boolean;
  /** How hooks and the MCP server call agentmail: a name looked up on PATH, or an absolute path. */
  binary: string;
  /** Codex CLI: write its trust entries too (an uninstall always takes them out). */
  trust: boolean;
  /** The pre-edit guard claims what the agent edits, released at session end (install only). */
  autoClaim: boolean;
}

/** A request for an agent CLI's settings. */
export type AgentHooksRequest = HooksRequest & { agent: AgentName };

type Outcome = "created" | "updated" | "removed" | "unchanged";

export interface SettingsFileReport {
  path: string;
  holds: ConfigEdit["holds"];
  action: Outcome;
  backup?: string;
  /** Dry run: the change as a unified diff. */
  diff?: string;
}

export interface HooksResult {
  files: SettingsFileReport[];
  /** The hooks call `agentmail` by name, and no agentmail is on PATH: they will fail until one is. */
  notOnPath: boolean;
}

interface Planned {
  edit: ConfigEdit;
  file: ConfigFile;
  after: string;
}

/** A file with nothing left but an empty object (or nothing at all) is removed rather than left behind. */
const isEmptySettings = (text: string) => text.trim() === "" || text.replace(/\s/g, "") === "{}";

function outcomeOf(change: HooksChange, { file, after }: Planned): Outcome {
  if (after === file.text) return "unchanged";
  if (change === "uninstall" && isEmptySettings(after)) return "removed";
  return file.exists ? "updated" : "created";
}

/**
 * Changes the files in three passes, so that a refusal or a failed backup leaves every file as it was: refuse any
 * read-only file, back up every file that will change, then write.
 */
function apply(
  change: HooksChange,
  plan: Planned[],
  request: AgentHooksRequest,
  backups: { root: string; now: Date },
): SettingsFileReport[] {
  const outcomes = plan.map((each) => outcomeOf(change, each));
  const changes = (i: number) => outcomes[i] !== "unchanged";
  if (request.dryRun) {
    return plan.map(({ edit, file, after }, i) => {
      const base = { path: edit.path, holds: edit.holds, action: outcomes[i]! };
      return changes(i) ? { ...base, diff: unifiedDiff(edit.path, file.text, outcomes[i] === "removed" ? "" : after) } : base;
    });
  }
  const verb = change === "install" ? "install" : "remove";
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

export function editHookSettings(invocation: Invocation, change: HooksChange, request: AgentHooksRequest): HooksResult {
  const home = invocation.env.HOME || homedir();
  const projectRoot = findRepository(invocation.cwd, invocation.env)?.workTree ?? invocation.cwd;
  // Uninstall always takes out trust entries an install with --trust wrote.
  const trust = request.trust || change === "uninstall";
  const edits = configEdits(request.agent, request.scope, { projectRoot, home, env: invocation.env }, request.binary, {
    trust,
    autoClaim: request.autoClaim,
  });
  const files = edits.map((edit) => readConfigFile(edit.path));
  const texts = new Map(files.map((file, index) => [edits[index]!.path, file.text]));
  const planned = edits.map((edit, index): Planned => {
    const file = files[index]!;
    return { edit, file, after: change === "install" ? edit.install(file.text, texts) : edit.uninstall(file.text) };
  });
  // One time stamp for the run: the backups of one install sit in one directory.
  const reports = apply(change, planned, request, { root: backupRoot(invocation.env, home), now: new Date() });
  const notOnPath =
    change === "install" &&
    !request.dryRun &&
    request.binary === "agentmail" &&
    !Bun.which("agentmail", { PATH: invocation.env.PATH ?? "" });
  return { files: reports, notOnPath };
}

/** `hooks install git` and `hooks uninstall git`: the pre-commit guard in the hooks directory git uses for this repository. */
export interface GitHookResult {
  hook: GitHookReport;
  /** The hook runs `agentmail` by name, and no agentmail is on PATH: commits go unchecked (the hook says so) until one is. */
  notOnPath: boolean;
}

export function editGitHook(invocation: Invocation, change: HooksChange, binary: string, dryRun: boolean): GitHookResult {
  const dir = gitHooksDir(invocation.cwd, invocation.env);
  let hook: GitHookReport;
  try {
    hook = change === "uninstall" ? uninstallGitHook(dir, dryRun) : installGitHook(dir, binary, dryRun);
  } catch (error) {
    throw unusableHooksDir(dir, error, change, hooksPathSetting(invocation.cwd, invocation.env));
  }
  if (change === "uninstall") return { hook, notOnPath: false };
  const notOnPath = !dryRun && binary === "agentmail" && !Bun.which("agentmail", { PATH: invocation.env.PATH ?? "" });
  return { hook, notOnPath };
}
