/**
 * Rich mail end to end against the compiled binary in a private tmux server: the stored record, receive's headers,
 * reply, inbox, read, thread, sent (receipts), archive, search, cleanup archiving and purging, urgent-first hooks,
 * and --help / --json / errors on every new command. Checks are on what a user sees: stdout, exit codes, files.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { tempRepo } from "../support/repo.ts";
import { outsideTmuxEnv, TmuxServer } from "../support/tmux-server.ts";
import {
  am,
  expectError,
  expectJsonError,
  expectSent,
  oneJson,
  rawLines,
  readText,
  shown,
  storedMessages,
  type StoredMessage,
} from "../support/e2e.ts";

const NAMES = ["alice", "bob", "carol"];
let server: TmuxServer;
let repo: ReturnType<typeof tempRepo>;

beforeAll(() => {
  repo = tempRepo();
  server = TmuxServer.start(NAMES, repo.dir);
});
afterAll(() => {
  server?.stop();
  repo?.remove();
});

/** Each test starts from an empty store in the same repository and tmux server. */
beforeEach(() => {
  rmSync(repo.mailDir, { recursive: true, force: true });
  mkdirSync(repo.mailDir, { mode: 0o700 });
});

const as = (name: string) => ({ env: server.agent(name).env, cwd: repo.dir });
const mailbox = (name: string) => join(repo.mailDir, `${name}.jsonl`);
const archiveOf = (name: string) => join(repo.mailDir, ".archive", `${name}.jsonl`);
const send = async (from: string, args: string[]) => expectSent(await am(["send", ...args], as(from)));
/** Exit 0 and stderr as given (nothing, unless receive tells how many more are unread); returns stdout. */
const ok = async (from: string, args: string[], stderr = "") => {
  const result = await am(args, as(from));
  expect({ args, code: result.code, stderr: result.stderr }).toEqual({
    args,
    code: 0,
    stderr,
  });
  return result.stdout;
};
/** Text lines, each ended by a newline. */
const lines = (...each: string[]) => each.map((line) => line + "\n").join("");
const idsOf = (value: unknown) => (value as StoredMessage[]).map((message) => message.id);

describe("the stored record", () => {
  test("a plain send stores exactly the seed's six fields, in order, and receives exactly as the seed prints", async () => {
    const id = await send("alice", ["bob", "PR #12 is ready"]);
    const [line] = rawLines(mailbox("bob"));
    expect(Object.keys(JSON.parse(line!))).toEqual(["id", "from", "to", "message", "read_flag", "created_at"]);
    expect(await ok("bob", ["receive"])).toBe(shown("alice", id, "PR #12 is ready"));
  });

  test("rich fields follow the six, only when set, and receive prints one header per field in the contract's order", async () => {
    const id = await send("alice", [
      "bob",
      "--needs-response",
      "--tag",
      "ci",
      "-p",
      "urgent",
      "--tag",
      "main",
      "-t",
      "alert",
      "-s",
      "Build is red",
      "main fails since 4f2a",
    ]);
    expect(id).toMatch(/^[A-Za-z0-9]{8}$/);
    const [stored] = storedMessages(mailbox("bob"));
    expect(Object.keys(stored!)).toEqual([
      "id",
      "from",
      "to",
      "message",
      "read_flag",
      "created_at",
      "subject",
      "type",
      "priority",
      "tags",
      "needs_response",
    ]);
    expect(stored).toMatchObject({
      subject: "Build is red",
      type: "alert",
      priority: "urgent",
      tags: ["ci", "main"],
      needs_response: true,
    });
    expect(await ok("bob", ["receive"])).toBe(
      lines(
        `From: alice`,
        `ID: ${id}`,
        "Subject: Build is red",
        "Type: alert",
        "Priority: urgent",
        "Tags: ci, main",
        "Needs-Response: yes",
        "",
      ) + "main fails since 4f2a\n",
    );
  });

  test("unknown fields another tool wrote are shown in --json and kept byte for byte until a rewrite, then kept", async () => {
    const foreign = JSON.stringify({
      id: "Foreign1",
      from: "tool",
      to: "bob",
      message: "hi",
      read_flag: false,
      created_at: new Date().toISOString(),
      kind: "x",
      nested: { a: [1] },
    });
    appendFileSync(mailbox("bob"), foreign + "\n");
    const received = oneJson(await am(["receive", "--json"], as("bob"))) as StoredMessage;
    expect(received).toMatchObject({ id: "Foreign1", kind: "x", nested: { a: [1] }, read_flag: true });
    expect(typeof received.read_at).toBe("string");
    expect(rawLines(mailbox("bob"))[0]).toBe(foreign.replace('"read_flag":false', '"read_flag":true '));
    await ok("bob", ["archive", "Foreign1"]);
    expect(storedMessages(archiveOf("bob"))[0]).toEqual({ ...JSON.parse(foreign), read_flag: true, read_at: received.read_at });
  });

  test("bad fields are exit 1 naming the valid values, and nothing is stored", async () => {
    for (const [args, text] of [
      [["-t", "memo"], "use one of message, status, alert, task, question, response, report, handoff"],
      [["-p", "asap"], "use one of urgent, high, normal, low"],
      [["-s", "x".repeat(201)], "over the 200-character limit"],
      [["--tag", "a b"], "invalid tag"],
    ] as const) {
      const stderr = expectError(await am(["send", "bob", "body", ...args], as("alice")), 1);
      expect(stderr).toContain(text);
    }
    expect(existsSync(mailbox("bob"))).toBe(false);
  });
});

