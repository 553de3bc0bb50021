/**
 * Rich mail end to end against the compiled binary in a private tmux server: the stored record, receive's headers, a
 * conversation (send with a subject, inbox, reply, thread, sent), urgent-first hooks, --help / --json / errors on
 * every rich-mail command, and the files. Checks are on what a user sees: stdout, exit codes, files. Each command's
 * own checks are in test/commands/{inbox,read,reply,archive,search,cleanup}.test.ts.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { tempRepo } from "../support/repo.ts";
import { expectStoredBuildIsRed, idsOf, lines, richMailWorld } from "../support/rich-mail.ts";
import { outsideTmuxEnv, type TmuxServer } from "../support/tmux-server.ts";
import {
  am,
  expectError,
  expectJsonError,
  HOOK_OPENING,
  oneJson,
  rawLines,
  shown,
  storedMessages,
  type StoredMessage,
} from "../support/e2e.ts";

const world = richMailWorld();
const { archiveOf, as, mailbox, ok, send } = world;
let server: TmuxServer;
let repo: ReturnType<typeof tempRepo>;
beforeAll(() => ({ server, repo } = world));

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
    expectStoredBuildIsRed(stored!);
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
      ) + "> main fails since 4f2a\n",
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
      ) + "> Yes, it times out; fixing it now\n",
    );
    const thanks = (await ok("alice", ["reply", answer, "Thanks!"])).trim();
    const thread = await ok("carol", ["thread", thanks]);
    const entries = thread.split(/\n(?=From: )/);
    expect(entries).toHaveLength(3);
    expect(entries[0]).toMatch(
      new RegExp(
        `^From: alice\\nTo: bob\\nID: ${question}\\nDate: \\S+\\nSubject: Flaky test\\nType: question\\n` +
          `Needs-Response: yes\\n\\n> Is test_upload flaky on main\\?\\n$`,
      ),
    );
    expect(entries[2]).toMatch(
      new RegExp(
        `^From: alice\\nTo: bob\\nID: ${thanks}\\nDate: \\S+\\nSubject: Re: Flaky test\\nType: response\\n` +
          `Thread: ${question}\\nIn-Reply-To: ${answer}\\n\\n> Thanks!\\n$`,
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
});

describe("hooks put urgent mail first", () => {
  test("receive --hook delivers the oldest urgent message before older normal ones; plain receive stays oldest first", async () => {
    const normal = await send("alice", ["bob", "normal, older"]);
    const urgent = await send("carol", ["bob", "-p", "urgent", "urgent, newer"]);
    const hook = await am(["receive", "--hook"], as("bob"));
    expect({ code: hook.code, stdout: hook.stdout }).toEqual({ code: 2, stdout: "" });
    const urgentShown = `From: carol\nID: ${urgent}\nPriority: urgent\n\n> urgent, newer\n`;
    expect(hook.stderr).toBe(`${HOOK_OPENING}\n${urgentShown}\n${shown("alice", normal, "normal, older")}`);
    const older = await send("alice", ["bob", "normal, older again"]);
    const third = await send("alice", ["bob", "-p", "urgent", "urgent, newest"]);
    const more = "1 more unread; run agentmail receive again\n";
    expect(await ok("bob", ["receive"], more)).toBe(shown("alice", older, "normal, older again"));
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
    expect(files()).toEqual(["./.agentmail-store", "./.sent/alice.index", "./bob.jsonl", "./bob.jsonl.cursor", "./bob.jsonl.reads"]);
    await ok("bob", ["archive", id]);
    // The move folded the read time into the archived record, so the journal and the cursor went with the mailbox.
    expect(files()).toEqual(["./.agentmail-store", "./.archive/bob.jsonl", "./.sent/alice.index"]);
    expect(readFileSync(join(repo.mailDir, ".sent", "alice.index"), "latin1")).toContain('"sender":"alice"');
  });
});
