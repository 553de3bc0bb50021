/**
 * `agentmail setup`: makes a repository ready in one command, by the same actions the single commands run. For each
 * agent CLI found on PATH, its hooks and MCP server as `hooks install` writes them (Codex CLI with the trust it needs,
 * as `--trust`); the git pre-commit guard when asked; the store's mailman, unless one runs; then doctor's findings,
 * and the steps left, each with the command or the action that takes it.
 */
import { AGENT_COMMANDS, AGENT_TITLES, AGENTS, type AgentName, type Scope } from "../mail/agents.ts";
import { AgentmailError, toAgentmailError } from "../mail/errors.ts";
import type { GitHookReport } from "../hooks/git-hook.ts";
import type { Finding } from "../doctor/finding.ts";
import { findRepository, localRoot } from "../store/paths.ts";
import type { Invocation } from "../identity/invocation.ts";
import { runDoctor, type DoctorReport } from "./doctor.ts";
import { editGitHook, editHookSettings, type SettingsFileReport } from "./hooks.ts";
import { DEFAULT_MAILMAN_SETTINGS, mailmanStatus, startMailman } from "./mailman.ts";

export interface SetupRequest {
  scope: Scope;
  dryRun: boolean;
  /** Start the store's mailman when none runs. */
  mailman: boolean;
  /** Install the git pre-commit guard. */
  gitGuard: boolean;
  /** How hooks and the MCP server call agentmail (as `hooks install --binary`). */
  binary: string;
}

export interface AgentSetup {
  agent: AgentName;
  /** The agent CLI's program found on PATH; null: not installed, nothing written for it. */
  found: string | null;
  files: SettingsFileReport[];
  /** Why its settings were left as they were (a file that cannot be read or changed); null when they were set. */
  error: string | null;
}

export interface MailmanSetup {
  action: "started" | "running" | "would start" | "skipped" | "failed";
  pid: number | null;
  /** Why it could not start (action "failed"). */
  error?: string;
}

export interface SetupReport {
  /** The repository is ready: an agent CLI set up, and doctor finds no problem (always false in a dry run). */
  ready: boolean;
  repository: string;
  scope: Scope;
  dry_run: boolean;
  binary: string;
  agents: AgentSetup[];
  mailman: MailmanSetup;
  /** The git pre-commit guard, when asked for (--git-guard); null otherwise. */
  git_guard: GitHookReport | null;
  /** doctor's report after the setup; null in a dry run. */
  doctor: DoctorReport | null;
  /** What is left before the repository is ready, each a command or an action. */
  next_steps: string[];
  /** What setup did not do unless asked. */
  offers: string[];
}

/** How to install each agent CLI (its npm package), for the step that says it is missing. */
const AGENT_PACKAGES: Record<AgentName, string> = {
  claude: "@anthropic-ai/claude-code",
  codex: "@openai/codex",
  gemini: "@google/gemini-cli",
};

const GIT_GUARD_OFFER = "agentmail setup --git-guard: refuse commits that change files another agent has claimed";

function setUpAgent(invocation: Invocation, agent: AgentName, request: SetupRequest): AgentSetup {
  const found = Bun.which(AGENT_COMMANDS[agent], { PATH: invocation.env.PATH ?? "" });
  if (found === null) return { agent, found, files: [], error: null };
  try {
    // Codex CLI runs only hooks its user trusted, and reads a project's .codex/ only in a trusted project.
    const trust = agent === "codex";
    const result = editHookSettings(invocation, "install", { ...request, agent, trust, autoClaim: false });
    return { agent, found, files: result.files, error: null };
  } catch (error) {
    // One agent's unreadable settings stop neither the others nor the rest of the setup.
    return { agent, found, files: [], error: toAgentmailError(error).message };
  }
}

/** The git pre-commit guard: installed when asked for; either way, whether it is there (dry run) or why not. */
function gitGuardOf(invocation: Invocation, request: SetupRequest): { hook: GitHookReport | null; error: string | null } {
  try {
    return { hook: editGitHook(invocation, "install", request.binary, request.dryRun || !request.gitGuard).hook, error: null };
  } catch (error) {
    return { hook: null, error: toAgentmailError(error).message };
  }
}

async function setUpMailman(invocation: Invocation, request: SetupRequest): Promise<MailmanSetup> {
  if (!request.mailman) return { action: "skipped", pid: null };
  const status = mailmanStatus(invocation);
  if (status.running) return { action: "running", pid: status.pid };
  if (request.dryRun) return { action: "would start", pid: null };
  try {
    const { mailman } = await startMailman(invocation, DEFAULT_MAILMAN_SETTINGS);
    return { action: "started", pid: mailman.pid };
  } catch (error) {
    return { action: "failed", pid: null, error: toAgentmailError(error).message };
  }
}

