/**
 * The send/receive contract as a user checks it, against the compiled binary in a private tmux server: what send
 * prints and stores, stdin and flags, validation errors, what receive prints and marks, FIFO order, --json and
 * --hook, identity from the caller's own pane, unusual and hostile window names and message bodies, and a receive
 * whose stdout cannot take the message.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  am,
  BINARY,
  expectError,
  expectJsonError,
  expectSent,
  rawLines,
  readText,
  sh,
  shown,
  storedMessages,
  tree,
} from "../support/e2e.ts";
import { tempRepo } from "../support/repo.ts";
import { outsideTmuxEnv, TmuxServer } from "../support/tmux-server.ts";
import { waitFor } from "../support/workflow.ts";

const HOSTILE_NAMES = [
  "../evil",
  ".hidden",
  "a/b",
  "a.b",
  "-x",
  "2",
  "a%2Fb",
  "..",
  "-",
  "%",
  'quote"s',
  "back\\slash",
  "$(touch pwned-by-name)",
  " lead",
];
const CONTROL_NAMES = ["line\nbreak", "tab\there"];
const NAMES = ["alice", "bob", "carol", "reviewer", "bob smith", "ünï cödé", ...HOSTILE_NAMES, ...CONTROL_NAMES];

let server: TmuxServer;
let home: string;
let repo: ReturnType<typeof tempRepo>;
const env = (name: string) => server.agent(name).env;
const box = (name: string) => join(repo.mailDir, `${name}.jsonl`);

beforeAll(() => {
  // The binary finds the store from the cwd it is spawned in; the windows work outside every repository, as the
  // callers' own panes do, so they are one project's (identity/projects.ts).
  home = mkdtempSync(join(tmpdir(), "agentmail-home-"));
  server = TmuxServer.start(NAMES, home);
});

afterAll(() => {
  server?.stop();
  rmSync(home, { recursive: true, force: true });
});

beforeEach(() => {
  repo = tempRepo();
});

afterEach(() => {
  repo.remove();
});

const send = (from: string, args: string[], stdin?: string | Uint8Array | "pipe-open") =>
  am(["send", ...args], { env: env(from), cwd: repo.dir, stdin });
const receive = (who: string, args: string[] = []) => am(["receive", ...args], { env: env(who), cwd: repo.dir });

describe("send", () => {
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

describe("receive", () => {
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

    test("one message per hook call, oldest first", async () => {
      const first = expectSent(await send("alice", ["bob", "one"]));
      const second = expectSent(await send("alice", ["bob", "two"]));
      const a = await receive("bob", ["--hook"]);
      expect(a.code).toBe(2);
      expect(a.stderr).toContain(first);
      expect(a.stderr).not.toContain(second);
      const b = await receive("bob", ["--hook"]);
      expect(b.code).toBe(2);
      expect(b.stderr).toContain(second);
    });

    test("with more unread, the text ends by saying how many and to receive them; the last message does not", async () => {
      const first = expectSent(await send("alice", ["bob", "one"]));
      const second = expectSent(await send("carol", ["bob", "two"]));
      const a = await receive("bob", ["--hook"]);
      expect(a.code).toBe(2);
      expect(a.stderr).toBe(`You got new mail\n${shown("alice", first, "one")}(1 more unread: run agentmail receive)\n`);
      const b = await receive("bob", ["--hook"]);
      expect(b).toMatchObject({ code: 2, stderr: `You got new mail\n${shown("carol", second, "two")}` });
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

describe("identity is the window holding the caller's pane", () => {
  afterEach(() => {
    server.run(["select-window", "-t", server.agent("alice").windowId]);
  });

  test("a sender in a window that is not the active one", async () => {
    server.run(["select-window", "-t", server.agent("carol").windowId]);
    const id = expectSent(await send("alice", ["bob", "from the background"]));
    expect(storedMessages(box("bob"))[0]).toMatchObject({ id, from: "alice" });
    expect((await receive("bob")).stdout).toBe(shown("alice", id, "from the background"));
  });

  test("a receiver in a window that is not the active one", async () => {
    const id = expectSent(await send("alice", ["bob", "for bob"]));
    expectSent(await send("alice", ["carol", "for carol"]));
    server.run(["select-window", "-t", server.agent("carol").windowId]);
    expect((await receive("bob")).stdout).toBe(shown("alice", id, "for bob"));
    expect(storedMessages(box("carol"))[0]!.read_flag).toBe(false);
  });

  test("sending to yourself works", async () => {
    const id = expectSent(await send("alice", ["alice", "note to self"]));
    expect((await receive("alice")).stdout).toBe(shown("alice", id, "note to self"));
  });

  test("names with spaces and non-ASCII letters, as sender and recipient", async () => {
    const a = expectSent(await send("bob smith", ["ünï cödé", "grüße"]));
    const b = expectSent(await send("ünï cödé", ["-r", "bob smith", "-m", "hello back"]));
    const stored = readdirSync(repo.mailDir)
      .filter((f) => f.endsWith(".jsonl"))
      .flatMap((f) => storedMessages(join(repo.mailDir, f)));
    expect(stored.find((m) => m.id === a)).toMatchObject({ from: "bob smith", to: "ünï cödé", message: "grüße" });
    expect(stored.find((m) => m.id === b)).toMatchObject({ from: "ünï cödé", to: "bob smith", message: "hello back" });
    expect((await receive("ünï cödé")).stdout).toBe(shown("bob smith", a, "grüße"));
    expect((await receive("bob smith")).stdout).toBe(shown("ünï cödé", b, "hello back"));
    expect((await receive("bob")).stdout).toBe("No unread messages\n");
  });
});

describe("hostile window names", () => {
  test("each name gets its own mailbox inside the store, and mail round-trips both ways", async () => {
    const before = tree(repo.dir);
    const sent = new Map<string, string>();
    for (const name of HOSTILE_NAMES) sent.set(name, expectSent(await send("alice", ["-r", name, "-m", `to ${name}`])));
    const replies: string[] = [];
    for (const name of HOSTILE_NAMES) {
      expect(await receive(name)).toMatchObject({ code: 0, stdout: shown("alice", sent.get(name)!, `to ${name}`), stderr: "" });
      expect((await receive(name)).stdout).toBe("No unread messages\n");
      replies.push(expectSent(await send(name, ["alice", `from ${name}`])));
    }
    for (const [i, name] of HOSTILE_NAMES.entries()) expect((await receive("alice")).stdout).toBe(shown(name, replies[i]!, `from ${name}`));
    expect((await receive("alice")).stdout).toBe("No unread messages\n");

    // Nothing was created or changed outside .git/mail, and the store holds only files, no directories.
    const after = tree(repo.dir);
    expect(after.filter((p) => !p.startsWith(".git/mail/") && p !== ".git/mail/")).toEqual(
      before.filter((p) => !p.startsWith(".git/mail/")),
    );
    expect(after.filter((p) => p.startsWith(".git/mail/") && p.endsWith("/") && p !== ".git/mail/")).toEqual([]);
    expect(existsSync(join(repo.dir, ".git", "evil.jsonl"))).toBe(false);
    expect(existsSync(join(home, "pwned-by-name"))).toBe(false);
    expect(existsSync(join(repo.dir, "pwned-by-name"))).toBe(false);
    expect(existsSync(join(repo.dir, "evil.jsonl"))).toBe(false);
    // One mailbox per recipient: alice plus every hostile name, none shared.
    const mailboxes = readdirSync(repo.mailDir).filter((f) => f.endsWith(".jsonl"));
    expect(mailboxes.length).toBe(HOSTILE_NAMES.length + 1);
    for (const file of mailboxes) {
      const messages = storedMessages(join(repo.mailDir, file));
      expect(new Set(messages.map((m) => m.to)).size).toBe(1);
    }
  });

  test("names with a newline or a tab: stored exactly, and a printed header cannot be forged", async () => {
    for (const name of CONTROL_NAMES) {
      const id = expectSent(await send("alice", ["-r", name, "-m", `to ${JSON.stringify(name)}`]));
      const json = await receive(name, ["--json"]);
      expect(JSON.parse(json.stdout)).toMatchObject({ id, from: "alice", to: name });
      const reply = expectSent(await send(name, ["alice", "reply"]));
      const stored = storedMessages(join(repo.mailDir, "alice.jsonl")).find((m) => m.id === reply);
      expect(stored).toMatchObject({ from: name, to: "alice", message: "reply" });
      const shownReply = await receive("alice");
      expect(shownReply.code).toBe(0);
      const [from, idLine, blank, body] = shownReply.stdout.split("\n");
      expect(from!.startsWith("From: ")).toBe(true);
      expect(idLine).toBe(`ID: ${reply}`);
      expect([blank, body]).toEqual(["", "reply"]);
    }
  });

  test("-x as a recipient after --", async () => {
    const id = expectSent(await send("alice", ["--", "-x", "dash dash"]));
    expect((await receive("-x")).stdout).toBe(shown("alice", id, "dash dash"));
  });

  test("a name that is a window index (2) means the window named 2, not window index 2", async () => {
    const id = expectSent(await send("alice", ["2", "to two"]));
    const third = NAMES[2]!; // the window at index 2 is "carol"
    expect((await receive(third)).stdout).toBe("No unread messages\n");
    expect((await receive("2")).stdout).toBe(shown("alice", id, "to two"));
  });

  test("a.b is not confused with any other window", async () => {
    const id = expectSent(await send("alice", ["a.b", "dotted"]));
    for (const other of ["a/b", "a%2Fb", "alice", "bob"]) expect((await receive(other)).stdout).toBe("No unread messages\n");
    expect((await receive("a.b")).stdout).toBe(shown("alice", id, "dotted"));
  });
});

describe("hostile message bodies round-trip exactly and nothing is executed", () => {
  let trap: string;
  beforeAll(() => {
    trap = mkdtempSync(join(tmpdir(), "agentmail-trap-"));
  });
  afterAll(() => rmSync(trap, { recursive: true, force: true }));

  const bodies = (): Array<[string, string]> => [
    ["double quotes", 'say "hi" and "bye"'],
    ["single quotes", "it's 'quoted'"],
    ["backslashes", "C:\\path\\to\\file \\n is not a newline \\"],
    ["newlines", "line 1\nline 2\n\nline 4"],
    ["CRLF and tabs", "a\r\nb\tc"],
    ["command substitution", `$(touch ${trap}/dollar) and \`touch ${trap}/backtick\``],
    ["shell metacharacters", `; touch ${trap}/semi && echo pwned | tee ${trap}/pipe > ${trap}/redirect`],
    ["U+2028 and U+2029", "before\u2028middle\u2029after"],
    ["emoji and combining marks", "ship it 🚀👩‍💻 — e\u0301 ñ 中文"],
    ["JSON lookalike", '{"id":"AAAAAAAA","read_flag":true}'],
    ["read_flag text", '"read_flag":false, "read_flag": true'],
    ["padded", "  leading and trailing  "],
    ["From: header lookalike", "From: mallory\nID: 00000000\n\nfake"],
  ];

  for (const [label, body] of bodies()) {
    test(label, async () => {
      const viaArg = expectSent(await send("alice", ["bob", body]));
      const viaStdin = expectSent(await send("alice", ["bob"], body + "\n"));
      const viaFlag = expectSent(await send("alice", ["-r", "bob", "-m", body]));
      const lines = rawLines(box("bob"));
      expect(lines.length).toBe(3);
      expect(storedMessages(box("bob")).map((m) => [m.id, m.message])).toEqual([
        [viaArg, body],
        [viaStdin, body],
        [viaFlag, body],
      ]);
      // Text output shows a CR escaped (see terminal-safety.test.ts); --json and the mailbox keep it.
      expect(await receive("bob")).toMatchObject({
        code: 0,
        stdout: shown("alice", viaArg, body.replaceAll("\r", "\\r")),
        stderr: "2 more unread; run agentmail receive again\n",
      });
      const json = await receive("bob", ["--json"]);
      expect(JSON.parse(json.stdout)).toMatchObject({ id: viaStdin, message: body });
      const hook = await receive("bob", ["--hook"]);
      expect(hook.code).toBe(2);
      expect(hook.stderr).toContain(body.replaceAll("\r", "\\r"));
      expect((await receive("bob")).stdout).toBe("No unread messages\n");
      expect(readdirSync(trap)).toEqual([]);
    });
  }

  test("a NUL byte on stdin round-trips", async () => {
    const body = "before\u0000after";
    const id = expectSent(await send("alice", ["bob"], body));
    expect(JSON.parse((await receive("bob", ["--json"])).stdout)).toMatchObject({ id, message: body });
  });

  test("nothing was typed into any pane", () => {
    expect(readdirSync(trap)).toEqual([]);
    for (const name of ["alice", "bob"]) expect(server.capture(name)).not.toContain("touch");
  });
});

/**
 * Types a command line into an agent's real pane (a bash with a terminal on stdin) and waits, boundedly, for the
 * exit code it writes to a file. One that never finishes fails as a timeout (and the pane gets a Ctrl-C).
 */
