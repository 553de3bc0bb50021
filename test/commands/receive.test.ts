/**
 * `agentmail receive` end to end: what it prints and marks, oldest first, --json, --wait woken by a send, --hook's exit
 * codes and stderr.
 */
import { beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { HOOK_OPENING, type Running, WINDOW_NAMES } from "../support/e2e.ts";
import { serverWithFreshRepos } from "../support/fresh-repos.ts";
import type { tempRepo } from "../support/repo.ts";
import { outsideTmuxEnv, type TmuxServer } from "../support/tmux-server.ts";
import { waitsOnItsWatch } from "../support/waiters.ts";
import { am, expectSent, oneJson, shown, sleep, start, storedMessages, type Result, sharedSession, waitFor } from "../support/workflow.ts";

const session = sharedSession();
const { inRepo, drain } = session;
let repo: ReturnType<typeof tempRepo>, server: TmuxServer, alice: Record<string, string>, bob: Record<string, string>, outside: string;
beforeAll(() => ({ repo, server, alice, bob, outside } = session));

const bobsMailbox = () => join(repo.mailDir, "bob.jsonl");

describe("receive --json", () => {
  beforeAll(() => drain(bob));

  test("null when nothing is unread", async () => {
    const result = await am(["receive", "--json"], inRepo(bob));
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    expect(oneJson(result)).toBeNull();
  });

  test("the stored fields object, marked read", async () => {
    const id = expectSent(await am(["send", "bob", "fields please"], inRepo(alice)));
    const result = await am(["receive", "--json"], inRepo(bob));
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    const message = oneJson(result) as Record<string, unknown>;
    expect(message).toMatchObject({ id, from: "alice", to: "bob", message: "fields please" });
    for (const field of ["id", "from", "to", "message", "created_at", "read_flag"]) expect(Object.keys(message)).toContain(field);
    expect(typeof message.read_flag).toBe("boolean");
    expect(Number.isFinite(Date.parse(String(message.created_at)))).toBe(true);
    const stored = storedMessages(bobsMailbox()).find((m) => m.id === id)!;
    expect(stored.read_flag).toBe(true);
    expect(message.created_at).toBe(stored.created_at);
    expect(oneJson(await am(["receive", "--json"], inRepo(bob)))).toBeNull();
  });
});

describe("receive --wait", () => {
  beforeAll(() => drain(bob));

  /**
   * Starts a waiting receive as bob and returns once it waits on its watch (it has looked and found nothing:
   * waiters.ts), so that only a wake can bring what is sent next; `ended` says whether it has exited since.
   */
  async function waitingReceive(args: string[]): Promise<{ waiting: Running; ended: () => boolean }> {
    const waiting = start(args, inRepo(bob));
    let exited = false;
    void waiting.done.then(
      () => (exited = true),
      () => (exited = true),
    );
    await waitFor(`\`${args.join(" ")}\` to wait on its watch`, () => exited || waitsOnItsWatch(waiting.pid));
    expect(exited).toBe(false);
    return { waiting, ended: () => exited };
  }

  /**
   * Sends to a waiting receive and returns both results. The waits are long (45 s, or none) so that a slow machine's
   * send still lands within them; the wake ends them at once. `stillAfterMs`: it is also still waiting after that
   * long, so it has no short deadline of its own.
   */
  async function wakeBySend(args: string[], body: string, stillAfterMs = 0): Promise<{ waited: Result; id: string }> {
    const { waiting, ended } = await waitingReceive(args);
    if (stillAfterMs > 0) await sleep(stillAfterMs);
    expect(ended()).toBe(false);
    const id = expectSent(await am(["send", "bob", body], inRepo(alice)));
    const waited = await waiting.done;
    return { waited, id };
  }

  test("--wait 45 blocks while nothing is unread; a send from another window wakes it", async () => {
    const { waited, id } = await wakeBySend(["receive", "--wait", "45"], "wake up");
    expect({ code: waited.code, stdout: waited.stdout, stderr: waited.stderr }).toEqual({
      code: 0,
      stdout: shown("alice", id, "wake up"),
      stderr: "",
    });
    expect(storedMessages(bobsMailbox()).find((m) => m.id === id)!.read_flag).toBe(true);
  });

  test("--wait without a number waits (still waiting 1.5 s after it began) until a message comes", async () => {
    const { waited, id } = await wakeBySend(["receive", "--wait"], "no deadline", 1_500);
    expect({ code: waited.code, stdout: waited.stdout, stderr: waited.stderr }).toEqual({
      code: 0,
      stdout: shown("alice", id, "no deadline"),
      stderr: "",
    });
  });

  test("--wait 45 --json prints the woken message as JSON", async () => {
    const { waited, id } = await wakeBySend(["receive", "--wait", "45", "--json"], "json wake");
    expect(waited.code).toBe(0);
    expect(oneJson(waited)).toMatchObject({ id, from: "alice", to: "bob", message: "json wake" });
  });

  test("--wait 1 with nothing arriving: No unread messages, exit 0 (--json: null)", async () => {
    const [plain, json] = await Promise.all([
      am(["receive", "--wait", "1"], inRepo(bob)),
      am(["receive", "--wait", "1", "--json"], inRepo(bob)),
    ]);
    expect({ code: plain.code, stdout: plain.stdout, stderr: plain.stderr }).toEqual({
      code: 0,
      stdout: "No unread messages\n",
      stderr: "",
    });
    expect(json.code).toBe(0);
    expect(oneJson(json)).toBeNull();
  });

  test("--wait with mail already unread returns it at once (oldest first)", async () => {
    const first = expectSent(await am(["send", "bob", "first"], inRepo(alice)));
    expectSent(await am(["send", "bob", "second"], inRepo(alice)));
    const result = await am(["receive", "--wait", "10"], inRepo(bob));
    expect(result.stdout).toBe(shown("alice", first, "first"));
    expect(result.stderr).toBe("1 more unread; run agentmail receive again\n");
    await drain(bob);
  });

  test("a message for another agent neither ends the wait nor is shown by it; the agent's own message then is", async () => {
    const { waiting } = await waitingReceive(["receive", "--wait", "45"]);
    expectSent(await am(["send", "carol", "not for bob"], inRepo(alice)));
    const id = expectSent(await am(["send", "bob", "for bob"], inRepo(alice)));
    const result = await waiting.done;
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: shown("alice", id, "for bob") });
  });
});

