/**
 * The mailman as a process, in process: the daemon started from the compiled binary and stopped again, a daemon
 * that cannot start, the foreground command stopped by a signal, and the tmux calls it makes failing cleanly.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { mailmanStatus, startMailman, stopMailman } from "../../../src/actions/mailman.ts";
import { createMessage } from "../../../src/mail/message.ts";
import { selfCommand, startDaemon, stopDaemon } from "../../../src/mailman/daemon.ts";
import { appendMessage, takeOldestUnread } from "../../../src/store/file/mailbox.ts";
import { mailmanLogPath, runningMailman } from "../../../src/mailman/files.ts";
import { ensureRoot } from "../../../src/store/paths.ts";
import { isGone } from "../../../src/store/durable/process-identity.ts";
import { listAllPanes, textBeforeCursor, typeLine } from "../../../src/tmux/windows.ts";
import { fakeClaude, installFakeAgents, startFakeAgent } from "../../support/fake-agent.ts";
import { runInProcess } from "../../support/in-process.ts";
import { BINARY, tempRepo } from "../../support/repo.ts";
import { outsideTmuxEnv, TmuxServer } from "../../support/tmux-server.ts";
import { waitFor } from "../../support/workflow.ts";

let repo: ReturnType<typeof tempRepo>;
let server: TmuxServer;
let root: string;

beforeAll(async () => {
  repo = tempRepo();
  root = ensureRoot(repo.mailDir);
  server = TmuxServer.start(["boss"], repo.dir);
  await startFakeAgent(server, "boss", fakeClaude(installFakeAgents(repo.dir)));
});
afterAll(() => {
  server.stop();
  repo.remove();
});

describe("the mailman daemon", () => {
  test("starts detached, registers, and stops leaving no process", async () => {
    const started = await startDaemon(root, ["--interval", "60", "--sweep", "0.2"], server.agent("boss").env, [BINARY]);
    expect(runningMailman(root)?.pid).toBe(started.pid);
    expect(existsSync(mailmanLogPath(root))).toBe(true);
    await stopDaemon(started);
    // Gone at once, or (SIGKILLed after its grace on a loaded machine) a moment later.
    await waitFor("the stopped daemon to be gone", () => isGone(started));
    expect(runningMailman(root)).toBeNull();
  });

  test("a second start is refused first, naming the running pid, before its log is opened or a child spawned", async () => {
    const logged = () => (existsSync(mailmanLogPath(root)) ? readFileSync(mailmanLogPath(root), "utf8") : "");
    const before = logged();
    const started = await startDaemon(root, ["--interval", "60", "--sweep", "0.2"], server.agent("boss").env, [BINARY]);
    try {
      // The running mailman's own start-up line comes after startDaemon returns: the log compared is the one after it.
      await waitFor("the running mailman to log that it watches", () => logged().slice(before.length).includes("watching "));
      const log = logged();
      const refusal = startDaemon(root, [], server.agent("boss").env, ["false"]);
      const message = `a mailman already runs for this store (pid ${started.pid}); stop it with 'agentmail mailman stop'`;
      await expect(refusal).rejects.toThrow(message);
      expect(readFileSync(mailmanLogPath(root), "utf8")).toBe(log);
    } finally {
      await stopDaemon(started);
    }
  });

  test("two starting at once: the one that loses the pid file says first that the other runs", async () => {
    const env = server.agent("boss").env;
    const results = await Promise.allSettled([0, 1].map(() => startDaemon(root, ["--interval", "60", "--sweep", "0.2"], env, [BINARY])));
    const won = results.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
    try {
      expect(won.length).toBe(1);
      const lost = results.find((result) => result.status === "rejected") as PromiseRejectedResult;
      expect(String(lost.reason.message)).toStartWith(`a mailman already runs for this store (pid ${won[0]!.pid})`);
    } finally {
      for (const mailman of won) await stopDaemon(mailman);
    }
  });

  test("the actions layer: start, status lists each agent's last reminder, stop", async () => {
    const boss = server.agent("boss");
    const place = { cwd: repo.dir, env: boss.env };
    await appendMessage(root, createMessage("someone", "boss", "hello"));
    const { mailman, log } = await startMailman(place, { intervalSeconds: 60, sweepSeconds: 0.2, typing: "all" }, [BINARY]);
    try {
      expect(log).toBe(mailmanLogPath(root));
      const reminded = () => mailmanStatus(place).agents.find((agent) => agent.name === "boss")?.outcome === "reminded";
      await waitFor("mailman status to say boss was reminded", reminded, 30_000, 25);
      const status = mailmanStatus(place);
      expect(status).toMatchObject({ running: true, pid: mailman.pid, reminders: 1 });
      const since = expect.any(String);
      const agent = {
        name: "boss",
        outcome: "reminded" as const,
        detail: `in ${boss.paneId}`,
        since,
        last_reminded_at: since,
        channel: null,
      };
      expect(status.agents).toEqual([agent]);
      const env = { TMUX: boss.env.TMUX, TMUX_PANE: boss.env.TMUX_PANE };
      const text = await runInProcess(["mailman", "status"], { env, cwd: repo.dir });
      expect(text.stdout).toContain(`mailman is running (pid ${mailman.pid})`);
      expect(text.stdout).toMatch(new RegExp(`\n  boss: reminded in ${boss.paneId} at \\S+\n`));
    } finally {
      expect(await stopMailman(place)).toEqual({ stopped: true, pid: mailman.pid });
      // Read, so the mailmen of the tests below have nobody to remind.
      await takeOldestUnread(root, "boss", () => {});
    }
    expect(mailmanStatus(place)).toMatchObject({ running: false, pid: null, agents: [] });
  });

  test("a child that dies before registering is reported with its exit code", async () => {
    await expect(startDaemon(root, [], outsideTmuxEnv(), ["false"])).rejects.toThrow(/did not start \(exit 1\)/);
  });

  test("the foreground mailman runs until a signal stops it, then leaves its pid file behind it", async () => {
    const running = runInProcess(["mailman", "--sweep", "0.05", "--interval", "1", "--json"], {
      env: { TMUX: server.agent("boss").env.TMUX, TMUX_PANE: server.agent("boss").env.TMUX_PANE },
      cwd: repo.dir,
    });
    await waitFor("the foreground mailman to record this process's pid", () => runningMailman(root)?.pid === process.pid, 30_000, 20);
    process.kill(process.pid, "SIGTERM");
    const result = await running;
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ running: false, pid: process.pid, reminders: 0 });
    expect(runningMailman(root)).toBeNull();
  });

  test("stop escalates to SIGKILL for a process that ignores SIGTERM, and is quiet about one already gone", async () => {
    const stubborn = Bun.spawn(["sh", "-c", "trap '' TERM; echo ignoring; while :; do sleep 0.05; done"], { stdout: "pipe" });
    // SIGTERM is sent once the trap is set, however long the shell takes to get there.
    const reader = (stubborn.stdout as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("ignoring\n");
    reader.releaseLock();
    const record = { pid: stubborn.pid, host: require("node:os").hostname(), start: null, started_at: "" };
    await stopDaemon(record, 200);
    await stubborn.exited;
    expect(stubborn.signalCode).toBe("SIGKILL");
    await stopDaemon(record, 200);
  });

  test("status and stop when no mailman runs", async () => {
    const env = { TMUX: server.agent("boss").env.TMUX, TMUX_PANE: server.agent("boss").env.TMUX_PANE };
    expect((await runInProcess(["mailman", "status"], { env, cwd: repo.dir })).stdout).toStartWith("mailman is not running");
    expect(JSON.parse((await runInProcess(["mailman", "status", "--json"], { env, cwd: repo.dir })).stdout)).toMatchObject({
      running: false,
      pid: null,
    });
    expect((await runInProcess(["mailman", "stop"], { env, cwd: repo.dir })).stdout).toBe("mailman is not running\n");
    expect(JSON.parse((await runInProcess(["mailman", "stop", "--json"], { env, cwd: repo.dir })).stdout)).toEqual({
      stopped: false,
      pid: null,
    });
  });

  test("the binary's own command line: bun and the script when run from source", () => {
    expect(selfCommand()[0]).toBe(process.execPath);
  });

  test("bad intervals are usage errors", async () => {
    for (const argv of [
      ["mailman", "--interval", "0"],
      ["mailman", "--sweep", "x"],
    ]) {
      const run = await runInProcess(argv, { cwd: repo.dir });
      expect(run.code).toBe(1);
      expect(run.stderr).toStartWith("error: --");
    }
  });
});

describe("tmux calls of the mailman when tmux is gone", () => {
  const dead = outsideTmuxEnv({ TMUX: "/nonexistent/socket,1,0", TMUX_PANE: "%1" });

  test("listing panes gives null, reading a line gives null, typing gives false", async () => {
    expect(await listAllPanes(dead)).toBeNull();
    const pane = {
      paneId: "%1",
      windowId: "@1",
      windowName: "x",
      active: true,
      inMode: false,
      panePid: 1,
      tty: "/dev/pts/0",
      cursorX: 0,
      cursorY: 0,
      path: "",
    };
    expect(await textBeforeCursor(pane, dead)).toBeNull();
    expect(await typeLine("%1", "text", dead)).toBe(false);
    expect(await typeLine("%9999", "text", server.agent("boss").env)).toBe(false);
  });
});
