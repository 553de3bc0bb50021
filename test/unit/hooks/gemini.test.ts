/**
 * What Gemini CLI needs from agentmail's hooks: only a hook's JSON `hookSpecificOutput.additionalContext` reaches the
 * model, so the SessionStart hook prints the onboarding text in that form; project hooks load only in a trusted
 * folder, which the install says; user settings follow $GEMINI_CLI_HOME.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { configEdits, hookPlan } from "../../../src/hooks/settings-edits.ts";
import { isAgentmailHookCommand } from "../../../src/hooks/hook-commands.ts";
import { onboardingText } from "../../../src/commands/onboard.ts";
import { runInProcess } from "../../support/in-process.ts";
import { freshRepoAndHome } from "../../support/repo-and-home.ts";

const world = freshRepoAndHome();

describe("onboard --hook-json", () => {
  test("prints one line of JSON whose additionalContext is the onboarding text, for SessionStart", async () => {
    const printed = await runInProcess(["onboard", "--hook-json"], { cwd: "/" });
    expect(printed.code).toBe(0);
    expect(printed.stdout.endsWith("}\n")).toBe(true);
    expect(printed.stdout.trimEnd().includes("\n")).toBe(false);
    expect(JSON.parse(printed.stdout)).toEqual({
      hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: onboardingText(null) },
    });
  });
});

describe("hooks install gemini", () => {
  test("SessionStart marks the agent ready and gives the model the onboarding text as hook JSON", () => {
    const [start] = hookPlan("gemini", "agentmail");
    const hooks = start!.group.hooks as Array<{ name: string; command: string }>;
    expect(hooks.map((hook) => [hook.name, hook.command])).toEqual([
      ["agentmail-ready", "agentmail status ready"],
      ["agentmail-onboard", "agentmail onboard --hook-json"],
    ]);
    expect(isAgentmailHookCommand("'/opt/my tools/agentmail' onboard --hook-json")).toBe(true);
  });

  test("a project install says the folder must be trusted; --user follows GEMINI_CLI_HOME", async () => {
    const env = { HOME: world.home, XDG_STATE_HOME: join(world.home, "state"), GEMINI_CLI_HOME: "" };
    const installed = await runInProcess(["hooks", "install", "gemini"], { cwd: world.repo.dir, env });
    expect(installed.stdout).toContain(
      "Gemini CLI loads a project's hooks and MCP server only in a trusted folder: trust this one when Gemini asks",
    );
    const settings = JSON.parse(readFileSync(join(world.repo.dir, ".gemini", "settings.json"), "utf8"));
    expect(settings.hooks.SessionStart[0].hooks[1].command).toBe("agentmail onboard --hook-json");
    expect(
      configEdits("gemini", "user", { projectRoot: "/repo", home: "/home/u", env: { GEMINI_CLI_HOME: "/gh" } }, "agentmail")[0]!.path,
    ).toBe("/gh/.gemini/settings.json");
    expect(configEdits("gemini", "user", { projectRoot: "/repo", home: "/home/u", env: {} }, "agentmail")[0]!.path).toBe(
      "/home/u/.gemini/settings.json",
    );
  });
});
