/**
 * `agentmail setup` with the pinned real agent CLIs installed (Claude Code, Codex CLI, Gemini CLI on PATH), in a
 * fresh repository and isolated HOME, run from the agent's tmux window: it finds the three, sets each up, starts the
 * mailman, and leaves `doctor` with no problem line once the user trusted the folder for Gemini CLI (the one step
 * setup leaves to them); run again, it changes nothing. Then each CLI, run headless against the mock model with
 * nothing installed but what setup wrote, runs agentmail's hooks: the onboarding reaches the model, and mail sent
 * during a turn reaches it at the turn's end.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { contents } from "../support/e2e.ts";
import { claudeEnv, succeeded as claudeSucceeded } from "./claude-env.ts";
import { AGENT_CLIS, ensureAgent, type AgentCli } from "./install-agents.ts";
import { writeCodexConfig } from "./launch.ts";
import { AGENT, SENDER, World, type AgentRun } from "./world.ts";

setDefaultTimeout(240_000);

const binaries = new Map<AgentCli, string>();
let installError: Error | undefined;
let world: World;

beforeAll(() => {
  try {
    for (const agent of AGENT_CLIS) binaries.set(agent, ensureAgent(agent).binary);
  } catch (error) {
    installError = error as Error;
  }
});

/** The user: the three CLIs on PATH (before the system's), each pointed at the mock in their own settings. */
beforeEach(() => {
  if (installError) throw installError;
  world = new World();
  const clis = join(world.home, "agent-clis");
  mkdirSync(clis);
  for (const [agent, binary] of binaries) symlinkSync(binary, join(clis, agent));
  writeCodexConfig(world, "read-only");
  world.writeHomeFile(".gemini/settings.json", `${JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } } }, null, 2)}\n`);
  world.writeHomeFile(
    ".gemini/policies/agentmail.toml",
    '[[rule]]\nmcpName = "agentmail"\ntoolName = "*"\ndecision = "allow"\npriority = 100\n',
  );
});
afterEach(async () => {
  await world.agentmail(["mailman", "stop"], AGENT, userEnv());
  world.stop();
});

/** What the user's shell has: the agentmail shim and the CLIs on PATH; `trusted`: Gemini CLI's folder trust given. */
function userEnv(trusted = true): Record<string, string> {
  return {
    PATH: `${join(world.home, ".local", "bin")}:${join(world.home, "agent-clis")}:${process.env.PATH}`,
    ...(trusted ? { GEMINI_CLI_TRUST_WORKSPACE: "true" } : {}),
  };
}

interface SetupReport {
  ready: boolean;
  agents: { agent: string; found: string | null; files: { action: string }[] }[];
  mailman: { action: string; pid: number | null };
  doctor: { findings: { status: string; area: string; message: string }[] };
  next_steps: string[];
}

async function setup(trusted = true): Promise<{ code: number | null; report: SetupReport }> {
  const result = await world.agentmail(["setup", "--json"], AGENT, userEnv(trusted));
  expect(result.stderr).toBe("");
  return { code: result.code, report: JSON.parse(result.stdout) as SetupReport };
}

