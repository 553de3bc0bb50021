/**
 * The agent-workflow commands of the compiled binary, end to end in private tmux servers: --help and --json on every
 * command, send's flags and its never reading stdin when the message is given, receive --json / --wait / --hook,
 * recipients with .agentmailignore, status, and onboard.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onTerminal } from "../support/e2e.ts";
import { tempRepo } from "../support/repo.ts";
import { outsideTmuxEnv, TmuxServer } from "../support/tmux-server.ts";
import {
  am,
  expectError,
  expectJsonError,
  expectSent,
  ID,
  oneJson,
  shown,
  sleep,
  start,
  storedMessages,
  type Result,
} from "../support/workflow.ts";

// Generous: a loaded 2-core machine is slow. No test asserts on time.
setDefaultTimeout(30_000);

const COMMANDS: string[][] = [
  ["send"],
  ["receive"],
  ["recipients"],
  ["status"],
  ["onboard"],
  ["cleanup"],
  ["mailman"],
  ["mailman", "stop"],
  ["mailman", "status"],
];

let repo: ReturnType<typeof tempRepo>;
let server: TmuxServer;
let alice: Record<string, string>;
let bob: Record<string, string>;
let outside: string;

beforeAll(() => {
  repo = tempRepo();
  server = TmuxServer.start(["alice", "bob", "carol"], repo.dir);
  alice = server.agent("alice").env;
  bob = server.agent("bob").env;
  outside = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-nogit-")));
});

afterAll(() => {
  server?.stop();
  repo?.remove();
  if (outside) rmSync(outside, { recursive: true, force: true });
});

const inRepo = (env: Record<string, string>) => ({ env, cwd: repo.dir });
const bobsMailbox = () => join(repo.mailDir, "bob.jsonl");

/** Reads every unread message of an agent so a test starts from an empty inbox. */
async function drain(env: Record<string, string>): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    const result = await am(["receive", "--json"], inRepo(env));
    if (result.stdout.trim() === "null" || result.code !== 0) return;
  }
}

describe("--help on every command", () => {
  for (const path of COMMANDS) {
    test(`agentmail ${path.join(" ")} --help: usage on stdout, exit 0, in and outside tmux`, async () => {
      for (const env of [alice, outsideTmuxEnv()]) {
        const result = await am([...path, "--help"], inRepo(env));
        expect({ code: result.code, stderr: result.stderr, timedOut: result.timedOut }).toEqual({ code: 0, stderr: "", timedOut: false });
        expect(result.stdout).toContain(`agentmail ${path.join(" ")}`);
        expect(result.stdout.length).toBeGreaterThan(20);
      }
    });
  }

  test("--help documents the workflow flags", async () => {
    const flags: Record<string, string[]> = {
      send: ["-r", "--recipient", "-m", "--message", "--json"],
      receive: ["--wait", "--hook", "--json"],
      cleanup: ["--stale-hours", "--read-hours", "--dry-run", "--json"],
      mailman: ["--daemon", "--interval", "--sweep", "stop", "status"],
    };
    for (const [command, expected] of Object.entries(flags)) {
      const result = await am([command, "--help"], inRepo(alice));
      for (const flag of expected) expect(result.stdout).toContain(flag);
    }
  });

  test("--help runs nothing: no mail sent, no status set, no mailman started", async () => {
    expect((await am(["send", "bob", "not sent", "--help"], inRepo(alice))).code).toBe(0);
    expect((await am(["status", "work", "--help"], inRepo(alice))).code).toBe(0);
    expect((await am(["mailman", "--daemon", "--help"], inRepo(alice))).code).toBe(0);
    expect(storedMessages(bobsMailbox()).filter((m) => m.message === "not sent")).toEqual([]);
    expect((await am(["status"], inRepo(alice))).stdout).not.toMatch(/^work/);
    const status = oneJson(await am(["mailman", "status", "--json"], inRepo(alice))) as { running: boolean };
    expect(status.running).toBe(false);
  });
});

