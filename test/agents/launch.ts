/**
 * Each agent CLI started interactively in an `Interactive` world, as the channel tests and bench/channels.ts run it:
 * the user's settings that point it at the mock model and skip its first-run dialogs, agentmail's hooks installed in
 * the user's settings, the mock's router for the turns the tests script by content, and a wait until it is ready.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Turn } from "../support/mock-model/server.ts";
import { claudeEnv } from "./claude-env.ts";
import { ensureAgent } from "./install-agents.ts";
import { carries, type Interactive, until } from "./interactive.ts";
import type { World } from "./world.ts";

/** A key whose last 20 characters ~/.claude.json pre-approves (else an interactive session asks about it). */
const CLAUDE_KEY = "sk-ant-api03-agentmail-tests-key-0123456789abcdef";

const lastUser = (body: { messages?: { role: string; content: unknown }[] }) =>
  JSON.stringify((body?.messages ?? []).filter((message) => message.role === "user").at(-1)?.content ?? "");

/** Codex CLI's request for a title of the task, which it makes beside the conversation. */
export const isCodexTitle = (body: unknown) => carries(body, "Generate a concise, single-line task title");

/** A `RUN-SLEEP-<s>` in the newest user input asks for a shell tool running `sleep <s>`; anything else is answered. */
export function routeByContent(turn: Turn) {
  if (turn.api === "openai") {
    if (isCodexTitle(turn.body)) return { text: "Agent task" };
    const last = JSON.stringify((turn.body?.input ?? []).at(-1) ?? "");
    if (last.includes('"function_call_output"')) return { text: "Done." };
    const sleep = last.match(/RUN-SLEEP-(\d+)/);
    return sleep ? { tool: "exec_command", input: { cmd: `sleep ${sleep[1]}`, yield_time_ms: 30_000 } } : { text: "Done." };
  }
  if (turn.api === "gemini") {
    const parts = JSON.stringify((turn.body?.contents ?? []).at(-1)?.parts ?? []);
    if (parts.includes('"functionResponse"')) return { text: "Done." };
    const sleep = parts.match(/RUN-SLEEP-(\d+)/);
    return sleep ? { tool: "run_shell_command", input: { command: `sleep ${sleep[1]}`, description: "Wait" } } : { text: "Done." };
  }
  const last = lastUser(turn.body);
  if (last.includes('"tool_result"')) return { text: "Done." };
  const sleep = last.match(/RUN-SLEEP-(\d+)/);
  return sleep ? { tool: "Bash", input: { command: `sleep ${sleep[1]}`, description: "Wait" } } : { text: "Done." };
}

/** A Claude Code session's registry entry for `window`'s pane. */
export function claudeSession(lab: Interactive, window: string): Record<string, unknown> | undefined {
  const dir = join(lab.world.home, ".claude", "sessions");
  if (!existsSync(dir)) return undefined;
  for (const name of readdirSync(dir).filter((file) => /^\d+\.json$/.test(file))) {
    try {
      const entry = JSON.parse(readFileSync(join(dir, name), "utf8"));
      if (String(entry.tmux).endsWith(`.${lab.pane(window)}`)) return entry;
    } catch {
      // Being rewritten.
    }
  }
  return undefined;
}

/** The user's Claude Code settings and agentmail's hooks; once per world. */
export async function setUpClaude(lab: Interactive): Promise<void> {
  const { world } = lab;
  world.writeHomeFile(
    ".claude.json",
    JSON.stringify({
      hasCompletedOnboarding: true,
      lastOnboardingVersion: "2.1.332",
      theme: "dark",
      customApiKeyResponses: { approved: [CLAUDE_KEY.slice(-20)], rejected: [] },
      bypassPermissionsModeAccepted: true,
      projects: { [world.repo.dir]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true, allowedTools: [] } },
    }),
  );
  world.writeHomeFile(
    ".claude/settings.json",
    JSON.stringify({ permissions: { allow: ["Bash(sleep:*)", "mcp__agentmail"] }, skipDangerousModePermissionPrompt: true }),
  );
  const install = await world.agentmail(["hooks", "install", "claude", "--user"]);
  if (install.code !== 0) throw new Error(`hooks install claude failed: ${install.stderr}`);
}

