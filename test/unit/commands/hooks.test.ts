/**
 * `agentmail hooks install|uninstall` through the command line, in process, against a throwaway repository and HOME;
 * and the settings-file store underneath it (symlinks, modes, backups, files changed by someone else meanwhile); and
 * `hooks install codex --trust`: the trust goes into the user's config.toml (never the project's, which Codex ignores
 * for trust), an install without it says exactly how to trust, and uninstall takes the trust out again.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { codexHookTrust } from "../../../src/hooks/codex-trust.ts";
import { backupConfigFile, readConfigFile, removeConfigFile, writeConfigFile } from "../../../src/hooks/config-files.ts";
import { runInProcess } from "../../support/in-process.ts";
import { freshRepoAndHome, hooksInProcess } from "../../support/repo-and-home.ts";

const world = freshRepoAndHome();

/** Everything that could point the command at the real user's files points into the temp HOME instead. */
const hooks = (args: string[], cwd?: string) => hooksInProcess(world, args, cwd);

const backups = () => (existsSync(join(world.home, "state")) ? readdirSync(join(world.home, "state", "agentmail", "backups")) : []);
const read = (path: string) => readFileSync(path, "utf8");
const userConfig = () => join(world.home, ".codex", "config.toml");

describe("hooks install and uninstall", () => {
  test("install writes the project's files from any subdirectory; again changes nothing; uninstall removes what it created", async () => {
    mkdirSync(join(world.repo.dir, "src", "deep"), { recursive: true });
    const first = await hooks(["install", "claude"], join(world.repo.dir, "src", "deep"));
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`created: ${join(world.repo.dir, ".claude", "settings.json")} (hooks)`);
    expect(first.stdout).toContain(`created: ${join(world.repo.dir, ".mcp.json")} (MCP server)`);
    expect(first.stdout).toContain("Restart Claude Code");
    expect(JSON.parse(read(join(world.repo.dir, ".mcp.json"))).mcpServers.agentmail.command).toBe("agentmail");
    expect(statSync(join(world.repo.dir, ".mcp.json")).mode & 0o777).toBe(0o644);

    const again = await hooks(["install", "claude"]);
    expect(again.stdout).toContain("unchanged:");
    expect(again.stdout).not.toContain("Restart");
    expect(backups()).toEqual([]);

    const removed = await hooks(["uninstall", "claude"]);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain(`removed: ${join(world.repo.dir, ".mcp.json")}`);
    expect(existsSync(join(world.repo.dir, ".mcp.json"))).toBe(false);
    expect(existsSync(join(world.repo.dir, ".claude", "settings.json"))).toBe(false);
    expect(backups()).toHaveLength(1);
  });

  test("an existing file is backed up before it changes, and uninstall gives its bytes back", async () => {
    const settings = join(world.repo.dir, ".gemini", "settings.json");
    mkdirSync(join(world.repo.dir, ".gemini"));
    const original = '{\n  // mine\n  "theme": "GitHub"\n}\n';
    writeFileSync(settings, original);
    chmodSync(settings, 0o640);
    const installed = await hooks(["install", "gemini"]);
    expect(installed.stdout).toMatch(/updated: .*settings\.json \(hooks and MCP server\); backup: /);
    const [stamp] = backups();
    expect(read(join(world.home, "state", "agentmail", "backups", stamp!, settings))).toBe(original);
    expect(statSync(settings).mode & 0o777).toBe(0o640);
    await hooks(["uninstall", "gemini"]);
    expect(read(settings)).toBe(original);
  });

  test("--user writes under HOME; --json reports each file", async () => {
    const run = await hooks(["install", "codex", "--user", "--json"]);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ agent: "codex", scope: "user", dry_run: false, binary: "agentmail" });
    expect(report.files).toEqual([
      { path: join(world.home, ".codex", "config.toml"), holds: "MCP server", action: "created" },
      { path: join(world.home, ".codex", "hooks.json"), holds: "hooks", action: "created" },
    ]);
    expect(statSync(join(world.home, ".codex", "config.toml")).mode & 0o777).toBe(0o600);
    expect(read(join(world.home, ".codex", "config.toml"))).toContain(
      'env_vars = ["TMUX", "TMUX_PANE", "AGENTMAIL_DIR", "AGENTMAIL_NAME", "AGENTMAIL_URL", "AGENTMAIL_NAMESPACE", "AGENTMAIL_HOST", "AGENTMAIL_REDIS_TIMEOUT"]',
    );
  });

  test("--dry-run prints the diff and writes nothing", async () => {
    const run = await hooks(["install", "claude", "--dry-run"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("(dry run: nothing written)");
    expect(run.stdout).toContain(`would be created: ${join(world.repo.dir, ".mcp.json")}`);
    expect(run.stdout).toContain('\n+      "command": "agentmail",\n');
    expect(existsSync(join(world.repo.dir, ".mcp.json"))).toBe(false);
    expect(existsSync(join(world.repo.dir, ".claude"))).toBe(false);
    const json = JSON.parse((await hooks(["uninstall", "claude", "--dry-run", "--json"])).stdout);
    expect(json.files.map((file: { action: string }) => file.action)).toEqual(["unchanged", "unchanged"]);
  });

  test("--binary sets how hooks and the server call agentmail; a relative path is pinned to an absolute one", async () => {
    await hooks(["install", "claude", "--binary", "./bin/agentmail"]);
    const settings = JSON.parse(read(join(world.repo.dir, ".claude", "settings.json")));
    expect(settings.hooks.UserPromptSubmit[0].hooks[0].command).toBe(`${join(world.repo.dir, "bin", "agentmail")} status work`);
    expect(JSON.parse(read(join(world.repo.dir, ".mcp.json"))).mcpServers.agentmail.command).toBe(join(world.repo.dir, "bin", "agentmail"));
    // Uninstall finds them without being told the path again.
    await hooks(["uninstall", "claude"]);
    expect(existsSync(join(world.repo.dir, ".claude", "settings.json"))).toBe(false);
  });

  test("one unparseable file leaves every file of the agent untouched", async () => {
    mkdirSync(join(world.repo.dir, ".claude"));
    writeFileSync(join(world.repo.dir, ".claude", "settings.json"), '{"model": "opus",,}');
    const run = await hooks(["install", "claude"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^error: cannot parse .*settings\.json \(.*\); fix it or move it away, then run the command again; nothing was changed\n$/,
    );
    expect(run.stdout).toBe("");
    expect(existsSync(join(world.repo.dir, ".mcp.json"))).toBe(false);
    const json = await hooks(["install", "claude", "--json"]);
    expect(JSON.parse(json.stdout)).toEqual({ error: { code: "conflict", message: expect.stringContaining("cannot parse") } });
  });

  test("usage errors exit 1 and say what to do", async () => {
    const cases: [string[], string][] = [
      [["install"], "missing agent; usage: agentmail hooks install <claude|codex|gemini|git> [options]"],
      [["install", "cursor"], "agent takes one of claude, codex, gemini, git, not 'cursor'"],
      [["install", "claude", "--project", "--user"], "give --project or --user, not both"],
      [["install", "claude", "--binary", " "], "--binary needs a path"],
      [["uninstall", "claude", "--binary", "x"], "unknown option '--binary'"],
      [["reinstall"], "unknown command 'reinstall'"],
    ];
    for (const [args, message] of cases) {
      const run = await hooks(args);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(message);
    }
  });

  test("--help works for hooks, hooks install, hooks uninstall and mcp", async () => {
    for (const argv of [
      ["hooks", "--help"],
      ["hooks", "install", "--help"],
      ["hooks", "uninstall", "-h"],
      ["mcp", "--help"],
    ]) {
      const run = await runInProcess(argv);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`Usage: agentmail ${argv.slice(0, -1).join(" ")}`);
    }
    expect((await runInProcess(["hooks", "install", "--help"])).stdout).toContain("--dry-run");
    const bare = await runInProcess(["hooks"]);
    expect(bare.stdout).toContain("install");
    expect(bare.code).toBe(0);
  });
});

