/**
 * `agentmail hooks install codex --trust` through the dispatcher, in process: the trust goes into the user's
 * config.toml (never the project's, which Codex ignores for trust), an install without it says exactly how to trust,
 * and uninstall takes the trust out again.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { codexHookTrust } from "../../src/actions/hook-trust.ts";
import { runInProcess } from "../support/in-process.ts";
import { tempRepo } from "../support/repo.ts";

let repo: ReturnType<typeof tempRepo>;
let home: string;

beforeEach(() => {
  repo = tempRepo();
  home = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-home-")));
});

afterEach(() => {
  repo.remove();
  rmSync(home, { recursive: true, force: true });
});

const hooks = (args: string[]) =>
  runInProcess(["hooks", ...args], {
    cwd: repo.dir,
    env: { HOME: home, XDG_STATE_HOME: join(home, "state"), CLAUDE_CONFIG_DIR: "", CODEX_HOME: "" },
  });
const userConfig = () => join(home, ".codex", "config.toml");

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
    mkdirSync(join(home, ".codex"));
    writeFileSync(userConfig(), 'model = "o3"\n');
    const installed = await hooks(["install", "codex", "--trust", "--json"]);
    expect(installed.code).toBe(0);
    const report = JSON.parse(installed.stdout);
    expect(report.files.map((file: { path: string; holds: string; action: string }) => [file.path, file.holds, file.action])).toEqual([
      [join(repo.dir, ".codex", "config.toml"), "MCP server", "created"],
      [join(repo.dir, ".codex", "hooks.json"), "hooks", "created"],
      [userConfig(), "hook trust", "updated"],
    ]);
    const config = Bun.TOML.parse(readFileSync(userConfig(), "utf8")) as any;
    expect(config.model).toBe("o3");
    expect(config.projects[repo.dir]).toEqual({ trust_level: "trusted" });
    expect(Object.keys(config.hooks.state)).toContain(`${join(repo.dir, ".codex", "hooks.json")}:stop:0:0`);
    expect((await hooks(["install", "codex", "--trust"])).stdout).not.toContain("Restart");

    const removed = await hooks(["uninstall", "codex"]);
    expect(removed.code).toBe(0);
    expect(readFileSync(userConfig(), "utf8")).toBe('model = "o3"\n');
  });

  test("codexHookTrust (for doctor) reports the hooks Codex would skip until --trust, then none", async () => {
    const place = { cwd: repo.dir, env: { HOME: home } };
    expect(codexHookTrust(place, "project")).toMatchObject({ hooks: 0, projectTrusted: false, untrusted: [] });
    await hooks(["install", "codex"]);
    const before = codexHookTrust(place, "project");
    expect(before).toMatchObject({
      hooksPath: join(repo.dir, ".codex", "hooks.json"),
      configPath: userConfig(),
      hooks: 5,
      projectTrusted: false,
    });
    expect(before.untrusted.map((hook) => hook.status)).toEqual(Array(5).fill("untrusted"));
    await hooks(["install", "codex", "--trust"]);
    expect(codexHookTrust(place, "project")).toMatchObject({ hooks: 5, projectTrusted: true, untrusted: [] });
    expect(codexHookTrust({ cwd: repo.dir, env: { HOME: home, CODEX_HOME: join(home, "elsewhere") } }, "user")).toMatchObject({
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
