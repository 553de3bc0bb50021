/**
 * What `agentmail hooks install <agent>` writes, and where, for each agent it knows:
 *
 *   Claude Code  hooks in .claude/settings.json (user: ~/.claude/settings.json); the MCP server in .mcp.json
 *                (user: ~/.claude.json, where `claude mcp add -s user` keeps it; settings.json has no MCP servers)
 *   Codex CLI    the MCP server in .codex/config.toml and hooks in .codex/hooks.json (user: ~/.codex/, or $CODEX_HOME);
 *                with --trust, the trust Codex needs before it runs them, in the user's config.toml
 *   Gemini CLI   both in .gemini/settings.json (user: ~/.gemini/settings.json, or under $GEMINI_CLI_HOME)
 *
 * The hooks: SessionStart sets the status ready (and teaches the tool), a prompt sets it to work, after each tool call
 * fresh mail reaches the model mid-turn (Claude Code and Codex PostToolUse, Gemini CLI AfterTool), the end of a turn
 * delivers mail (or sets ready), the end of the session sets offline; before an edit tool runs, the guard refuses an
 * edit of a file another agent claimed (Claude Code and Codex PreToolUse, Gemini CLI BeforeTool, each with a matcher
 * for its edit tools, claims/guard.ts). With auto-claim, the guard claims what the agent edits, and the end of the
 * session releases those claims.
 */
import { join } from "node:path";
import { type AgentName, MAX_WAIT_SECONDS, type Scope } from "../mail/agents.ts";
import { shellQuote } from "../mail/next-steps.ts";
import { hookCommand } from "./hook-commands.ts";
import { JsonDocument, type JsonObject } from "./json-document.ts";
import { installHooks, installMcpServer, uninstallHooks, uninstallMcpServer, type HookGroup } from "./json-settings.ts";
import { installCodexServer, uninstallCodexServer } from "./toml-block.ts";
import { agentmailCodexHooks, installCodexTrust, uninstallCodexTrust } from "./codex-trust.ts";
import { EDIT_TOOL_MATCHERS } from "../claims/guard.ts";
import { codexDir, codexUserDir, hooksFile, type SettingsDirs } from "./settings-paths.ts";

/** Seconds an agent should let one MCP call run: the longest wait, plus a margin for the reply. */
const TOOL_TIMEOUT_SECONDS = MAX_WAIT_SECONDS + 60;

export type { SettingsDirs } from "./settings-paths.ts";

/** One file and what agentmail keeps in it. */
export interface ConfigEdit {
  path: string;
  holds: "hooks" | "MCP server" | "hooks and MCP server" | "hook trust" | "MCP server and hook trust";
  /** `files` has the current text of every file of the install, by path, for edits that depend on another file. */
  install(text: string, files?: ReadonlyMap<string, string>): string;
  uninstall(text: string): string;
}

export interface EditOptions {
  /** Codex: also trust the hooks (and a project's .codex/) in the user's config.toml; uninstall always removes it. */
  trust?: boolean;
  /** The pre-edit guard claims what the agent edits; the end of the session releases it. */
  autoClaim?: boolean;
}

const command = (text: string) => ({ type: "command", command: text });

/** The hooks each agent gets; `binary` is the program as the config should call it (`agentmail` unless told). */
export function hookPlan(agent: AgentName, binary: string, autoClaim = false): HookGroup[] {
  const quoted = shellQuote(binary);
  const guard = hookCommand.guard(quoted, agent, autoClaim);
  if (agent === "gemini") {
    const named = (name: string, text: string, description: string) => ({ name, type: "command", command: text, description });
    return [
      {
        event: "SessionStart",
        group: {
          hooks: [
            named("agentmail-ready", hookCommand.ready(quoted), "agentmail: available for mail"),
            named("agentmail-onboard", hookCommand.onboardJson(quoted), "agentmail: teach the model the mail"),
          ],
        },
      },
      { event: "BeforeAgent", group: { hooks: [named("agentmail-work", hookCommand.work(quoted), "agentmail: busy, no reminders")] } },
      {
        event: "AfterAgent",
        group: { hooks: [named("agentmail-deliver", hookCommand.delivery(quoted), "agentmail: deliver unread mail, else available")] },
      },
      {
        event: "BeforeTool",
        group: {
          matcher: EDIT_TOOL_MATCHERS.gemini,
          hooks: [named("agentmail-guard", guard, "agentmail: refuse an edit of a file another agent claimed")],
        },
      },
      {
        event: "AfterTool",
        group: {
          matcher: ".*",
          hooks: [named("agentmail-mail", hookCommand.afterTool(quoted, "gemini"), "agentmail: unread mail, mid-turn")],
        },
      },
      {
        event: "SessionEnd",
        group: {
          hooks: [
            named("agentmail-offline", hookCommand.offline(quoted), "agentmail: gone"),
            ...(autoClaim ? [named("agentmail-release", hookCommand.releaseAuto(quoted), "agentmail: release the claims edits made")] : []),
          ],
        },
      },
    ];
  }
  const plan: HookGroup[] = [
    { event: "SessionStart", group: { hooks: [command(hookCommand.ready(quoted)), command(hookCommand.onboard(quoted))] } },
    { event: "UserPromptSubmit", group: { hooks: [command(hookCommand.work(quoted))] } },
    {
      event: "Stop",
      group: { hooks: [command(agent === "codex" ? hookCommand.deliveryInDaemon(quoted) : hookCommand.delivery(quoted))] },
    },
    { event: "PreToolUse", group: { matcher: EDIT_TOOL_MATCHERS[agent], hooks: [command(guard)] } },
    { event: "PostToolUse", group: { hooks: [command(hookCommand.afterTool(quoted, agent))] } },
  ];
  // Codex CLI fires SessionEnd too (0.169.0 does; older versions ignore an event they do not know).
  const end = [command(hookCommand.offline(quoted)), ...(autoClaim ? [command(hookCommand.releaseAuto(quoted))] : [])];
  plan.push({ event: "SessionEnd", group: { hooks: end } });
  return plan;
}