describe("settings files on disk", () => {
  test("a symlinked settings file is edited through the link, and the link stays", () => {
    const real = join(world.home, "dotfiles-settings.json");
    writeFileSync(real, '{"a": 1}\n');
    const link = join(world.home, "settings.json");
    symlinkSync(real, link);
    const file = readConfigFile(link);
    expect(file.target).toBe(real);
    writeConfigFile(file, '{"a": 2}\n', 0o600);
    expect(read(real)).toBe('{"a": 2}\n');
    removeConfigFile(readConfigFile(link), "{}\n");
    expect(read(link)).toBe("{}\n");
  });

  test("dangling symlinks, directories and FIFOs are refused; so is text that is not UTF-8", () => {
    symlinkSync(join(world.home, "missing"), join(world.home, "dangling.json"));
    expect(() => readConfigFile(join(world.home, "dangling.json"))).toThrow("a symlink to a file that does not exist");
    mkdirSync(join(world.home, "dir.json"));
    expect(() => readConfigFile(join(world.home, "dir.json"))).toThrow("is a directory, not a settings file");
    Bun.spawnSync(["mkfifo", join(world.home, "fifo.json")]);
    expect(() => readConfigFile(join(world.home, "fifo.json"))).toThrow("is a FIFO, not a settings file");
    writeFileSync(join(world.home, "latin1.json"), Buffer.from([0x7b, 0xe9, 0x7d]));
    expect(() => readConfigFile(join(world.home, "latin1.json"))).toThrow("not UTF-8 text");
  });

  test("a file changed by another program since it was read is not overwritten", () => {
    const path = join(world.home, "settings.json");
    writeFileSync(path, "{}\n");
    const file = readConfigFile(path);
    writeFileSync(path, '{"theirs": true}\n');
    expect(() => writeConfigFile(file, '{"ours": true}\n', 0o600)).toThrow("changed while agentmail was editing it");
    expect(read(path)).toBe('{"theirs": true}\n');
    expect(readdirSync(world.home)).toEqual(["settings.json"]);
    expect(() => removeConfigFile(file, "")).toThrow("changed while agentmail was editing it");
  });

  test("backups never overwrite one another", () => {
    const path = join(world.home, "settings.json");
    writeFileSync(path, "one\n");
    const now = new Date("2026-01-02T03:04:05.678Z");
    const first = backupConfigFile(readConfigFile(path), join(world.home, "backups"), now);
    const second = backupConfigFile(readConfigFile(path), join(world.home, "backups"), now);
    expect(first).not.toBe(second);
    expect(read(first)).toBe("one\n");
    expect(statSync(second).mode & 0o777).toBe(0o600);
  });
});

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
