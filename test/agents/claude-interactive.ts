/**
 * An interactive Claude Code (its TUI, as a person runs it) in a pane of the world's private tmux server, offline
 * against the mock model, with agent teams on. What it needs to start without a question: onboarding done, the API
 * key approved, the repository trusted, and permission mode "default" (2.1.332 starts in auto mode otherwise, whose
 * server-side check fails offline and opens a blocking dialog at the first Agent call).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Recorded } from "../support/mock-model/server.ts";
import { waitFor } from "../support/workflow.ts";
import { AGENT, type World } from "./world.ts";

const KEY = "sk-ant-api03-agentmail-agents-key-0123456789abcdef";

export interface InteractiveClaude {
  paneId: string;
  /** `~/.claude` of the isolated HOME. */
  configDir: string;
  debugLog: string;
}

const quoted = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

/** Starts Claude Code in the AGENT window's pane (the pane keeps its id); returns once its prompt shows. */
export async function startInteractiveClaude(world: World, binary: string, version: string, allow: string[]): Promise<InteractiveClaude> {
  const configDir = join(world.home, ".claude");
  world.writeHomeFile(
    ".claude.json",
    JSON.stringify({
      hasCompletedOnboarding: true,
      lastOnboardingVersion: version,
      theme: "dark",
      customApiKeyResponses: { approved: [KEY.slice(-20)], rejected: [] },
      projects: { [world.repo.dir]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true, allowedTools: [] } },
    }),
  );
  world.writeHomeFile(
    ".claude/settings.json",
    JSON.stringify({ permissions: { allow, defaultMode: "default" }, skipDangerousModePermissionPrompt: true }),
  );
  const debugLog = join(world.home, "claude-debug.log");
  const env = world.env(AGENT, {
    ANTHROPIC_BASE_URL: world.mock.url,
    ANTHROPIC_API_KEY: KEY,
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS: "1",
  });
  // env -i: the pane gets exactly this environment, nothing of the tmux server's.
  const variables = Object.entries(env).map(([key, value]) => quoted(`${key}=${value}`));
  const launcher = join(world.home, "launch-claude.sh");
  writeFileSync(
    launcher,
    `#!/bin/sh\ncd ${quoted(world.repo.dir)}\nexec env -i ${variables.join(" ")} ${quoted(binary)} --debug-file ${quoted(debugLog)}\n`,
  );
  const paneId = world.tmux.agent(AGENT).paneId;
  world.tmux.run(["respawn-pane", "-k", "-t", paneId, `sh ${quoted(launcher)}`]);
  const claude = { paneId, configDir, debugLog };
  await until(claude, world, "Claude Code's prompt", () => screen(world, paneId).includes("❯"), 90_000);
  return claude;
}

export const screen = (world: World, paneId: string) => world.tmux.run(["capture-pane", "-p", "-J", "-t", paneId]);

/** Waits for `check`; a timeout says what it waited for, with the pane's screen and the end of Claude's debug log. */
export async function until(
  claude: InteractiveClaude,
  world: World,
  what: string,
  check: () => unknown,
  timeoutMs = 60_000,
): Promise<void> {
  const state = () => {
    const log = existsSync(claude.debugLog) ? readFileSync(claude.debugLog, "utf8").split("\n").slice(-40).join("\n") : "(no debug log)";
    return `${what}\n--- screen:\n${screen(world, claude.paneId)}\n--- debug log:\n${log}`;
  };
  await waitFor(state, async () => Boolean(await check()), timeoutMs, 50);
}

/** Types a prompt at Claude's prompt and submits it once the text shows in the pane. */
export async function typePrompt(claude: InteractiveClaude, world: World, text: string): Promise<void> {
  await until(claude, world, "the prompt", () => screen(world, claude.paneId).includes("❯"));
  world.tmux.run(["send-keys", "-t", claude.paneId, "-l", text]);
  await until(claude, world, `'${text}' typed`, () => screen(world, claude.paneId).includes(text));
  world.tmux.run(["send-keys", "-t", claude.paneId, "Enter"]);
}

/** The session's team: the one directory Claude made under teams/ (about 0.7 s after it starts). */
export async function sessionTeam(claude: InteractiveClaude, world: World): Promise<string> {
  const teams = join(claude.configDir, "teams");
  let team = "";
  await until(claude, world, "the session's team", () => {
    const found = existsSync(teams) ? readdirSync(teams).filter((name) => existsSync(join(teams, name, "config.json"))) : [];
    team = found[0] ?? "";
    return found.length === 1;
  });
  return team;
}

/** The text of a request's last user message: its text blocks and tool results, joined. */
export function lastUserText(body: any): string {
  const last = [...(body?.messages ?? [])].reverse().find((message: any) => message.role === "user");
  if (!last) return "";
  if (typeof last.content === "string") return last.content;
  return JSON.stringify(last.content);
}

/** Whether a request answers tool calls (its last user message holds tool results). */
export function answersTools(body: any): boolean {
  const last = [...(body?.messages ?? [])].reverse().find((message: any) => message.role === "user");
  return Array.isArray(last?.content) && last.content.some((block: any) => block.type === "tool_result");
}

/** A request from an agent-team teammate (its system prompt has the teammate section), not from the lead. */
export const isTeammateRequest = (text: string) => text.includes("# Agent Teammate Communication");

/** The lead's requests: the conversation requests no diversion answered. */
export const leadRequests = (world: World): Recorded[] => world.mock.conversation.filter((request) => !request.diverted);
