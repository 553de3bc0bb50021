import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createMessage } from "../../src/core/message.ts";
import { reminderText } from "../../src/core/reminders.ts";
import { runMailman } from "../../src/mailman/service.ts";
import { appendMessage, takeOldestUnread } from "../../src/store/mailbox.ts";
import { claimMailman, readMailmanState, releaseMailman, runningMailman } from "../../src/store/mailman-files.ts";
import { ensureRoot } from "../../src/store/paths.ts";
import { writeStatus } from "../../src/store/status.ts";
import { tempRepo } from "../support/repo.ts";
import { TmuxServer } from "../support/tmux-server.ts";

let repo: ReturnType<typeof tempRepo>;
let server: TmuxServer;
let root: string;

beforeAll(() => {
  repo = tempRepo();
  root = ensureRoot(repo.mailDir);
  server = TmuxServer.start(["human", "2", "-x", "a.b", "busy", "copy", "typing"], repo.dir);
});
afterAll(() => {
  server.stop();
  repo.remove();
});

async function until(check: () => boolean, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await Bun.sleep(25);
  }
  return check();
}

const reminders = (name: string) => server.capture(name).split(reminderText(1)).length - 1 + server.capture(name).split("unread agentmail messages").length - 1;

describe("the mailman", () => {
  test("one mailman per store", async () => {
    await claimMailman(root);
    expect(runningMailman(root)?.pid).toBe(process.pid);
    releaseMailman(root);
    expect(runningMailman(root)).toBeNull();
  });

  test("reminds the right panes by id, once per burst, never busy or copy-mode or half-typed panes", async () => {
    writeStatus(root, "busy", "work", server.agent("busy").paneId);
    server.run(["copy-mode", "-t", server.agent("copy").paneId]);
    server.run(["send-keys", "-t", server.agent("typing").paneId, "-l", "echo half"]);
    for (const name of ["2", "-x", "a.b", "busy", "copy", "typing"]) await appendMessage(root, createMessage("human", name, `hi ${name}`));
    for (let i = 0; i < 20; i++) await appendMessage(root, createMessage("human", "a.b", `burst ${i}`));
    const logs: string[] = [];
    const stop = new AbortController();
    const running = runMailman({ root, env: server.agent("human").env, intervalMs: 60_000, sweepMs: 100, log: (line) => logs.push(line), signal: stop.signal });
    try {
      expect(await until(() => server.capture("2").includes(reminderText(1)))).toBe(true);
      expect(await until(() => server.capture("-x").includes(reminderText(1)))).toBe(true);
      expect(await until(() => server.capture("a.b").includes("21 unread agentmail messages"))).toBe(true);
      await Bun.sleep(400);
      expect(reminders("a.b")).toBe(1);
      expect(server.capture("busy")).not.toContain("unread agentmail");
      expect(server.capture("typing")).not.toContain("unread agentmail");
      expect(logs.some((line) => line.includes("copy mode"))).toBe(true);
      expect(logs.some((line) => line.includes("half-typed"))).toBe(true);
      server.run(["send-keys", "-t", server.agent("copy").paneId, "-X", "cancel"]);
      server.run(["send-keys", "-t", server.agent("typing").paneId, "C-u"]);
      expect(await until(() => server.capture("copy").includes(reminderText(1)))).toBe(true);
      expect(await until(() => server.capture("typing").includes(reminderText(1)))).toBe(true);
      expect(readMailmanState(root)?.last_action).toContain("reminded");
    } finally {
      stop.abort();
      await running;
    }
  });

  test("reminds again after the interval while mail stays unread, and forgets read mail and vanished windows", async () => {
    const agent = server.addWindow("later", repo.dir);
    await appendMessage(root, createMessage("human", "later", "x"));
    await appendMessage(root, createMessage("human", "ghost", "nobody reads this"));
    const logs: string[] = [];
    const stop = new AbortController();
    const running = runMailman({ root, env: agent.env, intervalMs: 300, sweepMs: 50, log: (line) => logs.push(line), signal: stop.signal });
    try {
      expect(await until(() => server.capture("later").split(reminderText(1)).length - 1 >= 2)).toBe(true);
      expect(logs.some((line) => line.includes('dropped "ghost"'))).toBe(true);
      expect(logs.filter((line) => line.includes('dropped "ghost"')).length).toBe(1);
      await takeOldestUnread(root, "later", () => {});
      await Bun.sleep(200);
      const count = server.capture("later").split(reminderText(1)).length;
      await Bun.sleep(500);
      expect(server.capture("later").split(reminderText(1)).length).toBe(count);
    } finally {
      stop.abort();
      await running;
    }
  });
});