describe("a conversation", () => {
  test("send with a subject, inbox, reply, thread, sent: the README's example", async () => {
    const question = await send("alice", [
      "bob",
      "-s",
      "Flaky test",
      "-t",
      "question",
      "--needs-response",
      "Is test_upload flaky on main?",
    ]);
    const inbox = await ok("bob", ["inbox"]);
    expect(inbox).toMatch(new RegExp(`^${question}  \\d+s  alice  \\? \\[question\\] Flaky test\\n$`));
    const answer = (await ok("bob", ["reply", question, "Yes, it times out; fixing it now"])).trim();
    expect(answer).toMatch(/^[A-Za-z0-9]{8}$/);
    // The reply marked the question read, so bob's inbox is empty again.
    expect(await ok("bob", ["inbox"])).toBe("No messages\n");
    expect(await ok("alice", ["receive"])).toBe(
      lines(
        "From: bob",
        `ID: ${answer}`,
        "Subject: Re: Flaky test",
        "Type: response",
        `Thread: ${question}`,
        `In-Reply-To: ${question}`,
        "",
      ) + "Yes, it times out; fixing it now\n",
    );
    const thanks = (await ok("alice", ["reply", answer, "Thanks!"])).trim();
    const thread = await ok("carol", ["thread", thanks]);
    const entries = thread.split(/\n(?=From: )/);
    expect(entries).toHaveLength(3);
    expect(entries[0]).toMatch(
      new RegExp(
        `^From: alice\\nTo: bob\\nID: ${question}\\nDate: \\S+\\nSubject: Flaky test\\nType: question\\n` +
          `Needs-Response: yes\\n\\nIs test_upload flaky on main\\?\\n$`,
      ),
    );
    expect(entries[2]).toMatch(
      new RegExp(
        `^From: alice\\nTo: bob\\nID: ${thanks}\\nDate: \\S+\\nSubject: Re: Flaky test\\nType: response\\n` +
          `Thread: ${question}\\nIn-Reply-To: ${answer}\\n\\nThanks!\\n$`,
      ),
    );
    const sent = await ok("alice", ["sent"]);
    expect(sent).toMatch(
      new RegExp(
        `^${thanks}  \\d+s  to bob  stored  \\[response\\] Re: Flaky test\\n` +
          `${question}  \\d+s  to bob  acknowledged \\d{4}-\\S+Z \\(reply \\w{8}\\)  \\? \\[question\\] Flaky test\\n$`,
      ),
    );
    expect(await ok("alice", ["sent", "--unread"])).toMatch(new RegExp(`^${thanks} `));
    const receipts = oneJson(await am(["sent", "--json"], as("alice"))) as StoredMessage[];
    expect(receipts.map((m) => [m.id, m.read_flag, typeof m.read_at])).toEqual([
      [thanks, false, "undefined"],
      [question, true, "string"],
    ]);
  });

  test("replying to an id that is not in the caller's mailbox is exit 1 and sends nothing", async () => {
    const id = await send("alice", ["bob", "for bob"]);
    expect(expectError(await am(["reply", id, "stolen"], as("carol")), 1)).toContain("agentmail inbox --all");
    expect(expectError(await am(["reply", "Nope0000", "x"], as("bob")), 1)).toContain("no message Nope0000 in your mailbox");
    expect(storedMessages(mailbox("alice"))).toEqual([]);
  });
});