describe("--json on every command: exactly one JSON document on stdout", () => {
  const successes: [string, string[], Record<string, string> | "outside"][] = [
    ["send", ["send", "bob", "json hello", "--json"], {}],
    ["receive", ["receive", "--json"], {}],
    ["recipients", ["recipients", "--json"], {}],
    ["status (show)", ["status", "--json"], {}],
    ["status ready", ["status", "ready", "--json"], {}],
    ["onboard", ["onboard", "--json"], {}],
    ["onboard outside tmux", ["onboard", "--json"], "outside"],
    ["cleanup --dry-run", ["cleanup", "--dry-run", "--json"], {}],
    ["cleanup outside tmux", ["cleanup", "--dry-run", "--json"], "outside"],
    ["mailman status", ["mailman", "status", "--json"], {}],
    ["mailman stop (none running)", ["mailman", "stop", "--json"], {}],
    ["status ready outside tmux", ["status", "ready", "--json"], "outside"],
  ];
  for (const [label, args, where] of successes) {
    test(`${label}: exit 0`, async () => {
      const result = await am(args, inRepo(where === "outside" ? outsideTmuxEnv() : alice));
      expect(result.code).toBe(0);
      // A warning on stderr is allowed (cleanup outside tmux says it could not ask tmux); an error is not.
      expect(result.stderr).not.toContain("error");
      oneJson(result);
    });
  }

  const failures: [string, string[], Record<string, string> | "outside", number][] = [
    ["send to nobody", ["send", "nobody", "x", "--json"], {}, 1],
    ["send outside tmux", ["send", "bob", "x", "--json"], "outside", 2],
    ["receive outside tmux", ["receive", "--json"], "outside", 2],
    ["receive --wait=abc", ["receive", "--wait=abc", "--json"], {}, 1],
    ["recipients outside tmux", ["recipients", "--json"], "outside", 2],
    ["recipients with a surplus argument", ["recipients", "extra", "--json"], {}, 1],
    ["status bogus", ["status", "bogus", "--json"], {}, 1],
    ["status (show) outside tmux", ["status", "--json"], "outside", 2],
    ["onboard with an unknown flag", ["onboard", "--bogus", "--json"], {}, 1],
    ["cleanup --read-hours -1", ["cleanup", "--read-hours", "-1", "--json"], {}, 1],
    ["cleanup --stale-hours x", ["cleanup", "--stale-hours", "x", "--json"], {}, 1],
    ["mailman --interval 0", ["mailman", "--interval", "0", "--json"], {}, 1],
    ["mailman --sweep x", ["mailman", "--daemon", "--sweep", "x", "--json"], {}, 1],
    ["mailman stop with an unknown flag", ["mailman", "stop", "--bogus", "--json"], {}, 1],
    ["mailman status with an unknown flag", ["mailman", "status", "--bogus", "--json"], {}, 1],
  ];
  for (const [label, args, where, code] of failures) {
    test(`${label}: {"error":{code,message}} with exit ${code}`, async () => {
      const result = await am(args, inRepo(where === "outside" ? outsideTmuxEnv() : alice));
      expectJsonError(result, code);
    });
  }

  test("without --json the same failures are one error: line on stderr", async () => {
    expectError(await am(["status", "bogus"], inRepo(alice)), 1);
    expectError(await am(["cleanup", "--read-hours", "-1"], inRepo(alice)), 1);
    expectError(await am(["mailman", "--interval", "0"], inRepo(alice)), 1);
    expectError(await am(["recipients"], inRepo(outsideTmuxEnv())), 2);
  });
});