/**
 * doctor's findings as setup weighs them: outside tmux, "not inside tmux" says where setup ran, not what the
 * repository lacks, so it becomes a note.
 */
function weighed(invocation: Invocation, findings: readonly Finding[]): Finding[] {
  if (invocation.env.TMUX) return [...findings];
  return findings.map((finding) =>
    finding.area === "tmux" && finding.status === "problem"
      ? { ...finding, status: "note", fix: "start each agent in a tmux window named for it: tmux new-session -s work -n <name>" }
      : finding,
  );
}

function nextSteps(
  agents: readonly AgentSetup[],
  gitGuard: string | null,
  mailman: MailmanSetup,
  doctor: readonly Finding[] | null,
): string[] {
  const steps: string[] = [];
  const found = agents.filter((each) => each.found !== null);
  if (found.length === 0) {
    const all = AGENTS.map((agent) => `${AGENT_TITLES[agent]} (npm install -g ${AGENT_PACKAGES[agent]})`).join(", ");
    steps.push(`no agent CLI is on PATH: install one of ${all}, then run 'agentmail setup' again`);
  }
  for (const each of agents) {
    if (each.error !== null) steps.push(`${AGENT_TITLES[each.agent]}: ${each.error}; then run 'agentmail setup' again`);
  }
  if (gitGuard !== null) steps.push(`the git pre-commit guard: ${gitGuard}`);
  if (mailman.action === "failed") steps.push(`the mailman did not start (${mailman.error}): agentmail mailman --daemon`);
  // doctor's lines say what is wrong; the step is its fix (or, with none, the line itself).
  for (const finding of doctor ?? []) {
    const step = finding.fix ?? finding.message;
    if (finding.status === "problem" && !steps.some((each) => each.endsWith(step))) steps.push(step);
  }
  return steps;
}

/** What setup could have done and did not: agent CLIs not installed, the restart the new hooks need, the git guard. */
function offers(request: SetupRequest, agents: readonly AgentSetup[], gitGuard: GitHookReport | null): string[] {
  const lines: string[] = [];
  const changed = agents.filter((each) => each.files.some((file) => file.action !== "unchanged"));
  if (changed.length > 0 && !request.dryRun) {
    const titles = changed.map((each) => AGENT_TITLES[each.agent]).join(", ");
    lines.push(`restart the ${titles} sessions that already run, so they load the hooks and the MCP server`);
  }
  if (changed.some((each) => each.agent === "claude") && request.scope === "project" && !request.dryRun) {
    lines.push("Claude Code asks once to approve the project's MCP server (.mcp.json): approve agentmail");
  }
  for (const each of agents.filter((agent) => agent.found === null)) {
    const title = AGENT_TITLES[each.agent];
    lines.push(
      `${title} is not installed (no ${AGENT_COMMANDS[each.agent]} on PATH); to use it: npm install -g ${AGENT_PACKAGES[each.agent]}, then agentmail setup`,
    );
  }
  if (!request.gitGuard && gitGuard !== null && gitGuard.action !== "unchanged") lines.push(GIT_GUARD_OFFER);
  return lines;
}

export async function runSetup(invocation: Invocation, request: SetupRequest): Promise<SetupReport> {
  const repository = findRepository(invocation.cwd, invocation.env);
  if (repository === null || repository.workTree === null) {
    throw new AgentmailError("usage", "agentmail setup sets up a git repository: run it inside one (or git init first)");
  }
  // The store's root, checked before anything is written (a moved store, a bad AGENTMAIL_DIR).
  localRoot(invocation.cwd, invocation.env);
  const agents = AGENTS.map((agent) => setUpAgent(invocation, agent, request));
  const gitGuard = gitGuardOf(invocation, request);
  const mailman = await setUpMailman(invocation, request);
  const doctor = request.dryRun ? null : await runDoctor(invocation, false);
  const findings = doctor === null ? null : weighed(invocation, doctor.findings);
  const steps = nextSteps(agents, request.gitGuard ? gitGuard.error : null, mailman, findings);
  return {
    ready: !request.dryRun && steps.length === 0,
    repository: repository.workTree,
    scope: request.scope,
    dry_run: request.dryRun,
    binary: request.binary,
    agents,
    mailman,
    git_guard: request.gitGuard ? gitGuard.hook : null,
    doctor: doctor === null ? null : { ...doctor, ok: !findings!.some((each) => each.status === "problem"), findings: findings! },
    next_steps: steps,
    offers: offers(request, agents, gitGuard.hook),
  };
}