/** The MCP server entry of a JSON settings file; the program is exec'd directly, so it is not shell-quoted. */
export function mcpEntry(agent: AgentName, binary: string): JsonObject {
  if (agent === "gemini") return { command: binary, args: ["mcp"], timeout: TOOL_TIMEOUT_SECONDS * 1000 };
  return { type: "stdio", command: binary, args: ["mcp"] };
}

function jsonEdit(
  path: string,
  holds: ConfigEdit["holds"],
  install: (document: JsonDocument) => void,
  uninstall: (document: JsonDocument) => void,
): ConfigEdit {
  const run = (text: string, edit: (document: JsonDocument) => void) => {
    const document = JsonDocument.parse(text, path);
    edit(document);
    return document.text;
  };
  return { path, holds, install: (text) => run(text, install), uninstall: (text) => run(text, uninstall) };
}

export function configEdits(agent: AgentName, scope: Scope, where: SettingsDirs, binary: string, options: EditOptions = {}): ConfigEdit[] {
  const plan = hookPlan(agent, binary, options.autoClaim === true);
  const hooks = (path: string) =>
    jsonEdit(
      path,
      "hooks",
      (document) => installHooks(document, plan, binary, path),
      (document) => uninstallHooks(document, binary, path),
    );
  const server = (path: string) =>
    jsonEdit(path, "MCP server", (document) => installMcpServer(document, mcpEntry(agent, binary)), uninstallMcpServer);
  const base = scope === "project" ? where.projectRoot : where.home;

  if (agent === "claude") {
    const serverFile =
      scope === "project"
        ? join(base, ".mcp.json")
        : where.env.CLAUDE_CONFIG_DIR
          ? join(where.env.CLAUDE_CONFIG_DIR, ".claude.json")
          : join(where.home, ".claude.json");
    return [hooks(hooksFile(agent, scope, where)), server(serverFile)];
  }
  if (agent === "codex") {
    const userDir = codexUserDir(where);
    const toml = join(codexDir(scope, where), "config.toml");
    const codexServer = {
      command: binary,
      args: ["mcp"],
      envVars: [
        "TMUX",
        "TMUX_PANE",
        "AGENTMAIL_DIR",
        "AGENTMAIL_NAME",
        "AGENTMAIL_URL",
        "AGENTMAIL_NAMESPACE",
        "AGENTMAIL_HOST",
        "AGENTMAIL_REDIS_TIMEOUT",
      ],
      toolTimeoutSec: TOOL_TIMEOUT_SECONDS,
    };
    const hooksEdit = hooks(hooksFile(agent, scope, where));
    const server: ConfigEdit = {
      path: toml,
      holds: "MCP server",
      install: (text) => installCodexServer(text, codexServer, toml),
      uninstall: (text) => uninstallCodexServer(text, toml),
    };
    if (!options.trust) return [server, hooksEdit];
    const userToml = join(userDir, "config.toml");
    const trust = (text: string, files?: ReadonlyMap<string, string>) => {
      // Trust what the hooks file will hold once installed: the keys carry each hook's position in it.
      const hooksAfter = hooksEdit.install(files?.get(hooksEdit.path) ?? "");
      const hooks = agentmailCodexHooks(hooksEdit.path, hooksAfter, binary);
      return installCodexTrust(text, { hooksPath: hooksEdit.path, hooks, projectRoot: scope === "project" ? base : null }, userToml);
    };
    const untrust = (text: string) => uninstallCodexTrust(text, hooksEdit.path, userToml);
    if (userToml === toml) {
      return [
        {
          ...server,
          holds: "MCP server and hook trust",
          install: (text, files) => trust(server.install(text), files),
          uninstall: (text) => untrust(server.uninstall(text)),
        },
        hooksEdit,
      ];
    }
    return [server, hooksEdit, { path: userToml, holds: "hook trust", install: trust, uninstall: untrust }];
  }
  const settings = hooksFile(agent, scope, where);
  return [
    jsonEdit(
      settings,
      "hooks and MCP server",
      (document) => {
        installMcpServer(document, mcpEntry(agent, binary));
        installHooks(document, plan, binary, settings);
      },
      (document) => {
        uninstallHooks(document, binary, settings);
        uninstallMcpServer(document);
      },
    ),
  ];
}
