/**
 * The hooks of Claude Code, Codex CLI and Gemini CLI: where agentmail's are installed (the project, the user), and
 * whether they can work — the binary they run exists and is this version; Codex trusts them; Gemini CLI trusts the
 * project folder whose settings hold them.
 */
import { homedir } from "node:os";
import { dirname, join, relative, resolve, isAbsolute } from "node:path";
import { readFileSync } from "node:fs";
import type { Invocation } from "../identity/invocation.ts";
import { codexHookTrust } from "../hooks/codex-trust.ts";
import { AGENT_TITLES, AGENTS, type AgentName, type Scope } from "../mail/agents.ts";
import { configEdits } from "../hooks/settings-edits.ts";
import { hookBinary, isAgentmailHookCommand } from "../hooks/hook-commands.ts";
import { isObject, JsonDocument } from "../hooks/json-document.ts";
import { terminalLine } from "../mail/terminal-text.ts";
import { VERSION } from "../mail/version.ts";
import { readConfigFile } from "../hooks/config-files.ts";
import { findRepository } from "../store/paths.ts";
import { GEMINI_NO_WAKE, geminiTyping } from "../mailman/adapters.ts";
import { locate, versionOf } from "./binary.ts";
import { note, ok, problem, type Finding } from "./finding.ts";

const shown = (text: string) => terminalLine(text);

