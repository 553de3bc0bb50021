/**
 * Nothing started by hand: an agent's session start (`onboard`, what agentmail's SessionStart hooks run) brings up the
 * store's mailman when none runs, and `mailman status` and `doctor` say who started it. It gets the agent's
 * environment less its secrets, gives way to a mailman started by hand, is not brought up again once stopped by hand,
 * and ends when its tmux server is gone. A send brings it up too, when agentmail's hooks are installed and the
 * recipient's window holds an agent CLI with a channel (a Codex TUI runs its SessionStart hooks only with its first turn).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fakeClaude, installFakeAgents, startFakeAgent } from "../../support/fake-agent.ts";
import { tempRepo } from "../../support/repo.ts";
import { TmuxServer } from "../../support/tmux-server.ts";
import { alive, am, killPid, oneJson, printedPid, waitFor } from "../../support/workflow.ts";

interface Status {
  running: boolean;
  pid: number | null;
  started_by: { how: string; agent?: string; pane?: string } | null;
  stopped_by_hand: string | null;
}

let repo: ReturnType<typeof tempRepo>;
let server: TmuxServer;
const seen = new Set<number>();
const env = (who: string, extra: Record<string, string> = {}) => ({ env: { ...server.agent(who).env, ...extra }, cwd: repo.dir });

async function status(): Promise<Status> {
  const report = oneJson(await am(["mailman", "status", "--json"], env("alice"))) as Status;
  if (report.pid) seen.add(report.pid);
  return report;
}

beforeAll(() => {
  repo = tempRepo();
  server = TmuxServer.start(["alice", "bob"], repo.dir);
});

afterAll(async () => {
  await am(["mailman", "stop"], env("alice")).catch(() => null);
  for (const pid of seen) if (alive(pid)) killPid(pid);
  server.stop();
  repo.remove();
});

describe("an agent's session start and the mailman", () => {
  test("onboard brings up the store's mailman when none runs; status and doctor say who started it", async () => {
    expect((await status()).running).toBe(false);
    expect((await am(["onboard"], env("bob", { ANTHROPIC_API_KEY: "sk-secret-of-bob" }))).code).toBe(0);
    const report = await waitFor("the mailman registered", async () => {
      const now = await status();
      return now.running ? now : null;
    });
    expect(report!.started_by).toEqual({ how: "session-start", agent: "bob", pane: server.agent("bob").paneId });
    const text = (await am(["mailman", "status"], env("alice"))).stdout;
    expect(text).toContain(`, started by the session start of "bob" (pane ${server.agent("bob").paneId})\n`);
    const doctor = (await am(["doctor"], env("alice"))).stdout;
    expect(doctor).toMatch(
      new RegExp(`ok mailman: the mailman runs for this store \\(pid ${report!.pid} on .+, started by the session start of "bob"`),
    );
    // The agent's secrets stay with the agent: the mailman has only what agentmail reads.
    const environ = readFileSync(`/proc/${report!.pid}/environ`, "utf8");
    expect(environ).not.toContain("sk-secret-of-bob");
    expect(environ).toContain(`TMUX=${server.agent("bob").env.TMUX}`);
    // A second session start leaves the running one alone.
    expect((await am(["onboard"], env("alice"))).code).toBe(0);
    expect((await status()).pid).toBe(report!.pid);
  });

  test("a mailman started by hand replaces it; once stopped by hand, session starts leave it stopped", async () => {
    const before = (await status()).pid!;
    const started = await am(["mailman", "--daemon", "--sweep", "0.5"], env("alice"));
    expect(started.code).toBe(0);
    const byHand = printedPid(started.stdout)!;
    seen.add(byHand);
    expect(byHand).not.toBe(before);
    expect(alive(before)).toBe(false);
    expect(await status()).toMatchObject({ running: true, pid: byHand, started_by: { how: "hand" } });

    expect((await am(["mailman", "stop"], env("alice"))).code).toBe(0);
    expect((await am(["onboard"], env("bob"))).code).toBe(0);
    const stopped = await status();
    expect(stopped.running).toBe(false);
    expect(stopped.stopped_by_hand).toMatch(/^\d{4}-/);
    expect((await am(["mailman", "status"], env("alice"))).stdout).toContain("stopped by hand");
    // Started by hand again, the note goes: the next time it is down, a session start brings it up.
    const again = printedPid((await am(["mailman", "--daemon"], env("alice"))).stdout)!;
    seen.add(again);
    expect((await am(["mailman", "stop"], env("alice"))).code).toBe(0);
    expect((await status()).stopped_by_hand).not.toBeNull();
  });

  test("it ends once its tmux server is gone", async () => {
    const own = TmuxServer.start(["carol"], repo.dir);
    const other = tempRepo();
    try {
      const carol = { env: { ...own.agent("carol").env }, cwd: other.dir };
      expect((await am(["onboard"], carol)).code).toBe(0);
      const pid = await waitFor("the mailman registered", async () => {
        const report = oneJson(await am(["mailman", "status", "--json"], carol)) as Status;
        return report.running ? report.pid : null;
      });
      seen.add(pid!);
      own.stop();
      await waitFor("the mailman ended with its tmux server", () => !alive(pid!), 15_000);
      expect(readFileSync(`${other.mailDir}/.mailman/log`, "utf8")).toContain("stopping: its tmux server");
    } finally {
      own.stop();
      other.remove();
    }
  });
});

describe("a send and the mailman", () => {
  test("brings it up when the hooks are installed and the recipient's window holds Claude Code, which then gets the frame", async () => {
    const other = tempRepo();
    // The windows work in the repository the commands run in: the mailman frames only this project's panes.
    const own = TmuxServer.start(["alice", "dave", "shell"], other.dir);
    try {
      const bin = installFakeAgents(other.dir);
      const config = join(other.dir, "dave-claude");
      await startFakeAgent(own, "dave", `CLAUDE_CONFIG_DIR='${config}' ${fakeClaude(bin, "--inbox")}`);
      const alice = { env: { ...own.agent("alice").env }, cwd: other.dir };
      const running = async () => (oneJson(await am(["mailman", "status", "--json"], alice)) as Status).running;
      // No hooks installed: a send stores the mail and starts nothing.
      expect((await am(["send", "dave", "before the hooks"], alice)).code).toBe(0);
      expect(await running()).toBe(false);
      expect((await am(["hooks", "install", "claude"], alice)).code).toBe(0);
      // Hooks installed, but mail to a shell: nothing to wake.
      expect((await am(["send", "shell", "for a shell"], alice)).code).toBe(0);
      expect(await running()).toBe(false);
      const id = (await am(["send", "dave", "wake up (send-6b1e)"], alice)).stdout.trim();
      const report = await waitFor("the mailman brought up by the send", async () => {
        const now = oneJson(await am(["mailman", "status", "--json"], alice)) as Status;
        return now.running ? now : null;
      });
      seen.add(report!.pid!);
      expect(report!.started_by).toEqual({ how: "send", agent: "alice", pane: own.agent("alice").paneId });
      const frames = join(config, "frames.jsonl");
      await waitFor("the frame in dave's inbox", () => existsSync(frames) && readFileSync(frames, "utf8").includes(id), 30_000);
      expect((await am(["mailman", "status"], alice)).stdout).toContain(
        `, started by a send from "alice" (pane ${own.agent("alice").paneId})\n`,
      );
    } finally {
      await am(["mailman", "stop"], { env: { ...own.agent("alice").env }, cwd: other.dir }).catch(() => null);
      own.stop();
      other.remove();
    }
  });
});