async function inPane(name: string, command: string): Promise<{ code: number; out: string }> {
  const tag = `${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const rc = join(repo.dir, ".git", `rc-${tag}`);
  const out = join(repo.dir, ".git", `out-${tag}`);
  const paneId = server.agent(name).paneId;
  server.run(["send-keys", "-t", paneId, "-l", `cd '${repo.dir}' && ${command} >'${out}' 2>&1; echo $? >'${rc}'`]);
  server.run(["send-keys", "-t", paneId, "Enter"]);
  try {
    const code = await waitFor(`the command typed into ${name}'s pane to finish: ${command}`, () => {
      const text = readText(rc);
      return text.endsWith("\n") ? text : "";
    });
    return { code: Number(code.trim()), out: readText(out) };
  } catch (error) {
    server.run(["send-keys", "-t", paneId, "C-c"]);
    throw error;
  }
}

describe("from a real pane (a terminal on stdin)", () => {
  test("send from the pane: the sender is that pane's window", async () => {
    // The sender's pane works in the repository, so its recipient's must too (a window outside it is no agent of it).
    expect(await inPane("bob", "true")).toMatchObject({ code: 0 });
    const result = await inPane("carol", `'${BINARY}' send bob 'typed in carol'`);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^[A-Za-z0-9]{8}\n$/);
    expect(storedMessages(box("bob"))[0]).toMatchObject({ id: result.out.trim(), from: "carol", message: "typed in carol" });
  });

  test("send with no message and a terminal on stdin fails at once instead of waiting for typing", async () => {
    const result = await inPane("carol", `'${BINARY}' send bob`);
    expect(result.code).toBe(1);
    expect(result.out).toMatch(/^error: [^\n]+\n$/);
    expect(readText(box("bob"))).toBe("");
  });

  test("receive in the pane", async () => {
    const id = expectSent(await send("alice", ["carol", "read me in the pane"]));
    const result = await inPane("carol", `'${BINARY}' receive`);
    expect(result).toEqual({ code: 0, out: shown("alice", id, "read me in the pane") });
  });
});