describe("agentmail setup with the real agent CLIs installed", () => {
  test("finds the three, sets each up, starts the mailman; doctor has no problem line once Gemini's folder is trusted; again, nothing changes", async () => {
    const first = await setup(false);
    expect(first.report.agents.map((each) => [each.agent, each.found])).toEqual(
      AGENT_CLIS.map((agent) => [agent, join(world.home, "agent-clis", agent)]),
    );
    expect(first.report.mailman.action).toBe("started");
    // What setup leaves to the user: trusting the folder when Gemini CLI asks.
    expect({ code: first.code, steps: first.report.next_steps }).toEqual({
      code: 1,
      steps: [
        "trust the folder when Gemini CLI asks (or run it with GEMINI_CLI_TRUST_WORKSPACE=true), or: agentmail hooks install gemini --user",
      ],
    });

    const ready = await setup();
    expect({ code: ready.code, ready: ready.report.ready, steps: ready.report.next_steps }).toEqual({ code: 0, ready: true, steps: [] });
    const doctor = await world.agentmail(["doctor"], AGENT, userEnv());
    expect(doctor.code).toBe(0);
    expect(doctor.stdout.split("\n").filter((line) => line.startsWith("problem"))).toEqual([]);
    expect(doctor.stdout.split("\n").filter((line) => line.startsWith("ok hooks"))).toHaveLength(3);

    // Every file but the mail, and the log of agentmail's calls the shim on PATH keeps (doctor calls it too).
    const files = () => ({
      repo: contents(world.repo.dir, (path) => path.startsWith(".git/mail/")),
      home: contents(world.home, (path) => path === "agentmail-calls.log"),
    });
    const before = files();
    const again = await setup();
    expect(again.code).toBe(0);
    expect(again.report.agents.flatMap((each) => each.files.map((file) => file.action)).every((action) => action === "unchanged")).toBe(
      true,
    );
    expect(again.report.mailman).toEqual({ action: "running", pid: first.report.mailman.pid });
    expect(files()).toEqual(before);
  });

  /** Each CLI's headless run against the mock, and its word that the run ended well. */
  const drivers: Record<
    AgentCli,
    { env: () => Record<string, string>; argv: (prompt: string) => string[]; ok: (run: AgentRun) => boolean }
  > = {
    claude: {
      env: () => claudeEnv(world),
      argv: (prompt) => [
        binaries.get("claude")!,
        "-p",
        prompt,
        "--output-format",
        "stream-json",
        "--verbose",
        "--allowedTools",
        "mcp__agentmail",
      ],
      ok: claudeSucceeded,
    },
    codex: {
      env: () => ({ OPENAI_API_KEY: "dummy" }),
      argv: (prompt) => [binaries.get("codex")!, "exec", "--skip-git-repo-check", prompt],
      ok: (run) => run.stdout.trim() !== "" && !/^ERROR/m.test(run.stderr),
    },
    gemini: {
      env: () => ({
        GOOGLE_GEMINI_BASE_URL: world.mock.url,
        GEMINI_API_KEY: "dummy",
        GEMINI_CLI_NO_RELAUNCH: "true",
        GEMINI_CLI_TRUST_WORKSPACE: "true",
      }),
      argv: (prompt) => [binaries.get("gemini")!, "-p", prompt, "-o", "json"],
      ok: (run) => {
        try {
          return typeof JSON.parse(run.stdout).response === "string";
        } catch {
          return false;
        }
      },
    },
  };
  const carries = (body: unknown, text: string) => JSON.stringify(body).includes(JSON.stringify(text).slice(1, -1));

  for (const agent of AGENT_CLIS) {
    test(`${agent}: with only what setup wrote, its hooks run: the onboarding reaches the model, mail sent mid-turn arrives at its end`, async () => {
      expect((await setup()).code).toBe(0);
      const body = `Rebase onto main before you push (setup-${agent}).`;
      world.mock.script(
        async () => {
          await world.send(SENDER, AGENT, body);
          return { text: "Working on it." };
        },
        { text: "Rebased, as the mail asked." },
      );
      const driver = drivers[agent];
      const run = await world.run(driver.argv("Fix the build."), { ...userEnv(), ...driver.env() });
      const diagnosis = `exit ${run.code}\nstderr: ${run.stderr.slice(-2000)}\nstdout: ${run.stdout.slice(-2000)}`;
      expect({ code: run.code, ok: driver.ok(run) }, diagnosis).toEqual({ code: 0, ok: true });
      const [first, second] = world.mock.conversation;
      expect(carries(first?.body, `You are "${AGENT}" (the name of your tmux window).`), "the onboarding in the first request").toBe(true);
      expect(carries(second?.body, body), "the mail in the request after the turn").toBe(true);
      expect(world.mailbox(AGENT).map((message) => message.read_flag)).toEqual([true]);
    });
  }
});
