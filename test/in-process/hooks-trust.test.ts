/**
 * `agentmail hooks install codex --trust` through the dispatcher, in process: the trust goes into the user's
 * config.toml (never the project's, which Codex ignores for trust), an install without it says exactly how to trust,
 * and uninstall takes the trust out again.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { codexHookTrust } from "../../src/hooks/codex-trust.ts";
import { freshRepoAndHome, hooksInProcess } from "../support/repo-and-home.ts";

const world = freshRepoAndHome();

const hooks = (args: string[]) => hooksInProcess(world, args);
const userConfig = () => join(world.home, ".codex", "config.toml");

describe("hooks install codex --trust", () => {
  test("without --trust, the install says Codex runs only trusted hooks and gives the command that trusts them", async () => {
    const installed = await hooks(["install", "codex"]);
    expect(installed.code).toBe(0);
    const step = "run 'agentmail hooks install codex --trust'";
    const inProject = "(and a project's .codex/ only in a trusted project)";
    expect(installed.stdout).toContain(`Codex CLI runs only hooks you have trusted ${inProject}: ${step}`);
    expect(existsSync(userConfig())).toBe(false);
    const user = await hooks(["install", "codex", "--user"]);
    expect(user.stdout).toContain("run 'agentmail hooks install codex --user --trust'");
  });

  test("--trust trusts the project and each hook in the user's config.toml, keeps the user's settings; uninstall removes it", async () => {
    mkdirSync(join(world.home, ".codex"));
    writeFileSync(userConfig(), 'model = "o3"\n');
    const installed = await hooks(["install", "codex", "--trust", "--json"]);
    expect(installed.code).toBe(0);
    const report = JSON.parse(installed.stdout);
    expect(report.files.map((file: { path: string; holds: string; action: string }) => [file.path, file.holds, file.action])).toEqual([
      [join(world.repo.dir, ".codex", "config.toml"), "MCP server", "created"],
      [join(world.repo.dir, ".codex", "hooks.json"), "hooks", "created"],
      [userConfig(), "hook trust", "updated"],
    ]);
    const config = Bun.TOML.parse(readFileSync(userConfig(), "utf8")) as any;
    expect(config.model).toBe("o3");
    expect(config.projects[world.repo.dir]).toEqual({ trust_level: "trusted" });
    expect(Object.keys(config.hooks.state)).toContain(`${join(world.repo.dir, ".codex", "hooks.json")}:stop:0:0`);
    expect((await hooks(["install", "codex", "--trust"])).stdout).not.toContain("Restart");

    const removed = await hooks(["uninstall", "codex"]);
    expect(removed.code).toBe(0);
    expect(readFileSync(userConfig(), "utf8")).toBe('model = "o3"\n');
  });

  test("codexHookTrust (for doctor) reports the hooks Codex would skip until --trust, then none", async () => {
    const place = { cwd: world.repo.dir, env: { HOME: world.home } };
    expect(codexHookTrust(place, "project")).toMatchObject({ hooks: 0, projectTrusted: false, untrusted: [] });
    await hooks(["install", "codex"]);
    const before = codexHookTrust(place, "project");
    expect(before).toMatchObject({
      hooksPath: join(world.repo.dir, ".codex", "hooks.json"),
      configPath: userConfig(),
      hooks: 7,
      projectTrusted: false,
    });
    expect(before.untrusted.map((hook) => hook.status)).toEqual(Array(7).fill("untrusted"));
    await hooks(["install", "codex", "--trust"]);
    expect(codexHookTrust(place, "project")).toMatchObject({ hooks: 7, projectTrusted: true, untrusted: [] });
    expect(
      codexHookTrust({ cwd: world.repo.dir, env: { HOME: world.home, CODEX_HOME: join(world.home, "elsewhere") } }, "user"),
    ).toMatchObject({
      hooks: 0,
      projectTrusted: null,
    });
  });

  test("--trust is refused for agents that have no trust to write", async () => {
    const refused = await hooks(["install", "claude", "--trust"]);
    expect(refused.code).toBe(1);
    // toEndWith: consola may flush a throttled warning of an earlier in-process test first.
    expect(refused.stderr).toEndWith(
      "error: --trust is for codex (Codex CLI skips hooks you have not trusted); Claude Code needs no trust entries\n",
    );
    expect((await hooks(["install", "gemini", "--trust"])).stderr).toContain("Gemini CLI asks you to trust the folder itself");
  });
});