describe("send", () => {
  beforeAll(() => drain(bob));

  const lastStored = () => storedMessages(bobsMailbox()).at(-1)!;

  test("-r and -m instead of positionals", async () => {
    const id = expectSent(await am(["send", "-r", "bob", "-m", "short flags"], inRepo(alice)));
    expect(lastStored()).toMatchObject({ id, from: "alice", to: "bob", message: "short flags", read_flag: false });
  });

  test("--recipient and --message instead of positionals", async () => {
    const id = expectSent(await am(["send", "--message", "long flags", "--recipient", "bob"], inRepo(alice)));
    expect(lastStored()).toMatchObject({ id, to: "bob", message: "long flags" });
  });

  test('a flag written after a positional is still a flag: send bob -m x stores "x"', async () => {
    const id = expectSent(await am(["send", "bob", "-m", "x"], inRepo(alice)));
    expect(lastStored()).toMatchObject({ id, to: "bob", message: "x" });
  });

  test('-m "-x is broken" stores the dash text', async () => {
    const id = expectSent(await am(["send", "-r", "bob", "-m", "-x is broken"], inRepo(alice)));
    expect(lastStored()).toMatchObject({ id, message: "-x is broken" });
  });

  test("a message flag wins over a message positional", async () => {
    const id = expectSent(await am(["send", "bob", "positional body", "-m", "flag body"], inRepo(alice)));
    expect(lastStored()).toMatchObject({ id, to: "bob", message: "flag body" });
  });

  test("a recipient flag wins over a recipient positional", async () => {
    const id = expectSent(await am(["send", "carol", "-r", "bob", "-m", "to bob"], inRepo(alice)));
    expect(lastStored()).toMatchObject({ id, to: "bob", message: "to bob" });
  });

  for (const [label, args, body] of [
    ["positional message", ["send", "bob", "given as argument"], "given as argument"],
    ["-m message", ["send", "-r", "bob", "-m", "given as flag"], "given as flag"],
    ["--json", ["send", "bob", "given with json", "--json"], "given with json"],
  ] as const) {
    test(`never reads stdin when the message is given (${label}): an open, silent stdin pipe does not block`, async () => {
      const result = await am([...args], { ...inRepo(alice), stdin: "pipe-open", timeoutMs: 15_000 });
      expect(result.timedOut).toBe(false);
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
      expect(lastStored().message).toBe(body);
    });
  }

  test('--json prints {"id":…} and that id is stored', async () => {
    const result = await am(["send", "bob", "with json", "--json"], inRepo(alice));
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    const document = oneJson(result) as { id: string };
    expect(Object.keys(document)).toEqual(["id"]);
    expect(document.id).toMatch(ID);
    expect(lastStored()).toMatchObject({ id: document.id, message: "with json" });
  });
});

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

  /** Starts a waiting receive, checks it is still blocked after a while, then sends and returns both results. */
  async function wakeBySend(args: string[], body: string, delayMs = 300): Promise<{ waited: Result; id: string }> {
    const waiting = start(args, { ...inRepo(bob), timeoutMs: 20_000 });
    let exited = false;
    void waiting.done.then(() => (exited = true));
    await sleep(delayMs);
    expect(exited).toBe(false);
    const id = expectSent(await am(["send", "bob", body], inRepo(alice)));
    const waited = await waiting.done;
    return { waited, id };
  }

  test("--wait 10 blocks while nothing is unread; a send from another window wakes it", async () => {
    const { waited, id } = await wakeBySend(["receive", "--wait", "10"], "wake up");
    expect(waited.timedOut).toBe(false);
    expect({ code: waited.code, stdout: waited.stdout, stderr: waited.stderr }).toEqual({
      code: 0,
      stdout: shown("alice", id, "wake up"),
      stderr: "",
    });
    expect(storedMessages(bobsMailbox()).find((m) => m.id === id)!.read_flag).toBe(true);
  });

  test("--wait without a number waits (still blocked after 1.5 s) until a message comes", async () => {
    const { waited, id } = await wakeBySend(["receive", "--wait"], "no deadline", 1_500);
    expect(waited.timedOut).toBe(false);
    expect({ code: waited.code, stdout: waited.stdout, stderr: waited.stderr }).toEqual({
      code: 0,
      stdout: shown("alice", id, "no deadline"),
      stderr: "",
    });
  });

  test("--wait 10 --json prints the woken message as JSON", async () => {
    const { waited, id } = await wakeBySend(["receive", "--wait", "10", "--json"], "json wake");
    expect(waited.code).toBe(0);
    expect(oneJson(waited)).toMatchObject({ id, from: "alice", to: "bob", message: "json wake" });
  });

  test("--wait 1 with nothing arriving: No unread messages, exit 0 (--json: null)", async () => {
    const [plain, json] = await Promise.all([
      am(["receive", "--wait", "1"], { ...inRepo(bob), timeoutMs: 15_000 }),
      am(["receive", "--wait", "1", "--json"], { ...inRepo(bob), timeoutMs: 15_000 }),
    ]);
    expect(plain.timedOut).toBe(false);
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
      const waiting = start(["receive", "--wait", "1"], { ...inRepo(bob), timeoutMs: 20_000 });
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
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr, timedOut: result.timedOut }).toEqual({
      code: 0,
      stdout: "",
      stderr: "",
      timedOut: false,
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

describe("recipients and .agentmailignore", () => {
  let r: ReturnType<typeof tempRepo>;
  let s: TmuxServer;
  const ignore = () => join(r.dir, ".agentmailignore");
  const as = (name: string, cwd?: string) => ({ env: s.agent(name).env, cwd: cwd ?? r.dir });

  beforeAll(() => {
    r = tempRepo();
    s = TmuxServer.start(["alice", "bob", "carol", "dave"], r.dir);
  });
  afterAll(() => {
    s?.stop();
    r?.remove();
  });

  test("lists the session's windows one per line, the caller's own followed by ' [you]'", async () => {
    rmSync(ignore(), { force: true });
    const result = await am(["recipients"], as("bob"));
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
      code: 0,
      stdout: "alice\nbob [you]\ncarol\ndave\n",
      stderr: "",
    });
  });

  test('--json: [{"name","you"}…]', async () => {
    rmSync(ignore(), { force: true });
    const result = await am(["recipients", "--json"], as("alice"));
    expect(result.code).toBe(0);
    expect(oneJson(result)).toEqual([
      { name: "alice", you: true, auto: false },
      { name: "bob", you: false, auto: false },
      { name: "carol", you: false, auto: false },
      { name: "dave", you: false, auto: false },
    ]);
  });

  test("a window added later is listed", async () => {
    rmSync(ignore(), { force: true });
    s.addWindow("erin", r.dir);
    const result = await am(["recipients"], as("alice"));
    expect(result.stdout).toBe("alice [you]\nbob\ncarol\ndave\nerin\n");
    s.run(["kill-window", "-t", s.agent("erin").windowId]);
    expect((await am(["recipients"], as("alice"))).stdout).toBe("alice [you]\nbob\ncarol\ndave\n");
  });

  test(".agentmailignore hides windows; blank lines and # comments are ignored", async () => {
    writeFileSync(ignore(), "# the humans\n\ncarol\n   \n#dave\n");
    const result = await am(["recipients"], as("alice"));
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "alice [you]\nbob\ndave\n" });
    expect(oneJson(await am(["recipients", "--json"], as("alice")))).toEqual([
      { name: "alice", you: true, auto: false },
      { name: "bob", you: false, auto: false },
      { name: "dave", you: false, auto: false },
    ]);
  });

  test("the caller's own window is always shown, even when listed", async () => {
    writeFileSync(ignore(), "carol\nalice\n");
    expect((await am(["recipients"], as("carol"))).stdout).toBe("bob\ncarol [you]\ndave\n");
    expect(oneJson(await am(["recipients", "--json"], as("carol")))).toEqual([
      { name: "bob", you: false, auto: false },
      { name: "carol", you: true, auto: false },
      { name: "dave", you: false, auto: false },
    ]);
  });

  test("the file at the repository's top applies from a subdirectory too", async () => {
    writeFileSync(ignore(), "carol\n");
    const sub = join(r.dir, "src", "deep");
    mkdirSync(sub, { recursive: true });
    expect((await am(["recipients"], as("alice", sub))).stdout).toBe("alice [you]\nbob\ndave\n");
  });

  test("send to a hidden window fails like an unknown recipient (exit 1), and stores nothing", async () => {
    writeFileSync(ignore(), "# hidden\ncarol\n");
    const hidden = await am(["send", "carol", "psst"], as("alice"));
    const unknown = await am(["send", "zed", "psst"], as("alice"));
    expectError(hidden, 1);
    expectError(unknown, 1);
    expect(hidden.stderr).toContain("carol");
    const hiddenJson = expectJsonError(await am(["send", "carol", "psst", "--json"], as("alice")), 1);
    const unknownJson = expectJsonError(await am(["send", "zed", "psst", "--json"], as("alice")), 1);
    expect(hiddenJson.code).toBe(unknownJson.code);
    expect(storedMessages(join(r.mailDir, "carol.jsonl"))).toEqual([]);
  });

  test("an agent listed in .agentmailignore can still send to others and to itself", async () => {
    writeFileSync(ignore(), "carol\n");
    expectSent(await am(["send", "bob", "from a hidden window"], as("carol")));
    expectSent(await am(["send", "carol", "note to self"], as("carol")));
    expect(storedMessages(join(r.mailDir, "bob.jsonl")).at(-1)).toMatchObject({ from: "carol", message: "from a hidden window" });
  });

  test("removing a name from the file makes the window a recipient again", async () => {
    writeFileSync(ignore(), "# nobody hidden\n");
    expect((await am(["recipients"], as("alice"))).stdout).toBe("alice [you]\nbob\ncarol\ndave\n");
    expectSent(await am(["send", "carol", "visible again"], as("alice")));
  });

  test("outside tmux: exit 2 and one error line", async () => {
    expectError(await am(["recipients"], { env: outsideTmuxEnv(), cwd: r.dir }), 2);
  });
});

