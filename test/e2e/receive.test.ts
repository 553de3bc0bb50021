/** `agentmail receive` end to end: --json, --wait woken by a send, --hook's exit codes and stderr. */
import { beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { tempRepo } from "../support/repo.ts";
import { outsideTmuxEnv, type TmuxServer } from "../support/tmux-server.ts";
import { am, expectSent, oneJson, shown, sleep, start, storedMessages, type Result, sharedSession } from "../support/workflow.ts";

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
   * Starts a waiting receive, checks it is still blocked after a while, then sends and returns both results. The
   * waits are long (45 s) so that a slow machine's send still lands within them; the wake ends them at once.
   */
  async function wakeBySend(args: string[], body: string, delayMs = 300): Promise<{ waited: Result; id: string }> {
    const waiting = start(args, inRepo(bob));
    let exited = false;
    void waiting.done.then(
      () => (exited = true),
      () => (exited = true),
    );
    await sleep(delayMs);
    expect(exited).toBe(false);
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

  test("--wait without a number waits (still blocked after 1.5 s) until a message comes", async () => {
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

  test("a message for another agent does not wake the wait", async () => {
    const result = await (async () => {
      const waiting = start(["receive", "--wait", "1"], inRepo(bob));
      await sleep(300);
      expectSent(await am(["send", "carol", "not for bob"], inRepo(alice)));
      return waiting.done;
    })();
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "No unread messages\n" });
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
