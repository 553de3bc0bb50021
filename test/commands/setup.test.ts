/**
 * `agentmail setup` end to end: the compiled binary run by name from a window of a private tmux server, in a fresh
 * repository and HOME, with stand-ins for the three agent CLIs on PATH (setup only looks for them; test/agents/
 * setup.test.ts runs the real ones). Setup starts a real mailman; `doctor` run afterwards has no problem line; a second
 * setup changes no file. The in-process cases (each flag, each step left) are in test/unit/commands/setup.test.ts.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { am, contents, oneJson } from "../support/e2e.ts";
import { BINARY, tempRepo } from "../support/repo.ts";
import { TmuxServer } from "../support/tmux-server.ts";
import { alive, stopMailman } from "../support/workflow.ts";

let server: TmuxServer;
let repo: ReturnType<typeof tempRepo>;
let home: string;
const pids = new Set<number>();

beforeEach(() => {
  repo = tempRepo();
  home = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-setup-home-")));
  const bin = join(home, "bin");
  mkdirSync(bin);
  for (const command of ["claude", "codex", "gemini"]) writeFileSync(join(bin, command), "#!/bin/sh\necho stand-in\n", { mode: 0o755 });
  symlinkSync(BINARY, join(bin, "agentmail"));
  server = TmuxServer.start(["alice"], repo.dir);
});
afterEach(async () => {
  await stopMailman(as(), pids);
  server.stop();
  repo.remove();
  rmSync(home, { recursive: true, force: true });
});

/** alice's pane, as a user with this HOME whose PATH has the agent CLIs and agentmail (and the system's tools). */
const as = () => ({
  env: {
    ...server.agent("alice").env,
    PATH: `${join(home, "bin")}:/usr/bin:/bin`,
    HOME: home,
    XDG_STATE_HOME: join(home, "state"),
    CODEX_HOME: "",
    CLAUDE_CONFIG_DIR: "",
    GEMINI_CLI_HOME: "",
    // The folder trusted, as a user does when Gemini CLI first asks.
    GEMINI_CLI_TRUST_WORKSPACE: "true",
  },
  cwd: repo.dir,
});
const agentmail = (args: string[]) => am(args, { ...as(), binary: join(home, "bin", "agentmail") });
/** Every file of the repository but its mail, and of HOME. */
const everything = () => ({ repo: contents(repo.dir, (path) => path.startsWith(".git/mail/")), home: contents(home) });

describe("agentmail setup", () => {
  test("a fresh repository: hooks for the three CLIs, the mailman started, ready; doctor then has no problem line", async () => {
    const result = await agentmail(["setup"]);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    const pid = Number(/mailman: started \(pid (\d+)\)/.exec(result.stdout)?.[1]);
    pids.add(pid);
    expect(alive(pid)).toBe(true);
    expect(result.stdout).toStartWith(
      `agentmail setup of ${repo.dir} (project settings):\n  Claude Code (${join(home, "bin", "claude")}):\n`,
    );
    expect(result.stdout).toEndWith("Ready: agents started in tmux windows of this repository get their mail.\n");
    const doctor = await agentmail(["doctor"]);
    expect(doctor.code).toBe(0);
    expect(doctor.stdout.split("\n").filter((line) => line.startsWith("problem"))).toEqual([]);
    expect(doctor.stdout).toContain(`ok mailman: the mailman runs for this store (pid ${pid} on `);
  });

  test("run again, it changes nothing and starts no second mailman; --json is one document", async () => {
    const first = oneJson(await agentmail(["setup", "--json"])) as { mailman: { pid: number } };
    pids.add(first.mailman.pid);
    const before = everything();
    const again = await agentmail(["setup", "--json"]);
    expect(again.code).toBe(0);
    const report = oneJson(again) as { ready: boolean; mailman: unknown; agents: { files: { action: string }[] }[] };
    expect(report.ready).toBe(true);
    expect(report.mailman).toEqual({ action: "running", pid: first.mailman.pid });
    expect(report.agents.flatMap((each) => each.files.map((file) => file.action))).toEqual(Array(6).fill("unchanged"));
    expect(everything()).toEqual(before);
  });

  test("--dry-run changes nothing and starts nothing", async () => {
    const before = everything();
    const result = await agentmail(["setup", "--dry-run"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("  mailman: would be started\n");
    expect(everything()).toEqual(before);
    const status = oneJson(await agentmail(["mailman", "status", "--json"])) as { running: boolean };
    expect(status.running).toBe(false);
  });
});
