/** Whether a send may bring up the mailman: agentmail's hooks installed for Claude Code or Codex CLI (src/hooks/installed.ts). */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { channelHooksInstalled } from "../../../src/hooks/installed.ts";
import { hookCommand } from "../../../src/hooks/hook-commands.ts";

let dir: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-installed-")));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const write = (path: string, text: string) => {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
};
const hooks = (command: string) => JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: "command", command }] }] } });

test("Claude Code's or Codex CLI's end-of-turn hook, in the project's or the user's settings; not Gemini CLI's, not others'", () => {
  const home = join(dir, "home");
  const project = join(dir, "project");
  const env = { HOME: home };
  expect(channelHooksInstalled(env, project)).toBe(false);
  write(join(project, ".claude", "settings.json"), hooks("my-own-hook --stop"));
  write(join(home, ".gemini", "settings.json"), hooks(hookCommand.delivery("agentmail")));
  expect(channelHooksInstalled(env, project)).toBe(false);
  write(join(home, ".codex", "hooks.json"), hooks(hookCommand.deliveryInDaemon("agentmail")));
  expect(channelHooksInstalled(env, project)).toBe(true);
  // CODEX_HOME moves the user's Codex settings; CLAUDE_CONFIG_DIR the user's Claude Code settings.
  expect(channelHooksInstalled({ ...env, CODEX_HOME: join(dir, "elsewhere") }, project)).toBe(false);
  write(join(dir, "claude-config", "settings.json"), hooks(hookCommand.delivery("agentmail")));
  expect(
    channelHooksInstalled({ ...env, CODEX_HOME: join(dir, "elsewhere"), CLAUDE_CONFIG_DIR: join(dir, "claude-config") }, project),
  ).toBe(true);
  write(join(project, ".claude", "settings.json"), hooks(hookCommand.delivery("/opt/agentmail")));
  expect(channelHooksInstalled({ HOME: join(dir, "nobody") }, project)).toBe(true);
});