describe("receive --hook", () => {
  beforeAll(() => drain(bob));

  const silentZero = (result: Result) =>
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
      code: 0,
      stdout: "",
      stderr: "",
    });

  test("unread mail: stderr starts 'You got new mail', the message follows, exit 2, marked read", async () => {
    const id = expectSent(await am(["send", "bob", "hook body"], inRepo(alice)));
    const result = await am(["receive", "--hook"], inRepo(bob));
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 2, stdout: "" });
    expect(result.stderr.startsWith("You got new mail")).toBe(true);
    expect(result.stderr).toContain(shown("alice", id, "hook body"));
    expect(storedMessages(bobsMailbox()).find((m) => m.id === id)!.read_flag).toBe(true);
    silentZero(await am(["receive", "--hook"], inRepo(bob)));
  });

  test("no mail: no output at all, exit 0", async () => {
    silentZero(await am(["receive", "--hook"], inRepo(bob)));
  });

  test("outside tmux (no TMUX): no output, exit 0, the mail stays unread", async () => {
    const id = expectSent(await am(["send", "bob", "kept for later"], inRepo(alice)));
    silentZero(await am(["receive", "--hook"], inRepo(outsideTmuxEnv())));
    silentZero(await am(["receive", "--hook"], inRepo(outsideTmuxEnv({ TMUX_PANE: server.agent("bob").paneId }))));
    expect(storedMessages(bobsMailbox()).find((m) => m.id === id)!.read_flag).toBe(false);
  });

  test("cwd outside a git repository without AGENTMAIL_DIR: no output, exit 0", async () => {
    silentZero(await am(["receive", "--hook"], { env: bob, cwd: outside }));
  });

  test("a malformed or dead TMUX_PANE, or an unusable AGENTMAIL_DIR: no output, exit 0", async () => {
    silentZero(await am(["receive", "--hook"], inRepo({ ...bob, TMUX_PANE: "bogus" })));
    silentZero(await am(["receive", "--hook"], inRepo({ ...bob, TMUX_PANE: "%9999" })));
    silentZero(await am(["receive", "--hook"], inRepo({ ...bob, AGENTMAIL_DIR: "/proc/1/agentmail-cannot-be-here" })));
  });

  test("the mail left unread above is delivered by the next hook in tmux", async () => {
    const result = await am(["receive", "--hook"], inRepo(bob));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("kept for later");
  });
});