describe("recipients are the windows of the caller's own session", () => {
  afterAll(() => {
    try {
      server.run(["kill-session", "-t", "=elsewhere"]);
    } catch {
      // Not created.
    }
  });

  test("a window of another session on the same server is not a recipient", async () => {
    // Started outside every repository (never in the test's own checkout, which is another project's).
    server.run(["new-session", "-d", "-s", "elsewhere", "-n", "stranger", "-c", home, "bash --norc --noprofile -i"]);
    expectError(await send("alice", ["stranger", "hello?"]), 1);
    expect(existsSync(box("stranger"))).toBe(false);
  });

  test("a renamed window: the new name is the identity, the old name is no longer a recipient", async () => {
    const carol = server.agent("carol");
    server.run(["rename-window", "-t", carol.windowId, "carol-renamed"]);
    try {
      const id = expectSent(await send("carol", ["bob", "after rename"]));
      expect(storedMessages(box("bob"))[0]).toMatchObject({ id, from: "carol-renamed" });
      expectError(await send("alice", ["carol", "old name"]), 1);
      const id2 = expectSent(await send("alice", ["carol-renamed", "new name"]));
      expect((await receive("carol")).stdout).toBe(shown("alice", id2, "new name"));
    } finally {
      server.run(["rename-window", "-t", carol.windowId, "carol"]);
    }
  });
});