/** Starts Claude Code in `window` (`args`: its flags) and waits until it is idle with an inbox. */
export async function launchClaude(lab: Interactive, window: string, args: string[] = []): Promise<void> {
  const env: Record<string, string> = { ...claudeEnv(lab.world), ANTHROPIC_API_KEY: CLAUDE_KEY };
  // As root, bypass mode starts only in a sandbox it is told about.
  if (args.includes("bypassPermissions") && process.getuid?.() === 0) env.IS_SANDBOX = "1";
  lab.launch(window, [ensureAgent("claude").binary, ...args], env);
  await until(
    `Claude Code idle with an inbox in ${window}`,
    () => {
      const entry = claudeSession(lab, window);
      return entry?.status === "idle" && typeof entry.messagingSocketPath === "string";
    },
    90_000,
    () => lab.screen(window),
  );
}

/** The user's ~/.codex/config.toml: the mock as the model provider, never asking, in this sandbox; then `more` lines. */
export function writeCodexConfig(world: World, sandbox: "read-only" | "danger-full-access", more: string[] = []): void {
  world.writeHomeFile(
    ".codex/config.toml",
    [
      'model = "mock-model"',
      'model_provider = "mock"',
      'approval_policy = "never"',
      `sandbox_mode = "${sandbox}"`,
      "",
      "[model_providers.mock]",
      'name = "mock"',
      `base_url = "${world.mock.url}/v1"`,
      'env_key = "OPENAI_API_KEY"',
      'wire_api = "responses"',
      "",
      ...more,
    ].join("\n"),
  );
}

/** The user's Codex config (the mock, trusted `dirs`) and agentmail's hooks, trusted; once per world. */
export async function setUpCodex(lab: Interactive, dirs: string[]): Promise<string> {
  const { world } = lab;
  const codexHome = join(world.home, ".codex");
  lab.ownsCodexHome(codexHome);
  const projects = dirs.flatMap((dir) => [`[projects."${dir}"]`, 'trust_level = "trusted"', ""]);
  writeCodexConfig(world, "danger-full-access", projects);
  const install = await world.agentmail(["hooks", "install", "codex", "--user", "--trust"], undefined, { CODEX_HOME: codexHome });
  if (install.code !== 0) throw new Error(`hooks install codex failed: ${install.stderr}`);
  return codexHome;
}

/** Starts the Codex TUI in `window` and `cwd`; `loaded` says when its thread is loaded in the daemon. */
export async function launchCodex(lab: Interactive, window: string, cwd: string, loaded: () => Promise<boolean>): Promise<void> {
  mkdirSync(cwd, { recursive: true });
  lab.launch(window, [ensureAgent("codex").binary], { OPENAI_API_KEY: "dummy", CODEX_HOME: join(lab.world.home, ".codex") }, cwd);
  await until(`the Codex TUI's thread loaded in ${cwd}`, loaded, 90_000, () => lab.screen(window));
}

/** The user's Gemini CLI settings and agentmail's hooks; then Gemini CLI in `window`, at its prompt. */
export async function launchGemini(lab: Interactive, window: string): Promise<void> {
  const { world } = lab;
  world.writeHomeFile(".gemini/settings.json", JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } } }, null, 2));
  const install = await world.agentmail(["hooks", "install", "gemini", "--user"]);
  if (install.code !== 0) throw new Error(`hooks install gemini failed: ${install.stderr}`);
  lab.launch(window, [ensureAgent("gemini").binary, "--approval-mode", "yolo"], {
    GOOGLE_GEMINI_BASE_URL: world.mock.url,
    GEMINI_API_KEY: "dummy",
    GEMINI_CLI_NO_RELAUNCH: "true",
    GEMINI_CLI_TRUST_WORKSPACE: "true",
  });
  await until(
    "the Gemini CLI prompt",
    () => lab.screen(window).includes("Type your message"),
    90_000,
    () => lab.screen(window),
  );
}