describe("inbox, read, peek", () => {
  test("inbox: unread only, oldest first, marks nothing; --all marks unread with *; filters; empty says so", async () => {
    expect(await ok("bob", ["inbox"])).toBe("No messages\n");
    expect(await ok("bob", ["inbox", "--json"])).toBe("[]\n");
    const low = await send("alice", ["bob", "-p", "low", "-m", "whenever"]);
    const high = await send("carol", ["bob", "-p", "high", "--tag", "ops", "-t", "task", "rotate the keys\nsecond line"]);
    const before = readText(mailbox("bob"));
    expect(await ok("bob", ["inbox"])).toMatch(
      new RegExp(`^${low}  \\d+s  alice  whenever\\n${high}  \\d+s  carol  ! \\[task\\] rotate the keys second line\\n$`),
    );
    expect(readText(mailbox("bob"))).toBe(before);
    expect(idsOf(oneJson(await am(["inbox", "--priority", "high", "--json"], as("bob"))))).toEqual([high]);
    expect(idsOf(oneJson(await am(["inbox", "--priority", "low", "--json"], as("bob"))))).toEqual([low, high]);
    expect(idsOf(oneJson(await am(["inbox", "--from", "alice", "--json"], as("bob"))))).toEqual([low]);
    expect(idsOf(oneJson(await am(["inbox", "--tag", "ops", "--type", "task", "--json"], as("bob"))))).toEqual([high]);
    await ok("bob", ["receive"], "1 more unread; run agentmail receive again\n");
    expect(await ok("bob", ["inbox", "--all"])).toMatch(
      new RegExp(`^${low}  \\d+s  alice  whenever\\n${high}  \\d+s  carol  \\*! \\[task\\] `),
    );
    expect(await ok("bob", ["inbox", "--thread", high])).toMatch(new RegExp(`^${high} `));
  });

  test("a long body is cut to 100 characters on one line when stdout is not a terminal", async () => {
    const id = await send("alice", ["bob", "word ".repeat(60)]);
    const line = (await ok("bob", ["inbox"])).trimEnd();
    expect(line.split("  ").slice(3).join("  ")).toHaveLength(100);
    expect(line).toStartWith(`${id}  `);
    expect(line).toEndWith("…");
  });

  test("receive --peek shows what receive would take and marks nothing; read ID shows and marks read", async () => {
    const first = await send("alice", ["bob", "first"]);
    const second = await send("alice", ["bob", "-s", "Second", "second"]);
    const before = readText(mailbox("bob"));
    expect(await ok("bob", ["receive", "--peek"])).toBe(shown("alice", first, "first"));
    expect((oneJson(await am(["receive", "--peek", "--json"], as("bob"))) as StoredMessage).id).toBe(first);
    expect(readText(mailbox("bob"))).toBe(before);
    const inode = statSync(mailbox("bob")).ino;
    expect(await ok("bob", ["read", second])).toBe(`From: alice\nID: ${second}\nSubject: Second\n\nsecond\n`);
    // Marked read in place: same file, same size; receive now takes the first, then nothing.
    expect(statSync(mailbox("bob")).ino).toBe(inode);
    expect(readText(mailbox("bob")).length).toBe(before.length);
    expect(await ok("bob", ["receive"])).toBe(shown("alice", first, "first"));
    expect(await ok("bob", ["receive"])).toBe("No unread messages\n");
    expect(await ok("bob", ["receive", "--peek"])).toBe("No unread messages\n");
    expect(await ok("bob", ["receive", "--peek", "--json"])).toBe("null\n");
    const again = oneJson(await am(["read", second, "--json"], as("bob"))) as StoredMessage;
    expect([again.id, again.read_flag, typeof again.read_at]).toEqual([second, true, "string"]);
    expect(expectError(await am(["read", "Nope0000"], as("bob")), 1)).toContain("agentmail inbox --all");
    expect(expectError(await am(["read", first], as("carol")), 1)).toContain(`no message ${first}`);
  });
});

