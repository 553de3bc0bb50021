/**
 * `agentmail setup` in process (coverage counts it), in a throwaway repository and HOME, from a window of a private
 * tmux server, with stand-ins for the agent CLIs on PATH (shell scripts named claude, codex and gemini: setup only
 * looks for them) and the compiled agentmail beside them, as the hooks will find it. A mailman is claimed in process
 * (as doctor's tests do); test/commands/setup.test.ts starts a real one with the binary.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SetupReport as Report } from "../../../src/actions/setup.ts";
import { claimMailman, releaseMailman } from "../../../src/mailman/files.ts";
import { ensureRoot } from "../../../src/store/paths.ts";
import { contents } from "../../support/e2e.ts";
import { runInProcess } from "../../support/in-process.ts";
import { BINARY, tempRepo } from "../../support/repo.ts";
import { freshRepoAndHome, type RepoAndHome } from "../../support/repo-and-home.ts";
import { TmuxServer } from "../../support/tmux-server.ts";

const world = freshRepoAndHome();
let repo: RepoAndHome["repo"];
let home: string;
let server: TmuxServer;
let bin: string;
let root: string;

/** The agent CLIs' stand-ins (and agentmail itself, unless left out) in `bin`. */
function onPath(commands: string[], agentmail = true): void {
  rmSync(bin, { recursive: true, force: true });
  mkdirSync(bin);
  for (const command of commands) writeFileSync(join(bin, command), "#!/bin/sh\necho stand-in\n", { mode: 0o755 });
  if (agentmail) symlinkSync(BINARY, join(bin, "agentmail"));
}

/** alice's pane, this test's HOME, and a PATH of `bin` and the system's tools only. */
const as = (extra: Record<string, string> = {}) => ({
  env: {
    TMUX: server.agent("alice").env.TMUX,
    TMUX_PANE: server.agent("alice").paneId,
    PATH: `${bin}:/usr/bin:/bin`,
    HOME: home,
    XDG_STATE_HOME: join(home, "state"),
    CODEX_HOME: "",
    CLAUDE_CONFIG_DIR: "",
    GEMINI_CLI_HOME: "",
    GEMINI_CLI_TRUSTED_FOLDERS_PATH: "",
    // Gemini CLI loads a project's settings only in a folder its user trusted: trusted here unless a test says not.
    GEMINI_CLI_TRUST_WORKSPACE: "true",
    ...extra,
  },
  cwd: repo.dir,
});

async function setup(args: string[] = [], extra: Record<string, string> = {}) {
  const result = await runInProcess(["setup", "--json", ...args], as(extra));
  expect(result.stderr).toBe("");
  return { code: result.code, report: JSON.parse(result.stdout) as Report };
}

/** Every file setup may touch: the repository (but its mail) and HOME. */
const everything = () => ({ repo: contents(repo.dir, (path) => path.startsWith(".git/mail/")), home: contents(home) });
const problems = (report: Report) => report.doctor!.findings.filter((each) => each.status === "problem");

beforeAll(() => {
  server = TmuxServer.start(["alice"], tmpdir());
});
afterAll(() => server.stop());
beforeEach(async () => {
  ({ repo, home } = world);
  root = ensureRoot(repo.mailDir);
  bin = join(home, "bin");
  onPath(["claude", "codex", "gemini"]);
  await claimMailman(root);
});
afterEach(() => releaseMailman(root));