describe("large messages reach a slow reader whole", () => {
  test("receive of a 256 KiB message through a pipe that is read late", async () => {
    const body = Array.from({ length: 256 }, (_, i) => `${String(i).padStart(4, "0")}${"x".repeat(1019)}`)
      .join("")
      .slice(0, 256 * 1024);
    const id = expectSent(await send("alice", ["bob"], body));
    const result = sh(`"$B" receive | { sleep 0.3; cat; }; echo "exit=\${PIPESTATUS[0]}" >&2`, env("bob"), repo.dir);
    expect(result.stderr).toBe("exit=0\n");
    expect(result.stdout.length).toBe(shown("alice", id, body).length);
    expect(result.stdout).toBe(shown("alice", id, body));
  });

  test("receive --hook of a 256 KiB message through a stderr pipe that is read late", async () => {
    const body = "y".repeat(256 * 1024);
    expectSent(await send("alice", ["bob"], body));
    const result = sh(`{ "$B" receive --hook 2>&1 1>/dev/null; echo "exit=$?" >&2; } | { sleep 0.3; cat; }`, env("bob"), repo.dir);
    expect(result.stderr).toBe("exit=2\n");
    expect(result.stdout.startsWith("You got new mail")).toBe(true);
    expect(result.stdout).toContain(body);
  });
});