/** agentmail's hook commands in a settings file (`hooks.<event>[].hooks[].command`); an error names what is wrong. */
function agentmailCommands(path: string): string[] | Error {
  try {
    const file = readConfigFile(path);
    if (!file.exists) return [];
    const hooks = JsonDocument.parse(file.text, path).valueAt(["hooks"]);
    if (!isObject(hooks)) return [];
    const commands: string[] = [];
    for (const groups of Object.values(hooks)) {
      if (!Array.isArray(groups)) continue;
      for (const group of groups) {
        if (!isObject(group) || !Array.isArray(group.hooks)) continue;
        for (const hook of group.hooks)
          if (isObject(hook) && typeof hook.command === "string" && isAgentmailHookCommand(hook.command)) commands.push(hook.command);
      }
    }
    return commands;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

function installCommand(agent: AgentName, scope: Scope, extra = ""): string {
  return `agentmail hooks install ${agent}${scope === "user" ? " --user" : ""}${extra}`;
}

/** Whether each program the hooks run is there and is this agentmail. */
function binaryFindings(agent: AgentName, scope: Scope, path: string, commands: string[], invocation: Invocation): Finding[] {
  const title = `${AGENT_TITLES[agent]} (${scope}, ${shown(path)})`;
  const findings: Finding[] = [];
  for (const program of new Set(commands.map(hookBinary).filter((word): word is string => word !== null))) {
    const found = locate(program, invocation.env, invocation.cwd);
    const self = process.execPath;
    if (found === null) {
      const where = program.includes("/")
        ? `${shown(program)}, which does not exist or cannot run`
        : `${shown(program)}, which is not on the PATH`;
      findings.push(
        problem(
          "hooks",
          `${title}: the hooks run ${where}`,
          `put agentmail on the PATH, or: ${installCommand(agent, scope, ` --binary ${self}`)}`,
        ),
      );
      continue;
    }
    const version = versionOf(found);
    if (version !== VERSION) {
      const is = version === null ? "does not answer --version" : `is version ${shown(version)}`;
      findings.push(
        problem(
          "hooks",
          `${title}: the hooks run ${shown(found)}, which ${is}, not ${VERSION}`,
          `replace ${shown(found)} with this agentmail (${shown(self)})`,
        ),
      );
      continue;
    }
    findings.push(ok("hooks", `${title}: ${commands.length} hooks run ${shown(found)} (${VERSION})`));
  }
  return findings;
}

/** Codex runs a hook only once the user trusted it, and reads a project's .codex/ only in a trusted project. */
function codexFindings(invocation: Invocation, scope: Scope): Finding[] {
  const trust = codexHookTrust(invocation, scope);
  if (trust.hooks === 0) return [];
  const findings: Finding[] = [];
  if (trust.projectTrusted === false) {
    findings.push(
      problem(
        "hooks",
        `Codex CLI (${scope}): the project is not trusted in ${shown(trust.configPath)}, so Codex reads none of .codex/`,
        installCommand("codex", scope, " --trust"),
      ),
    );
  }
  if (trust.untrusted.length > 0) {
    const states = [...new Set(trust.untrusted.map((hook) => hook.status))].join(" or ");
    findings.push(
      problem(
        "hooks",
        `Codex CLI (${scope}): ${trust.untrusted.length} of ${trust.hooks} agentmail hooks are ${states}, ` +
          "and Codex skips them without a word",
        installCommand("codex", scope, " --trust"),
      ),
    );
  }
  return findings;
}

/** Gemini CLI's trust rule for a folder (its trustedFolders.json): the longest matching rule decides. */
function geminiTrusts(folder: string, env: Invocation["env"], home: string): boolean | undefined {
  if (env.GEMINI_CLI_TRUST_WORKSPACE === "true") return true;
  const path = env.GEMINI_CLI_TRUSTED_FOLDERS_PATH || join(env.GEMINI_CLI_HOME || home, ".gemini", "trustedFolders.json");
  let rules: Record<string, unknown>;
  try {
    const value = JsonDocument.parse(readFileSync(path, "utf8"), path).value;
    rules = value;
  } catch {
    return undefined;
  }
  let longest = -1;
  let decision: boolean | undefined;
  for (const [rule, level] of Object.entries(rules)) {
    const base = level === "TRUST_PARENT" ? dirname(rule) : rule;
    const inside = relative(resolve(base), folder);
    if (inside.startsWith("..") || isAbsolute(inside) || rule.length <= longest) continue;
    longest = rule.length;
    decision = level === "DO_NOT_TRUST" ? false : level === "TRUST_FOLDER" || level === "TRUST_PARENT" ? true : decision;
  }
  return decision;
}

export function hookFindings(invocation: Invocation): Finding[] {
  const home = invocation.env.HOME || homedir();
  const projectRoot = findRepository(invocation.cwd, invocation.env)?.workTree ?? invocation.cwd;
  const findings: Finding[] = [];
  for (const agent of AGENTS) {
    let installed = false;
    for (const scope of ["project", "user"] as const) {
      const edit = configEdits(agent, scope, { projectRoot, home, env: invocation.env }, "agentmail").find((each) =>
        each.holds.includes("hooks"),
      );
      if (!edit) continue;
      const commands = agentmailCommands(edit.path);
      if (commands instanceof Error) {
        findings.push(problem("hooks", `${AGENT_TITLES[agent]} (${scope}): ${shown(commands.message)}`, null));
        continue;
      }
      if (commands.length === 0) continue;
      installed = true;
      findings.push(...binaryFindings(agent, scope, edit.path, commands, invocation));
      if (agent === "codex") findings.push(...codexFindings(invocation, scope));
      if (agent === "gemini" && scope === "project" && geminiTrusts(projectRoot, invocation.env, home) !== true) {
        const fix =
          "trust the folder when Gemini CLI asks (or run it with GEMINI_CLI_TRUST_WORKSPACE=true), " +
          "or: agentmail hooks install gemini --user";
        findings.push(
          problem(
            "hooks",
            `Gemini CLI (project): ${shown(projectRoot)} is not a trusted folder, so Gemini CLI loads none of .gemini/settings.json`,
            fix,
          ),
        );
      }
    }
    if (!installed)
      findings.push(
        note("hooks", `${AGENT_TITLES[agent]}: agentmail's hooks are not installed (project or user)`, installCommand(agent, "project")),
      );
    // Said where users look, once, whether or not a Gemini CLI runs now: the hooks are all it has.
    else if (agent === "gemini") findings.push(note("hooks", GEMINI_NO_WAKE, geminiTyping("<agent>")));
  }
  return findings;
}