describe("archive, search, cleanup", () => {
  test("archive moves messages out of the live mailbox; inbox --archived, read, thread, sent and search still find them", async () => {
    const a = await send("alice", ["bob", "-s", "Alpha", "first topic"]);
    const b = await send("alice", ["bob", "second topic"]);
    const c = await send("carol", ["bob", "third topic"]);
    await ok("bob", ["receive"], "2 more unread; run agentmail receive again\n");
    await ok("bob", ["receive"], "1 more unread; run agentmail receive again\n");
    expect(await ok("bob", ["archive", "--read"])).toBe("Archived 2 messages\n");
    expect(storedMessages(mailbox("bob")).map((m) => m.id)).toEqual([c]);
    expect(storedMessages(archiveOf("bob")).map((m) => m.id)).toEqual([a, b]);
    expect(storedMessages(archiveOf("bob")).every((m) => typeof m.read_at === "string")).toBe(true);
    expect(idsOf(oneJson(await am(["inbox", "--archived", "--json"], as("bob"))))).toEqual([a, b]);
    expect(await ok("bob", ["read", a])).toContain(`ID: ${a}\nSubject: Alpha\n`);
    expect(idsOf(oneJson(await am(["thread", a, "--json"], as("carol"))))).toEqual([a]);
    expect(idsOf(oneJson(await am(["sent", "--json"], as("alice"))))).toEqual([b, a]);
    expect(idsOf(oneJson(await am(["search", "TOPIC", "--json"], as("bob"))))).toEqual([a, b, c]);
    expect(JSON.parse(await ok("bob", ["archive", c, "--json"]))).toEqual({ archived: [c] });
    // The last message left: the live mailbox is gone, the archive holds all three.
    expect(existsSync(mailbox("bob"))).toBe(false);
    expect(expectError(await am(["archive", c], as("bob")), 1)).toContain(`no message ${c}`);
    expect(await ok("bob", ["archive", "--read"])).toBe("Archived 0 messages\n");
  });

  test("archive by id: an unknown id among them archives nothing", async () => {
    const a = await send("alice", ["bob", "keep me"]);
    const before = readText(mailbox("bob"));
    expect(expectError(await am(["archive", a, "Nope0000"], as("bob")), 1)).toContain("Nope0000");
    expect(readText(mailbox("bob"))).toBe(before);
    expect(existsSync(archiveOf("bob"))).toBe(false);
  });

  test("search: the caller's mail and the mail it sent, by subject or body, substring or --regex", async () => {
    const mine = await send("alice", ["bob", "-s", "Deploy window", "tonight at 10"]);
    const theirs = await send("bob", ["alice", "the DEPLOY failed"]);
    await send("carol", ["bob", "deploy is not alice's business"]);
    expect(idsOf(oneJson(await am(["search", "deploy", "--json"], as("alice"))))).toEqual([mine, theirs]);
    expect(await ok("alice", ["search", "--regex", "fail(ed)?$"])).toMatch(new RegExp(`^${theirs}  \\d+s  bob  \\* the DEPLOY failed\\n$`));
    expect(await ok("alice", ["search", "nothing like it"])).toBe("No messages\n");
    expect(expectError(await am(["search", "--regex", "a{2,1}"], as("alice")), 1)).toBe(
      "error: invalid regular expression 'a{2,1}': numbers out of order in {} quantifier; fix it, or search without --regex for plain text\n",
    );
  });

  test("cleanup archives old read mail instead of deleting it; --purge-days deletes old archived mail; --dry-run shows both", async () => {
    const old = new Date(Date.now() - 10 * 86_400_000).toISOString();
    const line = (id: string, read: boolean) =>
      JSON.stringify({ id, from: "alice", to: "bob", message: id, read_flag: read, created_at: old }) + "\n";
    appendFileSync(mailbox("bob"), line("OldRead1", true) + line("OldUnrd1", false));
    const dry = await ok("alice", ["cleanup", "--dry-run", "--purge-days", "5"]);
    expect(dry).toBe("would archive 1 read message of bob\n");
    expect(await ok("alice", ["cleanup", "--purge-days", "5"])).toBe("archived 1 read message of bob\n");
    expect(storedMessages(archiveOf("bob")).map((m) => m.id)).toEqual(["OldRead1"]);
    expect(storedMessages(mailbox("bob")).map((m) => m.id)).toEqual(["OldUnrd1"]);
    expect(await ok("alice", ["cleanup", "--purge-days", "5", "--dry-run"])).toBe("would purge 1 archived message of bob\n");
    const report = oneJson(await am(["cleanup", "--purge-days", "5", "--json"], as("alice"))) as { purged: unknown; archived: unknown };
    expect(report).toMatchObject({ purged: [{ name: "bob", count: 1 }], archived: [] });
    expect(existsSync(archiveOf("bob"))).toBe(false);
    expect(storedMessages(mailbox("bob")).map((m) => m.id)).toEqual(["OldUnrd1"]);
  });
});