describe("a receive that cannot show the message leaves it unread", () => {
  test("stdout is /dev/null: refused with exit 1", async () => {
    const id = expectSent(await send("alice", ["bob", "keep me"]));
    const child = Bun.spawn([BINARY, "receive"], {
      env: env("bob"),
      cwd: repo.dir,
      stdin: "ignore",
      stdout: "ignore",
      stderr: "pipe",
    });
    const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^error: [^\n]+\n$/);
    expect(storedMessages(box("bob"))[0]).toMatchObject({ id, read_flag: false });
    expect((await receive("bob")).stdout).toBe(shown("alice", id, "keep me"));
  });

  test("stdout is closed (>&-): exit 1", async () => {
    const id = expectSent(await send("alice", ["bob", "keep me"]));
    const result = sh(`"$B" receive >&-`, env("bob"), repo.dir);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: [^\n]+\n$/);
    expect(storedMessages(box("bob"))[0]).toMatchObject({ id, read_flag: false });
    expect((await receive("bob")).stdout).toBe(shown("alice", id, "keep me"));
  });

  test("stdout is a pipe whose reader is gone: exit 1", async () => {
    const id = expectSent(await send("alice", ["bob", "keep me"]));
    // A FIFO opened read-write, then a write end, then the read-write fd closed: a pipe with no reader left.
    const fifo = join(repo.dir, ".git", "out.fifo");
    const result = sh(
      `mkfifo "$F" && exec 3<>"$F" 4>"$F" 3<&- && "$B" receive >&4; echo "exit=$?" >&2`,
      { ...env("bob"), F: fifo },
      repo.dir,
    );
    expect(result.stderr).toMatch(/^error: [^\n]+\nexit=1\n$/);
    expect(storedMessages(box("bob"))[0]).toMatchObject({ id, read_flag: false });
    expect((await receive("bob")).stdout).toBe(shown("alice", id, "keep me"));
  });

  test("receive --json to a closed stdout also leaves mail unread", async () => {
    const id = expectSent(await send("alice", ["bob", "keep me"]));
    const result = sh(`"$B" receive --json >&-`, env("bob"), repo.dir);
    expect(result.code).toBe(1);
    expect(storedMessages(box("bob"))[0]).toMatchObject({ id, read_flag: false });
  });

  test("a later message is not lost behind the restored one", async () => {
    const first = expectSent(await send("alice", ["bob", "first"]));
    const second = expectSent(await send("alice", ["bob", "second"]));
    expect(sh(`"$B" receive >&-`, env("bob"), repo.dir).code).toBe(1);
    expect((await receive("bob")).stdout).toBe(shown("alice", first, "first"));
    expect(sh(`"$B" receive >&-`, env("bob"), repo.dir).code).toBe(1);
    expect((await receive("bob")).stdout).toBe(shown("alice", second, "second"));
    expect((await receive("bob")).stdout).toBe("No unread messages\n");
  });
});
