/**
 * Send and receive together, against the compiled binary in a private tmux server: identity from the caller's own
 * pane, unusual and hostile window names and message bodies, a real pane, the caller's own session, large messages
 * for a slow reader, and a receive whose stdout cannot take the message. Each command's own contract is in
 * test/commands/send.test.ts and test/commands/receive.test.ts.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  BINARY,
  CONTROL_NAMES,
  expectError,
  expectSent,
  HOSTILE_NAMES,
  quoted,
  rawLines,
  readText,
  sh,
  shown,
  storedMessages,
  tree,
  WINDOW_NAMES,
} from "../support/e2e.ts";
import { serverWithFreshRepos } from "../support/fresh-repos.ts";
import type { tempRepo } from "../support/repo.ts";
import type { TmuxServer } from "../support/tmux-server.ts";
import { waitFor } from "../support/workflow.ts";

// One tmux server for the file, its windows named as HOSTILE_NAMES and CONTROL_NAMES list, and a fresh repository for
// each test (test/support/fresh-repos.ts). The windows' own cwd is irrelevant: the binary finds the store from the cwd
// it is spawned in.
const world = serverWithFreshRepos("agentmail-home-", WINDOW_NAMES);
let server: TmuxServer;
let home: string;
let repo: ReturnType<typeof tempRepo>;
beforeAll(() => ({ server, scratch: home } = world));
beforeEach(() => ({ repo } = world));
const { env, box, send, receive } = world;

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
      expect([blank, body]).toEqual(["", "> reply"]);
    }
  });

  test("-x as a recipient after --", async () => {
    const id = expectSent(await send("alice", ["--", "-x", "dash dash"]));
    expect((await receive("-x")).stdout).toBe(shown("alice", id, "dash dash"));
  });

  test("a name that is a window index (2) means the window named 2, not window index 2", async () => {
    const id = expectSent(await send("alice", ["2", "to two"]));
    const third = WINDOW_NAMES[2]!; // the window at index 2 is "carol"
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
      // Text output shows a CR escaped (see terminal-safety.test.ts), and the line separators U+2028 and U+2029, which a
      // reader may take for line breaks; --json and the mailbox keep them.
      const escaped = body.replaceAll("\r", "\\r").replaceAll("\u2028", "\\u2028").replaceAll("\u2029", "\\u2029");
      expect(await receive("bob")).toMatchObject({
        code: 0,
        stdout: shown("alice", viaArg, escaped),
        stderr: "2 more unread; run agentmail receive again\n",
      });
      const json = await receive("bob", ["--json"]);
      expect(JSON.parse(json.stdout)).toMatchObject({ id: viaStdin, message: body });
      const hook = await receive("bob", ["--hook"]);
      expect(hook.code).toBe(2);
      expect(hook.stderr).toContain(quoted(escaped));
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
    const whole = { ...env("bob"), AGENTMAIL_DELIVERY_CHARS: String(300 * 1024) };
    const result = sh(`{ "$B" receive --hook 2>&1 1>/dev/null; echo "exit=$?" >&2; } | { sleep 0.3; cat; }`, whole, repo.dir);
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