describe("status", () => {
  let r: ReturnType<typeof tempRepo>;
  let s: TmuxServer;
  const as = (name: string) => ({ env: s.agent(name).env, cwd: r.dir });
  const ISO = "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?Z";

  beforeAll(() => {
    r = tempRepo();
    s = TmuxServer.start(["alice", "bob"], r.dir);
  });
  afterAll(() => {
    s?.stop();
    r?.remove();
  });

  test("never set: prints none…", async () => {
    const result = await am(["status"], as("alice"));
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    expect(result.stdout).toMatch(/^none\b/);
    expect(oneJson(await am(["status", "--json"], as("alice")))).toMatchObject({ name: "alice", status: null });
  });

  test("status ready is stored; status prints 'ready since …'", async () => {
    const set = await am(["status", "ready"], as("alice"));
    expect({ code: set.code, stderr: set.stderr }).toEqual({ code: 0, stderr: "" });
    const shown = await am(["status"], as("alice"));
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^ready since ${ISO}\\n$`));
    expect(oneJson(await am(["status", "--json"], as("alice")))).toMatchObject({ name: "alice", status: "ready" });
  });

  test("work and offline are stored too, each per agent", async () => {
    expect((await am(["status", "work"], as("alice"))).code).toBe(0);
    expect((await am(["status"], as("alice"))).stdout).toMatch(new RegExp(`^work since ${ISO}\\n$`));
    expect((await am(["status", "offline"], as("bob"))).code).toBe(0);
    expect((await am(["status"], as("bob"))).stdout).toMatch(new RegExp(`^offline since ${ISO}\\n$`));
    expect((await am(["status"], as("alice"))).stdout).toMatch(/^work since/);
  });

  test("setting the same status again keeps 'since'; a new status moves it", async () => {
    const before = oneJson(await am(["status", "--json"], as("alice"))) as { since: string; status: string };
    expect(before.status).toBe("work");
    await sleep(20);
    expect((await am(["status", "work"], as("alice"))).code).toBe(0);
    const same = oneJson(await am(["status", "--json"], as("alice"))) as { since: string };
    expect(same.since).toBe(before.since);
    await sleep(20);
    const set = await am(["status", "ready", "--json"], as("alice"));
    expect(set.code).toBe(0);
    expect(oneJson(set)).toMatchObject({ name: "alice", status: "ready" });
    const after = oneJson(await am(["status", "--json"], as("alice"))) as { since: string };
    expect(Date.parse(after.since)).toBeGreaterThan(Date.parse(before.since));
  });

  test("status bogus: exit 1, one error line, nothing changed", async () => {
    expectError(await am(["status", "bogus"], as("alice")), 1);
    expect((await am(["status"], as("alice"))).stdout).toMatch(/^ready since/);
  });

  test("in tmux with stderr on a terminal, setting a status confirms it on stderr", async () => {
    const { env, cwd } = as("bob");
    expect(onTerminal('"$B" status work', env, cwd)).toEqual({ code: 0, screen: "status: work\n" });
    expect(onTerminal('"$B" status ready >out.txt', env, cwd)).toEqual({ code: 0, screen: "status: ready\n" });
    expect(readFileSync(join(cwd, "out.txt"), "utf8")).toBe("");
    expect(oneJson(await am(["status", "--json"], as("bob")))).toMatchObject({ name: "bob", status: "ready" });
  });

  test("in tmux with stderr on a pipe (a hook), setting a status prints nothing", async () => {
    const { env, cwd } = as("bob");
    expect(onTerminal('"$B" status offline 2>err.txt', env, cwd)).toEqual({ code: 0, screen: "" });
    expect(readFileSync(join(cwd, "err.txt"), "utf8")).toBe("");
    const piped = await am(["status", "ready"], as("bob"));
    expect({ code: piped.code, stdout: piped.stdout, stderr: piped.stderr }).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(oneJson(await am(["status", "--json"], as("bob")))).toMatchObject({ name: "bob", status: "ready" });
  });

  test("outside tmux with stderr on a terminal, status ready says it set nothing, and why", async () => {
    const screen = onTerminal('"$B" status ready', outsideTmuxEnv(), r.dir);
    expect(screen.code).toBe(0);
    expect(screen.screen).toMatch(/^status: not set: [^\n]*tmux[^\n]*\n$/);
  });

  test("outside tmux, status ready prints nothing and exits 0", async () => {
    const result = await am(["status", "ready"], { env: outsideTmuxEnv(), cwd: r.dir });
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr, timedOut: result.timedOut }).toEqual({
      code: 0,
      stdout: "",
      stderr: "",
      timedOut: false,
    });
  });

  test("outside tmux, status work and offline print nothing and exit 0, and nothing is stored", async () => {
    for (const state of ["work", "offline"]) {
      const result = await am(["status", state], { env: outsideTmuxEnv(), cwd: r.dir });
      expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({ code: 0, stdout: "", stderr: "" });
    }
    expect((await am(["status"], as("alice"))).stdout).toMatch(/^ready since/);
  });
});

describe("onboard", () => {
  const check = (text: string) => {
    expect(text.trimEnd().split("\n").length).toBeLessThanOrEqual(40);
    for (const word of ["recipients", "send", "receive", "--wait", "ready", "work", "offline"]) expect(text).toContain(word);
    for (const command of ["inbox", "reply <id>", "read <id>", "thread <id>"]) expect(text).toContain(`agentmail ${command}`);
    // Agents stopped after the first message: the text says to receive until nothing is left.
    expect(text).toMatch(/repeat[^\n]*until[^\n]*No unread messages/i);
  };

  test("in tmux: at most 40 lines, names the agent, teaches the commands and statuses; exit 0", async () => {
    const result = await am(["onboard"], inRepo(bob));
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    check(result.stdout);
    expect(result.stdout).toContain("bob");
  });

  test("in another window it names that window", async () => {
    const result = await am(["onboard"], inRepo(server.agent("carol").env));
    expect(result.stdout).toContain("carol");
  });

  test("outside tmux: exit 0, still the text", async () => {
    const result = await am(["onboard"], inRepo(outsideTmuxEnv()));
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    check(result.stdout);
  });

  test("outside a repository: exit 0", async () => {
    const result = await am(["onboard"], { env: bob, cwd: outside });
    expect(result.code).toBe(0);
    check(result.stdout);
  });
});
