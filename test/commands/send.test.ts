/**
 * `agentmail send` end to end: what it prints and stores, its flags, the message from stdin and never reading stdin
 * when the message is given, the refusals that store nothing, and an unknown recipient failing loudly with a "did you
 * mean" that is worth following: never the caller itself, never a window with an empty name, and the way to list the
 * real recipients.
 */
import { beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { expectJsonError, rawLines, readText, WINDOW_NAMES } from "../support/e2e.ts";
import type { tempRepo } from "../support/repo.ts";
import { serverWithFreshRepos } from "../support/fresh-repos.ts";
import { am, expectError, expectSent, ID, oneJson, storedMessages, sharedSession } from "../support/workflow.ts";

const session = sharedSession();
const { inRepo, drain } = session;
let repo: ReturnType<typeof tempRepo>, alice: Record<string, string>, bob: Record<string, string>;
beforeAll(() => ({ repo, alice, bob } = session));

const bobsMailbox = () => join(repo.mailDir, "bob.jsonl");

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
      const result = await am([...args], { ...inRepo(alice), stdin: "pipe-open" });
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

// A third window with an empty name.
const world = serverWithFreshRepos("agentmail-unknown-", ["alice", "bob"], (server, scratch) => {
  server.run(["new-window", "-d", "-t", `${server.session}:`, "-n", "", "-c", scratch, "bash --norc --noprofile -i"]);
});

const sendFromAlice = (to: string) => am(["send", to, "hi"], { env: world.server.agent("alice").env, cwd: world.repo.dir });

describe("did you mean", () => {
  test("suggests the close name", async () => {
    const expected = `error: no window named "bobb" in this tmux session; did you mean "bob"? run 'agentmail recipients' to list them\n`;
    expect(expectError(await sendFromAlice("bobb"), 1)).toBe(expected);
  });

  test("never suggests the caller itself", async () => {
    const error = expectError(await sendFromAlice("alicee"), 1);
    expect(error).not.toContain('"alice"');
    expect(error).toContain("run 'agentmail recipients' to list them");
  });

  test("never suggests a window with an empty name", async () => {
    const error = expectError(await sendFromAlice("x"), 1);
    expect(error).not.toContain('""');
    expect(error).toBe(`error: no window named "x" in this tmux session; run 'agentmail recipients' to list them\n`);
  });
});

/**
 * Each test below in a fresh repository, from windows with ordinary, unusual and hostile names: what send prints and
 * stores, stdin and flags, and the refusals that store nothing.
 */
describe("send, each test in a fresh repository", () => {
  const world = serverWithFreshRepos("agentmail-home-", WINDOW_NAMES);
  let repo: ReturnType<typeof tempRepo>;
  beforeEach(() => ({ repo } = world));
  const { env, box, send } = world;

  test("prints exactly the new id and appends one JSON line with the contract's fields", async () => {
    const before = Date.now();
    const id = expectSent(await send("alice", ["bob", "hello bob"]));
    const after = Date.now();
    const lines = rawLines(box("bob"));
    expect(lines.length).toBe(1);
    const stored = JSON.parse(lines[0]!);
    expect(stored).toMatchObject({ id, from: "alice", to: "bob", message: "hello bob", read_flag: false });
    expect(Object.keys(stored)).toEqual(expect.arrayContaining(["id", "from", "to", "message", "read_flag", "created_at"]));
    expect(stored.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    const created = Date.parse(stored.created_at);
    expect(created).toBeGreaterThanOrEqual(before - 1000);
    expect(created).toBeLessThanOrEqual(after + 1000);
  });

  test("the mailbox directory is created on first use", async () => {
    expect(existsSync(repo.mailDir)).toBe(false);
    expectSent(await send("alice", ["bob", "first"]));
    expect(existsSync(box("bob"))).toBe(true);
  });

  test("each send appends; ids are distinct", async () => {
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(expectSent(await send("alice", ["bob", `m${i}`])));
    expect(new Set(ids).size).toBe(5);
    expect(storedMessages(box("bob")).map((m) => [m.id, m.message])).toEqual(ids.map((id, i) => [id, `m${i}`]));
  });

  test("--json prints the id as JSON", async () => {
    const result = await send("alice", ["--json", "bob", "hi"]);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    const document = JSON.parse(result.stdout);
    expect(document.id).toMatch(/^[A-Za-z0-9]{8}$/);
    expect(storedMessages(box("bob"))[0]!.id).toBe(document.id);
  });

  describe("message from stdin", () => {
    const cases: Array<[string, string, string]> = [
      ["drops exactly one trailing newline", "hello\n", "hello"],
      ["keeps a second trailing newline", "hello\n\n", "hello\n"],
      ["keeps a body with no newline", "no newline", "no newline"],
      ["keeps inner newlines", "line 1\nline 2\n", "line 1\nline 2"],
      ["keeps leading whitespace", "  indented\n", "  indented"],
    ];
    for (const [label, input, stored] of cases) {
      test(label, async () => {
        const id = expectSent(await send("alice", ["bob"], input));
        expect(storedMessages(box("bob"))).toEqual([expect.objectContaining({ id, message: stored })]);
      });
    }

    test("with -r and stdin", async () => {
      const id = expectSent(await send("alice", ["-r", "bob"], "via stdin\n"));
      expect(storedMessages(box("bob"))[0]).toMatchObject({ id, message: "via stdin" });
    });

    test("an argument wins and an open, silent stdin pipe does not block send", async () => {
      const result = await am(["send", "bob", "argument body"], { env: env("alice"), cwd: repo.dir, stdin: "pipe-open" });
      const id = expectSent(result);
      expect(storedMessages(box("bob"))[0]).toMatchObject({ id, message: "argument body" });
    });

    test("exactly 256 KiB is accepted, with or without a trailing newline", async () => {
      const body = "x".repeat(256 * 1024);
      const first = expectSent(await send("alice", ["bob"], body));
      const second = expectSent(await send("alice", ["bob"], body + "\n"));
      const stored = storedMessages(box("bob"));
      expect(stored.map((m) => m.id)).toEqual([first, second]);
      expect(stored.every((m) => m.message === body)).toBe(true);
    });

    test("one byte over 256 KiB is refused, naming the 262,144-byte limit", async () => {
      const error = expectError(await send("alice", ["bob"], "x".repeat(256 * 1024 + 1)), 1);
      expect(error).toBe("error: the message is 262,145 bytes, over the 262,144-byte limit; send a path to a file instead\n");
      expect(readText(box("bob"))).toBe("");
    });

    test("the limit counts UTF-8 bytes, not characters", async () => {
      expectError(await send("alice", ["bob"], "é".repeat(128 * 1024 + 1)), 1);
      expect(readText(box("bob"))).toBe("");
    });

    test("a huge stdin is refused, naming the real limit (not the one byte more read for the dropped newline)", async () => {
      const error = expectError(await send("alice", ["bob"], new Uint8Array(8 * 1024 * 1024).fill(0x61)), 1);
      expect(error).toBe("error: the message on stdin is over the 262,144-byte limit; send a path to a file instead\n");
      expect(readText(box("bob"))).toBe("");
    });

    test("invalid UTF-8 is refused, not mangled", async () => {
      expectError(await send("alice", ["bob"], new Uint8Array([0x68, 0x69, 0xff, 0xfe, 0x0a])), 1);
      expectError(await send("alice", ["bob"], new Uint8Array([0xc3, 0x28])), 1);
      expect(readText(box("bob"))).toBe("");
    });
  });

  describe("flags", () => {
    test("-r and -m", async () => {
      const id = expectSent(await send("alice", ["-r", "bob", "-m", "flagged"]));
      expect(storedMessages(box("bob"))[0]).toMatchObject({ id, to: "bob", message: "flagged" });
    });

    test("--recipient and --message, in either order", async () => {
      const a = expectSent(await send("alice", ["--recipient", "bob", "--message", "long flags"]));
      const b = expectSent(await send("alice", ["--message=second", "--recipient=bob"]));
      expect(storedMessages(box("bob")).map((m) => [m.id, m.message])).toEqual([
        [a, "long flags"],
        [b, "second"],
      ]);
    });

    test("send bob -m x stores x, not -m", async () => {
      const id = expectSent(await send("alice", ["bob", "-m", "x"]));
      expect(storedMessages(box("bob"))).toEqual([expect.objectContaining({ id, message: "x" })]);
    });

    test("-r with the message as the only positional", async () => {
      const id = expectSent(await send("alice", ["-r", "bob", "positional body"]));
      expect(storedMessages(box("bob"))).toEqual([expect.objectContaining({ id, to: "bob", message: "positional body" })]);
    });

    test("send -m x bob stores x for bob", async () => {
      const id = expectSent(await send("alice", ["-m", "x", "bob"]));
      expect(storedMessages(box("bob"))).toEqual([expect.objectContaining({ id, to: "bob", message: "x" })]);
    });

    test('-m "-x is broken" stores "-x is broken"', async () => {
      const id = expectSent(await send("alice", ["-r", "bob", "-m", "-x is broken"]));
      const id2 = expectSent(await send("alice", ["bob", "-m", "-x is broken"]));
      expect(storedMessages(box("bob")).map((m) => [m.id, m.message])).toEqual([
        [id, "-x is broken"],
        [id2, "-x is broken"],
      ]);
    });

    test("a message that starts with a dash after --", async () => {
      const id = expectSent(await send("alice", ["bob", "--", "-x is broken"]));
      expect(storedMessages(box("bob"))[0]).toMatchObject({ id, message: "-x is broken" });
    });
  });

  describe("refusals store nothing", () => {
    test("unknown recipient: exit 1 and the closest names are suggested", async () => {
      const stderr = expectError(await send("alice", ["reviewr", "please look"]), 1);
      expect(stderr).toContain("reviewr");
      expect(stderr).toContain("reviewer");
      expect(existsSync(repo.mailDir) ? readdirSync(repo.mailDir).filter((f) => f.endsWith(".jsonl")) : []).toEqual([]);
    });

    test("unknown recipient: the closest name comes first", async () => {
      const stderr = expectError(await send("alice", ["bobb", "hi"]), 1);
      const bob = stderr.indexOf('"bob"');
      expect(bob).toBeGreaterThan(-1);
      for (const other of ['"alice"', '"carol"', '"reviewer"']) {
        const at = stderr.indexOf(other);
        if (at !== -1) expect(bob).toBeLessThan(at);
      }
    });

    test("recipient names are exact: no prefix or case match", async () => {
      expectError(await send("alice", ["bo", "hi"]), 1);
      expectError(await send("alice", ["Bob", "hi"]), 1);
      expectError(await send("alice", ["bob ", "hi"]), 1);
      expect(readText(box("bob"))).toBe("");
    });

    test("unknown recipient with --json", async () => {
      const error = expectJsonError(await send("alice", ["--json", "reviewr", "hi"]), 1);
      expect(error.message).toContain("reviewer");
    });

    test("missing recipient", async () => {
      expectError(await send("alice", []), 1);
      expectError(await send("alice", ["-m", "hi"]), 1);
    });

    test("missing message (stdin is /dev/null)", async () => {
      expectError(await send("alice", ["bob"]), 1);
      expect(readText(box("bob"))).toBe("");
    });

    for (const [label, body] of [
      ["empty", ""],
      ["whitespace-only", " \t \n "],
      ["a lone newline", "\n"],
    ] as const) {
      test(`${label} message as an argument`, async () => {
        expectError(await send("alice", ["bob", body]), 1);
        expectError(await send("alice", ["bob", "-m", body]), 1);
        expect(readText(box("bob"))).toBe("");
      });

      test(`${label} message on stdin`, async () => {
        expectError(await send("alice", ["bob"], body), 1);
        expect(readText(box("bob"))).toBe("");
      });
    }

    test("empty message with --json", async () => {
      expectJsonError(await send("alice", ["--json", "bob", "  "]), 1);
    });
  });
});
