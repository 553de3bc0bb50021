/**
 * `agentmail web` and `agentmail watch --json` run through the command tree in process, served until stopped as
 * Ctrl-C or a SIGTERM stops them (the signal's event, emitted in this process); and the room they open
 * (src/actions/room.ts): the person registered while a view that writes runs, renewed, offline when it ends; how the
 * mailman reaches each agent. The real browser and terminal are in test/commands/web.test.ts and
 * test/commands/watch.test.ts.
 */
import { afterEach, beforeEach, describe, expect, jest, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { leaveRoom, openRoom } from "../../../src/actions/room.ts";
import { createMessage } from "../../../src/mail/message.ts";
import { FileStore } from "../../../src/store/file/file-store.ts";
import { claimMailman, releaseMailman, writeMailmanState } from "../../../src/mailman/files.ts";
import { ensureRoot } from "../../../src/store/paths.ts";
import { readStatus, writeStatus } from "../../../src/store/file/status.ts";
import { runInProcess, type Captured } from "../../support/in-process.ts";
import { tempRepo } from "../../support/repo.ts";
import { waitFor, waitForTurns } from "../../support/workflow.ts";

const SIGNALS = ["SIGTERM", "SIGHUP", "SIGINT"] as const;

let repo: ReturnType<typeof tempRepo>;
beforeEach(() => {
  repo = tempRepo();
  const root = ensureRoot(repo.mailDir);
  writeStatus(root, { name: "alice", status: "ready", pane: "%1" });
  writeStatus(root, { name: "bob", status: "work", pane: "%2" });
});
afterEach(() => repo.remove());

/**
 * A command that serves until a signal, run in process: its stdout as it comes, and `stop(signal)`, which emits the
 * signal's event as the process would get it and waits for the command's end. The listeners the command leaves for
 * the other signals are taken off again, so this process keeps its own handling of them.
 */
function serve(argv: string[], env: Record<string, string> = { AGENTMAIL_HUMAN: "ana" }) {
  const before = new Map(SIGNALS.map((signal) => [signal, process.listeners(signal)]));
  let stdout = "";
  const done = runInProcess(argv, { cwd: repo.dir, env, onStdout: (text) => void (stdout += text) });
  return {
    lines: () => stdout.split("\n").filter(Boolean),
    async stop(signal: (typeof SIGNALS)[number]): Promise<Captured> {
      // The command listens for the signals once it serves; stopped before, it would wait for another one.
      await waitFor(`agentmail ${argv[0]} to listen for ${signal}`, () => process.listenerCount(signal) > before.get(signal)!.length);
      process.emit(signal, signal);
      const result = await Promise.race([done, Bun.sleep(60_000).then(() => null)]);
      for (const each of SIGNALS) {
        for (const listener of process.listeners(each)) if (!before.get(each)!.includes(listener)) process.off(each, listener);
      }
      if (result === null) throw new Error(`timed out after 60 s waiting for agentmail ${argv[0]} to stop on ${signal}`);
      return result;
    },
  };
}

describe("agentmail web", () => {
  test("serves the room at the URL it prints, with a fresh token each run; the person is registered while it runs, offline after", async () => {
    const web = serve(["web", "--json"]);
    const first = JSON.parse(await waitFor("the URL", () => web.lines()[0]));
    expect(first).toEqual({
      url: `http://127.0.0.1:${first.port}/?token=${first.token}`,
      port: expect.any(Number),
      token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      read_only: false,
      human: "ana",
    });
    expect((await fetch(first.url)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${first.port}/`)).status).toBe(403);
    const room = (await (await fetch(`http://127.0.0.1:${first.port}/api/room?token=${first.token}`)).json()) as {
      agents: { name: string; human: boolean }[];
    };
    expect(room.agents.map((agent) => [agent.name, agent.human])).toEqual(
      expect.arrayContaining([
        ["alice", false],
        ["ana", true],
      ]),
    );
    expect(readStatus(repo.mailDir, "ana")).toMatchObject({ status: "ready" });
    const sent = await fetch(`http://127.0.0.1:${first.port}/api/send`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-agentmail-token": first.token },
      body: JSON.stringify({ to: "bob", body: "from the page" }),
    });
    const { id } = (await sent.json()) as { id: string };
    expect((await new FileStore(repo.mailDir).find("bob", id))!.message).toMatchObject({ from: "ana", message: "from the page" });

    const stopped = await web.stop("SIGINT");
    expect(stopped.code).toBe(0);
    expect(stopped.stderr).toContain(`serving the mail room of file ${repo.mailDir} on 127.0.0.1:${first.port}; Ctrl-C stops it`);
    expect(readStatus(repo.mailDir, "ana")).toMatchObject({ status: "offline" });
    expect(await fetch(first.url).catch(() => "refused")).toBe("refused");

    // --read-only: the URL as a line, another token; the person is not registered and every write is refused.
    const readOnly = serve(["web", "--read-only", "--as", "carol"]);
    const url = new URL(await waitFor("the URL", () => readOnly.lines()[0]));
    expect(url.searchParams.get("token")).not.toBe(first.token);
    const refused = await fetch(new URL("/api/send", url), {
      method: "POST",
      headers: { "content-type": "application/json", "x-agentmail-token": url.searchParams.get("token")! },
      body: JSON.stringify({ to: "bob", body: "x" }),
    });
    expect(refused.status).toBe(403);
    expect((await readOnly.stop("SIGTERM")).code).toBe(0);
    expect(readStatus(repo.mailDir, "carol")).toBeNull();
  });
});

describe("agentmail watch --json", () => {
  test("streams the room's events, one JSON document a line, from the agents on, until SIGTERM", async () => {
    const watch = serve(["watch", "--json"]);
    const agents = JSON.parse(await waitFor("the agents", () => watch.lines()[0]));
    expect(agents.event).toBe("agents");
    expect(agents.agents.map((agent: { name: string }) => agent.name)).toEqual(expect.arrayContaining(["alice", "bob"]));
    const message = createMessage("alice", "bob", "streamed", new Date(), { subject: "live" });
    await new FileStore(repo.mailDir).append(message);
    const mail = await waitFor("the new mail's event", () =>
      watch
        .lines()
        .map((line) => JSON.parse(line))
        .find((event) => event.event === "mail"),
    );
    expect(mail.item).toMatchObject({ id: message.id, mailbox: "bob", from: "alice", subject: "live" });
    const stopped = await watch.stop("SIGTERM");
    expect(stopped).toMatchObject({ code: 0, stderr: "" });
    // A stream registers nobody: the person only reads.
    expect(readStatus(repo.mailDir, "ana")).toBeNull();
  });
});

describe("the room", () => {
  const invocation = () => ({ cwd: repo.dir, env: { HOME: repo.dir, PATH: process.env.PATH } as Record<string, string | undefined> });
  const reach = async () => {
    const once = await runInProcess(["watch", "--once", "--json"], { cwd: repo.dir, env: { AGENTMAIL_HUMAN: "ana" } });
    return Object.fromEntries(
      (JSON.parse(once.stdout).agents as { name: string; reach: string }[]).map((agent) => [agent.name, agent.reach]),
    );
  };

  test("says how mail reaches each agent: pulled without a mailman; with one, by it, or why it does not", async () => {
    writeStatus(repo.mailDir, { name: "carol", status: "ready", pane: "%3" });
    expect(await reach()).toEqual({ alice: "pull", bob: "pull", carol: "pull", ana: "room" });
    await claimMailman(repo.mailDir);
    try {
      const since = new Date().toISOString();
      writeMailmanState(repo.mailDir, {
        last_action: null,
        last_action_at: null,
        reminders: 1,
        agents: {
          alice: { outcome: "reminded", detail: "typed into %1", since, last_reminded_at: since },
          bob: { outcome: "no_agent_pane", detail: "no agent CLI in %2", since, last_reminded_at: null },
        },
      });
      expect(await reach()).toEqual({ alice: "mailman", bob: "mailman: no agent pane", carol: "mailman", ana: "room" });
    } finally {
      releaseMailman(repo.mailDir);
    }
  });

  test("a view that writes registers the person, renews that every 15 minutes while it runs; leaving ends it, offline", async () => {
    // Fake timers (and clock): the 15 minutes pass at once. Real I/O still completes between turns of the event loop.
    jest.useFakeTimers();
    try {
      const timers = jest.getTimerCount();
      const room = await openRoom(invocation(), "ana", { register: true });
      const registered = readStatus(repo.mailDir, "ana")!;
      expect(registered.status).toBe("ready");
      jest.advanceTimersByTime(15 * 60_000);
      const renewed = await waitForTurns("the registration renewed", () => {
        const now = readStatus(repo.mailDir, "ana")!;
        return now.updated_at !== registered.updated_at ? now : null;
      });
      expect(renewed.status).toBe("ready");
      expect(Date.parse(renewed.updated_at) - Date.parse(registered.updated_at)).toBe(15 * 60_000);
      await leaveRoom(invocation(), room, "ana");
      expect(readStatus(repo.mailDir, "ana")!.status).toBe("offline");
      // Nothing is left to register them again.
      expect(jest.getTimerCount()).toBe(timers);
    } finally {
      jest.useRealTimers();
    }
  });

  test("leaving ends the view even when the store can no longer take the person's offline mark", async () => {
    const room = await openRoom(invocation(), "ana", { register: true });
    rmSync(repo.mailDir, { recursive: true });
    writeFileSync(repo.mailDir, "not a directory any more\n");
    expect(await leaveRoom(invocation(), room, "ana")).toBeUndefined();
  });
});