/** Each test below in a fresh repository: what receive prints and marks, FIFO order, --json and --hook. */
describe("receive, each test in a fresh repository", () => {
  const world = serverWithFreshRepos("agentmail-home-", WINDOW_NAMES);
  let repo: ReturnType<typeof tempRepo>;
  beforeEach(() => ({ repo } = world));
  const { env, box, send, receive } = world;

  test("prints the oldest unread message, then marks it read in the file", async () => {
    const id = expectSent(await send("alice", ["bob", "hello bob"]));
    const result = await receive("bob");
    expect(result).toMatchObject({ code: 0, stdout: shown("alice", id, "hello bob"), stderr: "" });
    const [stored] = storedMessages(box("bob"));
    expect(stored).toMatchObject({ id, from: "alice", to: "bob", message: "hello bob", read_flag: true });
  });

  test("No unread messages: exit 0", async () => {
    expect(await receive("bob")).toMatchObject({ code: 0, stdout: "No unread messages\n", stderr: "" });
    expectSent(await send("alice", ["bob", "one"]));
    await receive("bob");
    expect(await receive("bob")).toMatchObject({ code: 0, stdout: "No unread messages\n", stderr: "" });
  });

  test("FIFO across senders", async () => {
    const sent: Array<[string, string, string]> = [];
    for (const [from, body] of [
      ["alice", "first"],
      ["carol", "second"],
      ["alice", "third"],
      ["reviewer", "fourth"],
    ] as const) {
      sent.push([from, expectSent(await send(from, ["bob", body])), body]);
    }
    for (const [from, id, body] of sent) expect((await receive("bob")).stdout).toBe(shown(from, id, body));
    expect((await receive("bob")).stdout).toBe("No unread messages\n");
    expect(storedMessages(box("bob")).map((m) => m.read_flag)).toEqual([true, true, true, true]);
  });

  test("messages that arrive after a receive are still delivered in order", async () => {
    const a = expectSent(await send("alice", ["bob", "a"]));
    expect((await receive("bob")).stdout).toBe(shown("alice", a, "a"));
    const b = expectSent(await send("alice", ["bob", "b"]));
    const c = expectSent(await send("carol", ["bob", "c"]));
    expect((await receive("bob")).stdout).toBe(shown("alice", b, "b"));
    expect((await receive("bob")).stdout).toBe(shown("carol", c, "c"));
    expect((await receive("bob")).stdout).toBe("No unread messages\n");
  });

  test("each agent reads only its own mailbox", async () => {
    const toBob = expectSent(await send("alice", ["bob", "for bob"]));
    const toCarol = expectSent(await send("alice", ["carol", "for carol"]));
    expect((await receive("alice")).stdout).toBe("No unread messages\n");
    expect((await receive("carol")).stdout).toBe(shown("alice", toCarol, "for carol"));
    expect((await receive("bob")).stdout).toBe(shown("alice", toBob, "for bob"));
  });

  test("--json prints the stored fields, then null", async () => {
    const id = expectSent(await send("alice", ["bob", "json body"]));
    const before = storedMessages(box("bob"))[0]!;
    const result = await receive("bob", ["--json"]);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    expect(result.stdout.endsWith("\n")).toBe(true);
    expect(result.stdout.trimEnd().includes("\n")).toBe(false);
    const document = JSON.parse(result.stdout);
    const { read_flag: _ignored, ...fields } = before;
    expect(document).toMatchObject({ ...fields, id, from: "alice", to: "bob", message: "json body" });
    expect(storedMessages(box("bob"))[0]!.read_flag).toBe(true);
    expect(await receive("bob", ["--json"])).toMatchObject({ code: 0, stdout: "null\n", stderr: "" });
  });

  test("with more unread after this one, stderr says how many and to receive again; the last says nothing", async () => {
    const ids = [];
    for (const body of ["one", "two", "three"]) ids.push(expectSent(await send("alice", ["bob", body])));
    expect(await receive("bob")).toMatchObject({
      code: 0,
      stdout: shown("alice", ids[0]!, "one"),
      stderr: "2 more unread; run agentmail receive again\n",
    });
    expect(await receive("bob")).toMatchObject({
      code: 0,
      stdout: shown("alice", ids[1]!, "two"),
      stderr: "1 more unread; run agentmail receive again\n",
    });
    expect(await receive("bob")).toMatchObject({ code: 0, stdout: shown("alice", ids[2]!, "three"), stderr: "" });
  });

  test("--json: stdout stays one document, and the count of more unread goes to stderr", async () => {
    const first = expectSent(await send("alice", ["bob", "one"]));
    expectSent(await send("carol", ["bob", "two"]));
    const result = await receive("bob", ["--json"]);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "1 more unread; run agentmail receive again\n" });
    expect(JSON.parse(result.stdout)).toMatchObject({ id: first, message: "one" });
    expect((await receive("bob", ["--json"])).stderr).toBe("");
  });

  test("the count of more unread includes the mail of bob's roles that his next receive takes", async () => {
    expect((await am(["join", "triage"], { env: env("bob"), cwd: repo.dir })).code).toBe(0);
    const ids = [expectSent(await send("alice", ["bob", "own"])), expectSent(await send("alice", ["role:triage", "for the role"]))];
    expect(await receive("bob")).toMatchObject({
      stdout: shown("alice", ids[0]!, "own"),
      stderr: "1 more unread; run agentmail receive again\n",
    });
    expect((await receive("bob")).stdout).toContain("for the role");
  });

  test("mail whose time to live ran out: inbox does not list it and says so; receive returns it and says what it returned", async () => {
    const stale = expectSent(await send("alice", ["bob", "stale", "--ttl", "1s"]));
    const fresh = expectSent(await send("carol", ["bob", "fresh"]));
    const expiresAt = Date.parse(String(storedMessages(box("bob"))[0]!.expires_at));
    await waitFor("the message's time to live to run out", () => Date.now() > expiresAt + 50);
    const inbox = await am(["inbox", "--json"], { env: env("bob"), cwd: repo.dir });
    expect((JSON.parse(inbox.stdout) as { id: string }[]).map((message) => message.id)).toEqual([fresh]);
    expect(inbox.stderr).toBe(
      "1 unread message whose time to live ran out is not listed: receive returns such mail to its sender instead of showing it\n",
    );
    expect((await receive("bob", ["--peek", "--json"])).stdout).toContain(`"id":"${fresh}"`);
    const received = await receive("bob");
    expect(received).toMatchObject({ code: 0, stdout: shown("carol", fresh, "fresh") });
    expect(received.stderr).toMatch(new RegExp(`^returned ${stale} to alice: its time to live ran out at \\S+, unread\\n$`));
    expect(storedMessages(box("alice")).map((message) => [message.from, message.type, message.bounce_of])).toEqual([
      ["agentmail", "bounce", stale],
    ]);
  });

  test("--json when the store does not exist yet prints null", async () => {
    expect(await receive("bob", ["--json"])).toMatchObject({ code: 0, stdout: "null\n", stderr: "" });
  });

  describe("--hook", () => {
    test("with mail: stderr starts with 'You got new mail', exit 2, message marked read", async () => {
      const id = expectSent(await send("alice", ["bob", "hook body"]));
      const result = await receive("bob", ["--hook"]);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr.startsWith("You got new mail")).toBe(true);
      expect(result.stderr).toContain(id);
      expect(result.stderr).toContain("hook body");
      expect(result.stderr).toContain("alice");
      expect(storedMessages(box("bob"))[0]).toMatchObject({ id, read_flag: true });
      expect(await receive("bob", ["--hook"])).toMatchObject({ code: 0, stdout: "", stderr: "" });
      expect((await receive("bob")).stdout).toBe("No unread messages\n");
    });

    test("one hook call shows the unread mail within the budget, oldest first, each marked read", async () => {
      const first = expectSent(await send("alice", ["bob", "one"]));
      const second = expectSent(await send("carol", ["bob", "two"]));
      const a = await receive("bob", ["--hook"]);
      expect(a).toMatchObject({ code: 2, stderr: `${HOOK_OPENING}\n${shown("alice", first, "one")}\n${shown("carol", second, "two")}` });
      expect(await receive("bob", ["--hook"])).toMatchObject({ code: 0, stderr: "" });
    });

    test("over the budget's message count, the rest is listed by subject, announced once, and left for receive", async () => {
      const first = expectSent(await send("alice", ["bob", "one"]));
      const second = expectSent(await send("carol", ["bob", "-s", "Build is red", "two"]));
      const one = { env: { ...env("bob"), AGENTMAIL_DELIVERY_MESSAGES: "1" }, cwd: repo.dir };
      const a = await am(["receive", "--hook"], one);
      const list = `(1 more unread, not shown here: run agentmail receive to read each)\n- ${second} from carol: Build is red\n`;
      expect(a).toMatchObject({ code: 2, stderr: `${HOOK_OPENING}\n${shown("alice", first, "one")}\n${list}` });
      // Announced: no hook brings it again; receive does.
      expect(await am(["receive", "--hook"], one)).toMatchObject({ code: 0, stderr: "" });
      expect((await receive("bob")).stdout).toContain(`ID: ${second}\n`);
    });

    test("a body over the budget's characters is cut, saying how to read it whole; read shows all of it", async () => {
      const body = "z".repeat(10_000);
      const id = expectSent(await send("alice", ["bob"], body));
      const hook = await receive("bob", ["--hook"]);
      expect(hook.code).toBe(2);
      expect(hook.stderr.length).toBeLessThan(4100);
      expect(hook.stderr).toContain(`of 10000 characters shown; the whole message: agentmail read ${id}]`);
      expect((await receive("bob", [])).stdout).toBe("No unread messages\n");
      expect((await am(["read", id], { env: env("bob"), cwd: repo.dir })).stdout).toContain(body);
    });

    test("with no mail: no output, exit 0", async () => {
      expect(await receive("bob", ["--hook"])).toMatchObject({ code: 0, stdout: "", stderr: "" });
      expectSent(await send("alice", ["carol", "not for bob"]));
      expect(await receive("bob", ["--hook"])).toMatchObject({ code: 0, stdout: "", stderr: "" });
    });

    test("outside tmux: no output, exit 0, mail left unread", async () => {
      expectSent(await send("alice", ["bob", "waiting"]));
      expect(await am(["receive", "--hook"], { env: outsideTmuxEnv(), cwd: repo.dir })).toMatchObject({ code: 0, stdout: "", stderr: "" });
      expect(storedMessages(box("bob"))[0]!.read_flag).toBe(false);
    });
  });
});