describe("hooks put urgent mail first", () => {
  test("receive --hook delivers the oldest urgent message before older normal ones; plain receive stays oldest first", async () => {
    const normal = await send("alice", ["bob", "normal, older"]);
    const urgent = await send("carol", ["bob", "-p", "urgent", "urgent, newer"]);
    const hook = await am(["receive", "--hook"], as("bob"));
    expect({ code: hook.code, stdout: hook.stdout }).toEqual({ code: 2, stdout: "" });
    const rest = "(1 more unread: run agentmail receive)\n";
    expect(hook.stderr).toBe(`You got new mail\nFrom: carol\nID: ${urgent}\nPriority: urgent\n\nurgent, newer\n${rest}`);
    const third = await send("alice", ["bob", "-p", "urgent", "urgent, newest"]);
    const more = "1 more unread; run agentmail receive again\n";
    expect(await ok("bob", ["receive"], more)).toBe(shown("alice", normal, "normal, older"));
    expect((await am(["receive", "--hook"], as("bob"))).stderr).toContain(`ID: ${third}\n`);
    expect((await am(["receive", "--hook"], as("bob"))).code).toBe(0);
  });
});

describe("--help and --json on every new command", () => {
  const commands = ["reply", "inbox", "read", "thread", "sent", "search", "archive"];
  for (const command of commands) {
    test(`agentmail ${command} --help: usage on stdout, exit 0, in and outside tmux`, async () => {
      for (const env of [server.agent("alice").env, outsideTmuxEnv()]) {
        const result = await am([command, "--help"], { env, cwd: repo.dir });
        expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
        expect(result.stdout).toContain(`Usage: agentmail ${command}`);
        expect(result.stdout).toContain("--json");
      }
    });
  }

  test("--help documents the new flags", async () => {
    const flags: Record<string, string[]> = {
      send: ["--subject", "-s", "--type", "-t", "--priority", "-p", "--tag", "--needs-response"],
      receive: ["--peek"],
      inbox: ["--all", "--archived", "--from", "--type", "--priority", "--tag", "--thread"],
      sent: ["--unread"],
      search: ["--regex"],
      archive: ["--read", "--older-than"],
      cleanup: ["--purge-days"],
    };
    for (const [command, expected] of Object.entries(flags)) {
      const help = (await am([command, "--help"], as("alice"))).stdout;
      for (const flag of expected) expect({ command, flag, found: help.includes(flag) }).toEqual({ command, flag, found: true });
    }
  });

  test("successes print one JSON document; failures print {error} with the exit code", async () => {
    const id = await send("alice", ["bob", "json"]);
    for (const [who, args] of [
      ["bob", ["inbox", "--json"]],
      ["bob", ["read", id, "--json"]],
      ["bob", ["thread", id, "--json"]],
      ["alice", ["sent", "--json"]],
      ["bob", ["search", "json", "--json"]],
      ["bob", ["reply", id, "ok", "--json"]],
      ["bob", ["archive", id, "--json"]],
    ] as const) {
      const result = await am([...args], as(who));
      expect({ args, code: result.code }).toEqual({ args, code: 0 });
      oneJson(result);
    }
    for (const [args, code, env] of [
      [["reply", "Nope0000", "x", "--json"], 1, null],
      [["read", "Nope0000", "--json"], 1, null],
      [["thread", "Nope0000", "--json"], 1, null],
      [["archive", "Nope0000", "--json"], 1, null],
      [["search", "--json"], 1, null],
      [["inbox", "--type", "memo", "--json"], 1, null],
      [["inbox", "--json"], 2, "outside"],
      [["sent", "--json"], 2, "outside"],
    ] as const) {
      expectJsonError(await am([...args], env ? { env: outsideTmuxEnv(), cwd: repo.dir } : as("bob")), code);
    }
  });

  test("thread needs no tmux: it reads the store the repository names", async () => {
    const id = await send("alice", ["bob", "hello"]);
    const result = await am(["thread", id, "--json"], { env: outsideTmuxEnv(), cwd: repo.dir });
    expect(idsOf(oneJson(result))).toEqual([id]);
  });
});

describe("the files", () => {
  test("archives, the sent index and read journals never collide with a mailbox, whatever an agent is called", async () => {
    const files = () => Bun.spawnSync(["find", ".", "-type", "f"], { cwd: repo.mailDir }).stdout.toString().trim().split("\n").sort();
    const id = await send("alice", ["bob", "x"]);
    await ok("bob", ["receive"]);
    await ok("alice", ["sent"]);
    expect(files()).toEqual(["./.agentmail-store", "./.sent/alice.json", "./bob.jsonl", "./bob.jsonl.cursor", "./bob.jsonl.reads"]);
    await ok("bob", ["archive", id]);
    // The move folded the read time into the archived record, so the journal and the cursor went with the mailbox.
    expect(files()).toEqual(["./.agentmail-store", "./.archive/bob.jsonl", "./.sent/alice.json"]);
    expect(JSON.parse(readFileSync(join(repo.mailDir, ".sent", "alice.json"), "utf8")).sender).toBe("alice");
  });
});
