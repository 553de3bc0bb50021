/**
 * `agentmail hooks install|uninstall` as a user runs it: the compiled binary on sample settings files of each agent
 * (comments, unrelated settings, other tools' hooks, an unparseable file), install → install again → uninstall.
 * Then the installed hook commands themselves, run the way an agent runs them (`sh -c`, in the agent's pane),
 * must set the statuses and deliver mail with exit 2 exactly as the hooks contract says.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { am, HOOK_OPENING } from "../support/e2e.ts";
import { BINARY } from "../support/repo.ts";
import { freshRepoAndHome } from "../support/repo-and-home.ts";
import { TmuxServer } from "../support/tmux-server.ts";

const world = freshRepoAndHome();

const userEnv = () => {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env))
    if (value !== undefined && !["TMUX", "TMUX_PANE", "XDG_STATE_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME"].includes(key)) env[key] = value;
  // dist/ on PATH, as the README asks: the hooks call `agentmail` by name.
  return { ...env, HOME: world.home, PATH: `${dirname(BINARY)}:${env.PATH ?? ""}` };
};
const hooks = (args: string[]) => am(["hooks", ...args], { env: userEnv(), cwd: world.repo.dir });

function write(path: string, text: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return path;
}

const SAMPLES = {
  claude: [
    [
      ".claude/settings.json",
      '// ours\n{\n  "model": "opus",\n  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}\n}\n',
    ],
  ],
  codex: [[".codex/config.toml", '# mine\nmodel = "o3"\n\n[mcp_servers.docs]\ncommand = "npx"\n']],
  gemini: [[".gemini/settings.json", '{\n  "theme": "GitHub", // dark later\n  "mcpServers": {"docs": {"command": "npx"}}\n}\n']],
} as const;

describe("install → install again → uninstall, with the binary", () => {
  for (const [agent, files] of Object.entries(SAMPLES)) {
    test(`${agent}: merged in, idempotent, and removed leaving the user's files as they were`, async () => {
      const originals = files.map(([path, text]) => [write(join(world.repo.dir, path), text), text] as const);
      const first = await hooks(["install", agent]);
      expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: "" });
      for (const [path, text] of originals) expect(readFileSync(path, "utf8")).not.toBe(text);
      const second = await hooks(["install", agent, "--json"]);
      expect(JSON.parse(second.stdout).files.every((file: { action: string }) => file.action === "unchanged")).toBe(true);
      const removed = await hooks(["uninstall", agent]);
      expect(removed.code).toBe(0);
      for (const [path, text] of originals) expect(readFileSync(path, "utf8")).toBe(text);
    });
  }

  test("an unparseable file is refused: exit 1, one error line, nothing written", async () => {
    const path = write(join(world.repo.dir, ".gemini", "settings.json"), '{"theme": "GitHub",,}\n');
    const run = await hooks(["install", "gemini"]);
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 1, stdout: "" });
    expect(run.stderr).toMatch(/^error: cannot parse .*settings\.json .*nothing was changed\n$/);
    expect(readFileSync(path, "utf8")).toBe('{"theme": "GitHub",,}\n');
    expect(existsSync(join(world.home, ".local", "state"))).toBe(false);
  });

  test("two hooks keys, of which Claude Code reads only the last: refused, naming both lines, nothing written", async () => {
    const text =
      '{\n  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "lint"}]}]},\n' +
      '  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}\n}\n';
    const path = write(join(world.repo.dir, ".claude", "settings.json"), text);
    const run = await hooks(["install", "claude"]);
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 1, stdout: "" });
    expect(run.stderr).toBe(
      `error: ${path} has the key "hooks" twice (lines 2 and 3): Claude Code and Gemini CLI read only the last, ` +
        "Codex CLI rejects the file; merge them into one, then run the command again; nothing was changed\n",
    );
    expect(readFileSync(path, "utf8")).toBe(text);
    expect(existsSync(join(world.repo.dir, ".mcp.json"))).toBe(false);
  });

  test("a read-only settings file is refused: exit 1, the chmod that allows it, nothing written", async () => {
    const path = write(join(world.repo.dir, ".gemini", "settings.json"), '{"theme": "GitHub"}\n');
    chmodSync(path, 0o444);
    const run = await hooks(["install", "gemini"]);
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 1, stdout: "" });
    expect(run.stderr).toBe(
      `error: ${path} is read-only; make it writable (chmod u+w ${path}) to let agentmail install its hooks and MCP server; ` +
        "nothing was changed\n",
    );
    expect(readFileSync(path, "utf8")).toBe('{"theme": "GitHub"}\n');
    expect(statSync(path).mode & 0o777).toBe(0o444);
  });

  test("a hard-linked settings file stays linked", async () => {
    const shared = write(join(world.home, "shared.json"), "{}\n");
    const path = join(world.repo.dir, ".gemini", "settings.json");
    mkdirSync(dirname(path));
    linkSync(shared, path);
    expect((await hooks(["install", "gemini"])).code).toBe(0);
    expect(statSync(path).ino).toBe(statSync(shared).ino);
    expect(readFileSync(shared, "utf8")).toContain("agentmail-deliver");
  });

  test("--help for mcp, hooks, hooks install and hooks uninstall", async () => {
    for (const args of [
      ["mcp", "--help"],
      ["hooks", "--help"],
      ["hooks", "install", "--help"],
      ["hooks", "uninstall", "--help"],
    ]) {
      const run = await am(args, { env: userEnv(), cwd: world.repo.dir });
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
      expect(run.stdout).toContain(`Usage: agentmail ${args.slice(0, -1).join(" ")}`);
    }
  });
});

describe("the installed hook commands, run as the agent runs them", () => {
  let tmux: TmuxServer;
  beforeAll(() => {
    tmux = TmuxServer.start(["alice", "bob"], tmpdir());
  });
  afterAll(() => tmux.stop());

  test("session start, prompt, stop without and with mail, session end", async () => {
    expect((await hooks(["install", "claude", "--binary", BINARY])).code).toBe(0);
    const settings = JSON.parse(readFileSync(join(world.repo.dir, ".claude", "settings.json"), "utf8"));
    const commands = (event: string): string[] => settings.hooks[event][0].hooks.map((hook: { command: string }) => hook.command);
    const run = (command: string, who = "bob") => {
      const result = Bun.spawnSync(["sh", "-c", command], {
        env: tmux.agent(who).env,
        cwd: world.repo.dir,
        stdin: "ignore",
        timeout: 15_000,
      });
      return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
    };
    const status = async () =>
      JSON.parse((await am(["status", "--json"], { env: tmux.agent("bob").env, cwd: world.repo.dir })).stdout).status;

    const [ready, onboard] = commands("SessionStart");
    expect(run(ready!).code).toBe(0);
    expect(await status()).toBe("ready");
    expect(run(onboard!).stdout).toContain('You are "bob"');

    expect(run(commands("UserPromptSubmit")[0]!).code).toBe(0);
    expect(await status()).toBe("work");

    const [deliver] = commands("Stop");
    expect(run(deliver!)).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(await status()).toBe("ready");

    run(commands("UserPromptSubmit")[0]!);
    await am(["send", "bob", "please review PR #12"], { env: tmux.agent("alice").env, cwd: world.repo.dir });
    const delivered = run(deliver!);
    expect(delivered.code).toBe(2);
    expect(delivered.stderr).toContain(`${HOOK_OPENING}\nFrom: alice\n`);
    expect(delivered.stderr).toContain("please review PR #12");
    // The agent goes on working on the mail, so it is not marked ready.
    expect(await status()).toBe("work");

    expect(run(commands("SessionEnd")[0]!).code).toBe(0);
    expect(await status()).toBe("offline");
  });
});