describe("setup", () => {
  test("a fresh repository, three agent CLIs: each set up as hooks install does (Codex with --trust), ready, doctor clean", async () => {
    const { code, report } = await setup();
    expect({ code, ready: report.ready, next: report.next_steps }).toEqual({ code: 0, ready: true, next: [] });
    expect(report.agents.map((each) => [each.agent, each.found, each.error])).toEqual([
      ["claude", join(bin, "claude"), null],
      ["codex", join(bin, "codex"), null],
      ["gemini", join(bin, "gemini"), null],
    ]);
    expect(report.agents.flatMap((each) => each.files.map((file) => [file.path, file.action]))).toEqual([
      [join(repo.dir, ".claude", "settings.json"), "created"],
      [join(repo.dir, ".mcp.json"), "created"],
      [join(repo.dir, ".codex", "config.toml"), "created"],
      [join(repo.dir, ".codex", "hooks.json"), "created"],
      [join(home, ".codex", "config.toml"), "created"],
      [join(repo.dir, ".gemini", "settings.json"), "created"],
    ]);
    expect(report.mailman.action).toBe("running");
    expect(problems(report)).toEqual([]);
    expect(report.doctor!.ok).toBe(true);
    // Three installs, and the one note Gemini's hooks bring: an idle Gemini CLI cannot be woken without keystrokes.
    const hooks = report.doctor!.findings.filter((each) => each.area === "hooks");
    expect(hooks.map((each) => each.status)).toEqual(["ok", "ok", "ok", "note"]);
    expect(hooks.at(-1)!.message).toContain("cannot be woken without keystrokes");

    // What `hooks install` writes for each, in a second repository and HOME, is byte for byte what setup wrote.
    const setUp = everything();
    const other = tempRepo();
    const otherHome = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-setup-home-")));
    try {
      const by = { ...as({ HOME: otherHome, XDG_STATE_HOME: join(otherHome, "state") }), cwd: other.dir };
      for (const argv of [["claude"], ["codex", "--trust"], ["gemini"]]) {
        expect((await runInProcess(["hooks", "install", ...argv], by)).code).toBe(0);
      }
      const installed = contents(other.dir, (path) => path.startsWith(".git/"));
      const written = Object.fromEntries(Object.entries(setUp.repo).filter(([path]) => !path.startsWith(".git/")));
      const relocated = (text: string) => text.replaceAll(other.dir, repo.dir).replaceAll(otherHome, home);
      expect(Object.keys(written).sort()).toEqual(Object.keys(installed).sort());
      for (const path of Object.keys(written)) {
        expect(readFileSync(join(repo.dir, path), "utf8")).toBe(relocated(readFileSync(join(other.dir, path), "utf8")));
      }
      expect(readFileSync(join(home, ".codex", "config.toml"), "utf8")).toBe(
        relocated(readFileSync(join(otherHome, ".codex", "config.toml"), "utf8")),
      );
    } finally {
      other.remove();
      rmSync(otherHome, { recursive: true, force: true });
    }
  });

  test("run again, it changes nothing: every file unchanged, no backup, no restart asked for", async () => {
    expect((await setup()).code).toBe(0);
    const before = everything();
    const { code, report } = await setup();
    expect(code).toBe(0);
    expect(report.agents.flatMap((each) => each.files.map((file) => file.action))).toEqual(Array(6).fill("unchanged"));
    expect(everything()).toEqual(before);
    expect(report.offers.some((offer) => offer.startsWith("restart"))).toBe(false);
  });

  test("--dry-run writes nothing and shows each file it would change as a diff; no doctor, exit 0", async () => {
    const before = everything();
    const { code, report } = await setup(["--dry-run"]);
    expect(code).toBe(0);
    expect(report.dry_run).toBe(true);
    expect(report.doctor).toBeNull();
    expect(everything()).toEqual(before);
    const files = report.agents.flatMap((each) => each.files);
    expect(files).toHaveLength(6);
    for (const file of files) {
      expect(file.action).toBe("created");
      expect(file.diff).toStartWith(`--- ${file.path}\n+++ ${file.path}\n@@ -0,0 +1,`);
    }
    const text = await runInProcess(["setup", "--dry-run"], as());
    expect(text.stdout).toContain(`    would be created: ${join(repo.dir, ".mcp.json")} (MCP server)\n`);
    expect(text.stdout).toContain(`+++ ${join(repo.dir, ".claude", "settings.json")}\n`);
    expect(text.stdout).toEndWith("Dry run: run it again without --dry-run to make these changes.\n");
  });

  test("only the agent CLIs on PATH are set up; the others are named, with how to install them", async () => {
    onPath(["codex"]);
    const { code, report } = await setup();
    expect(code).toBe(0);
    expect(report.agents.map((each) => [each.agent, each.found !== null, each.files.length])).toEqual([
      ["claude", false, 0],
      ["codex", true, 3],
      ["gemini", false, 0],
    ]);
    expect(existsSync(join(repo.dir, ".claude"))).toBe(false);
    expect(existsSync(join(repo.dir, ".gemini"))).toBe(false);
    expect(report.offers).toContain(
      "Claude Code is not installed (no claude on PATH); to use it: npm install -g @anthropic-ai/claude-code, then agentmail setup",
    );
    const text = await runInProcess(["setup"], as());
    expect(text.stdout).toContain("  Gemini CLI: not installed (no gemini on PATH)\n");
    expect(text.stdout).toEndWith("Ready: agents started in tmux windows of this repository get their mail.\n");
  });

  test("no agent CLI on PATH: exit 1, and the step left is to install one", async () => {
    onPath([]);
    const before = everything();
    const { code, report } = await setup();
    expect({ code, ready: report.ready }).toEqual({ code: 1, ready: false });
    expect(report.next_steps).toEqual([
      "no agent CLI is on PATH: install one of Claude Code (npm install -g @anthropic-ai/claude-code), " +
        "Codex CLI (npm install -g @openai/codex), Gemini CLI (npm install -g @google/gemini-cli), then run 'agentmail setup' again",
    ]);
    expect(everything()).toEqual(before);
  });

  test("settings that cannot be read stop only their agent: the others are set up, the file is left, exit 1 with the step", async () => {
    const broken = join(repo.dir, ".claude", "settings.json");
    mkdirSync(join(repo.dir, ".claude"));
    writeFileSync(broken, "{ not json");
    const { code, report } = await setup();
    expect(code).toBe(1);
    const claude = report.agents[0]!;
    expect(claude.files).toEqual([]);
    expect(claude.error).toContain(broken);
    expect(readFileSync(broken, "utf8")).toBe("{ not json");
    expect(report.agents.slice(1).map((each) => [each.agent, each.error, each.files.length])).toEqual([
      ["codex", null, 3],
      ["gemini", null, 1],
    ]);
    expect(report.next_steps[0]).toBe(`Claude Code: ${claude.error}; then run 'agentmail setup' again`);
  });

  test("Gemini CLI's folder not trusted: exit 1, and the step left says how to trust it", async () => {
    const { code, report } = await setup([], { GEMINI_CLI_TRUST_WORKSPACE: "" });
    expect(code).toBe(1);
    expect(problems(report).map((each) => each.message)).toEqual([
      `Gemini CLI (project): ${repo.dir} is not a trusted folder, so Gemini CLI loads none of .gemini/settings.json`,
    ]);
    expect(report.next_steps).toEqual([
      "trust the folder when Gemini CLI asks (or run it with GEMINI_CLI_TRUST_WORKSPACE=true), or: agentmail hooks install gemini --user",
    ]);
    const text = await runInProcess(["setup"], as({ GEMINI_CLI_TRUST_WORKSPACE: "" }));
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(`\nLeft to do:\n  - trust the folder when Gemini CLI asks`);
    expect(text.stdout).toEndWith("Not ready: 1 step left (above).\n");
  });

  test("--user: every agent's user settings under HOME, none in the repository", async () => {
    const { code, report } = await setup(["--user"], { GEMINI_CLI_TRUST_WORKSPACE: "" });
    expect(code).toBe(0);
    expect(report.scope).toBe("user");
    expect(report.agents.flatMap((each) => each.files.map((file) => file.path))).toEqual([
      join(home, ".claude", "settings.json"),
      join(home, ".claude.json"),
      join(home, ".codex", "config.toml"),
      join(home, ".codex", "hooks.json"),
      join(home, ".gemini", "settings.json"),
    ]);
    expect(Object.keys(contents(repo.dir, (path) => path.startsWith(".git/")))).toEqual([]);
  });

  test("the git pre-commit guard: offered until asked for, installed with --git-guard, and then no longer offered", async () => {
    const offer = "agentmail setup --git-guard: refuse commits that change files another agent has claimed";
    expect((await setup()).report.offers).toContain(offer);
    const hook = join(repo.dir, ".git", "hooks", "pre-commit");
    expect(existsSync(hook)).toBe(false);
    const { report } = await setup(["--git-guard"]);
    expect(report.git_guard).toEqual({ path: hook, action: "created", chained: null } as Report["git_guard"]);
    expect(readFileSync(hook, "utf8")).toContain("exec agentmail guard git");
    expect((await setup()).report.offers).not.toContain(offer);
  });

  test("--git-guard where git's hooks directory cannot be made: the agents are set up all the same, and the step names it", async () => {
    writeFileSync(join(repo.dir, "not-a-dir"), "");
    expect(Bun.spawnSync(["git", "config", "core.hooksPath", "not-a-dir"], { cwd: repo.dir }).exitCode).toBe(0);
    const { code, report } = await setup(["--git-guard"]);
    expect(code).toBe(1);
    expect(report.git_guard).toBeNull();
    expect(report.agents.flatMap((each) => each.files.map((file) => file.action))).toEqual(Array(6).fill("created"));
    expect(report.next_steps).toHaveLength(1);
    const file = join(repo.dir, "not-a-dir");
    expect(report.next_steps[0]).toStartWith(
      `the git pre-commit guard: cannot write git's hooks directory ${file} (core.hooksPath not-a-dir, set in the local git ` +
        `config): ${file} is a file, not a directory; point core.hooksPath at a directory you can write`,
    );
  });

  test("no agentmail on the agents' PATH: not ready, and the step left says to put it there", async () => {
    onPath(["claude"], false);
    const { code, report } = await setup();
    expect(code).toBe(1);
    expect(report.next_steps).toEqual([`put agentmail on the PATH, or: agentmail hooks install claude --binary ${process.execPath}`]);
  });

  test("the mailman: --no-mailman leaves it off, which doctor counts as left to do", async () => {
    releaseMailman(root);
    const { code, report } = await setup(["--no-mailman"]);
    expect(code).toBe(1);
    expect(report.mailman).toEqual({ action: "skipped", pid: null });
    expect(report.next_steps).toEqual(["agentmail mailman --daemon"]);
    expect((await setup(["--no-mailman", "--dry-run"])).report.mailman).toEqual({ action: "skipped", pid: null });
    expect((await setup(["--dry-run"])).report.mailman).toEqual({ action: "would start", pid: null });
  });

  test("outside tmux, 'not inside tmux' is a note with how to start the agents, not a step left", async () => {
    const { code, report } = await setup([], { TMUX: "", TMUX_PANE: "" });
    expect(code).toBe(0);
    expect(report.doctor!.findings.find((each) => each.area === "tmux")).toEqual({
      area: "tmux",
      status: "note",
      message: "not inside tmux ($TMUX is not set); run agentmail from a pane of a tmux session",
      fix: "start each agent in a tmux window named for it: tmux new-session -s work -n <name>",
    });
  });

  test("outside a git repository: a usage error, exit 1, nothing written", async () => {
    const outside = mkdtempSync(join(tmpdir(), "agentmail-setup-outside-"));
    try {
      const result = await runInProcess(["setup"], { ...as(), cwd: outside });
      expect(result).toEqual({
        code: 1,
        stdout: "",
        stderr: "error: agentmail setup sets up a git repository: run it inside one (or git init first)\n",
      });
      expect(contents(outside)).toEqual({});
      expect(existsSync(join(home, ".codex"))).toBe(false);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});
