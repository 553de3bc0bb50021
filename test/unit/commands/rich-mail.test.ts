/**
 * The rich-mail commands and MCP tools in process (coverage counts them), each agent a window of a private tmux
 * server: flags reach the actions, output is the documented text or one JSON document, errors name the next step.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { closeSync, openSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createServer } from "../../../src/mcp/server.ts";
import { mayBeTerminal, terminalWidth, widthOf } from "../../../src/output/terminal.ts";
import { runInProcess } from "../../support/in-process.ts";
import { tempRepo } from "../../support/repo.ts";
import { TmuxServer } from "../../support/tmux-server.ts";

let repo: ReturnType<typeof tempRepo>;
let server: TmuxServer;
const clients: Client[] = [];
const as = (name: string) => ({ env: { TMUX: server.agent(name).env.TMUX, TMUX_PANE: server.agent(name).env.TMUX_PANE }, cwd: repo.dir });
const run = (name: string, argv: string[]) => runInProcess(argv, as(name));

beforeAll(() => {
  repo = tempRepo();
  server = TmuxServer.start(["alice", "bob", "carol"], repo.dir);
});
afterAll(async () => {
  for (const client of clients) await client.close();
  server.stop();
  repo.remove();
});

async function sendId(from: string, argv: string[]): Promise<string> {
  const result = await run(from, ["send", ...argv]);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  return result.stdout.trim();
}

describe("commands", () => {
  test("send with every field, inbox, receive --peek, reply, read, thread, sent, search, archive", async () => {
    const question = await sendId("alice", [
      "bob",
      "-s",
      "Build is red",
      "-t",
      "question",
      "-p",
      "high",
      "--tag",
      "ci",
      "--tag",
      "main",
      "--needs-response",
      "Is main broken?",
    ]);
    const note = await sendId("carol", ["bob", "-m", "lunch at noon"]);

    const listed = await run("bob", ["inbox"]);
    expect(listed.stdout).toMatch(
      new RegExp(`^${question}  \\d+s  alice  !\\? \\[question\\] Build is red\\n${note}  \\d+s  carol  lunch at noon\\n$`),
    );
    expect(
      JSON.parse(
        (await run("bob", ["inbox", "--json", "--priority", "high", "--tag", "ci", "--from", "alice", "--type", "question"])).stdout,
      ).map((m: { id: string }) => m.id),
    ).toEqual([question]);
    expect((await run("bob", ["inbox", "--thread", note])).stdout).toMatch(new RegExp(`^${note} `));

    const peeked = await run("bob", ["receive", "--peek"]);
    expect(peeked.stdout).toBe(
      `From: alice\nID: ${question}\nSubject: Build is red\nType: question\nPriority: high\nTags: ci, main\n` +
        "Needs-Response: yes\n\n> Is main broken?\n",
    );
    expect(JSON.parse((await run("bob", ["receive", "--peek", "--json"])).stdout).id).toBe(question);
    expect((await run("bob", ["receive", "--peek", "--hook"])).code).toBe(1);

    const replied = await run("bob", ["reply", question, "Yes, since 4f2a", "--tag", "ci"]);
    expect(replied.stderr).toBe("");
    const answer = replied.stdout.trim();
    // Replying marked the question read; the note is still unread.
    expect((await run("bob", ["inbox", "--json"])).stdout).not.toContain(question);
    expect((await run("bob", ["inbox", "--all"])).stdout).toContain(`${note}  `);

    const received = await run("alice", ["receive"]);
    expect(received.stdout).toBe(
      `From: bob\nID: ${answer}\nSubject: Re: Build is red\nType: response\nTags: ci\nThread: ${question}\n` +
        `In-Reply-To: ${question}\n\n> Yes, since 4f2a\n`,
    );
    const followUp = JSON.parse((await run("alice", ["reply", answer, "-m", "thanks", "-t", "report", "--json"])).stdout).id;

    const thread = await run("carol", ["thread", followUp]);
    expect(thread.stdout.split("\n\nFrom: ").length).toBe(3);
    expect(thread.stdout).toStartWith(`From: alice\nTo: bob\nID: ${question}\nDate: `);
    expect(JSON.parse((await run("bob", ["thread", question, "--json"])).stdout).map((m: { id: string }) => m.id)).toEqual([
      question,
      answer,
      followUp,
    ]);

    const sent = await run("alice", ["sent"]);
    expect(sent.stdout).toMatch(
      new RegExp(
        `^${followUp}  \\d+s  to bob  stored  \\[report\\] Re: Build is red\\n` +
          `${question}  \\d+s  to bob  acknowledged \\S+Z \\(reply \\w{8}\\)  !\\? \\[question\\] Build is red\\n$`,
      ),
    );
    expect(JSON.parse((await run("alice", ["sent", "--unread", "--json"])).stdout).map((m: { id: string }) => m.id)).toEqual([followUp]);

    const read = JSON.parse((await run("bob", ["read", note, "--json"])).stdout);
    expect([read.id, read.read_flag, typeof read.read_at]).toEqual([note, true, "string"]);
    expect((await run("bob", ["read", note])).stdout).toBe(`From: carol\nID: ${note}\n\n> lunch at noon\n`);

    expect((await run("alice", ["search", "BROKEN"])).stdout).toContain(question);
    expect(JSON.parse((await run("alice", ["search", "--regex", "^than", "--json"])).stdout).map((m: { id: string }) => m.id)).toEqual([
      followUp,
    ]);

    expect(await run("bob", ["archive", "--read"])).toEqual({ code: 0, stdout: "Archived 2 messages\n", stderr: "" });
    expect((await run("bob", ["inbox", "--archived"])).stdout).toContain(note);
    expect(JSON.parse((await run("bob", ["archive", followUp, "--json"])).stdout)).toEqual({ archived: [followUp] });
    expect(await run("bob", ["inbox"])).toEqual({ code: 0, stdout: "No messages\n", stderr: "" });
    expect((await run("bob", ["inbox", "--json"])).stdout).toBe("[]\n");
    expect((await run("bob", ["archive", "--read", "--older-than", "1"])).stdout).toBe("Archived 0 messages\n");
    // Archived mail is still the caller's: it can be answered, in its thread.
    const late = JSON.parse((await run("bob", ["reply", note, "-m", "sorry, missed lunch", "--json"])).stdout).id;
    expect(JSON.parse((await run("carol", ["receive", "--json"])).stdout)).toMatchObject({
      id: late,
      in_reply_to: note,
      thread_id: note,
      type: "response",
    });
  });

  test("cleanup --purge-days deletes old archived mail; the dry run says so first", async () => {
    const id = await sendId("alice", ["carol", "old news"]);
    await run("carol", ["receive"]);
    await run("carol", ["archive", id]);
    const dry = await run("carol", ["cleanup", "--purge-days", "0", "--dry-run"]);
    expect(dry.stdout).toContain("would purge 1 archived message of carol\n");
    expect(JSON.parse((await run("carol", ["cleanup", "--purge-days", "0", "--json"])).stdout).purged).toContainEqual({
      name: "carol",
      count: 1,
    });
    expect((await run("carol", ["cleanup", "--purge-days", "x"])).code).toBe(1);
  });

  test("errors name the next step and change nothing", async () => {
    const cases: [string[], RegExp][] = [
      [["reply", "Nope0000", "x"], /no message Nope0000 in your mailbox; run 'agentmail inbox --all'/],
      [["reply"], /^error: missing id; usage: agentmail reply <id> \[message\] \[options\]; 'agentmail inbox --all' lists ids$/m],
      [["reply", "Nope0000"], /missing message|the message is empty/],
      [["read"], /^error: missing id; usage: agentmail read <id> \[options\]; 'agentmail inbox' lists ids$/m],
      [["read", "Nope0000"], /no message Nope0000/],
      [["thread"], /missing id/],
      [["thread", "Nope0000"], /no message Nope0000 in the mail store/],
      [["search"], /missing pattern/],
      // Said once, naming the pattern: not "invalid regular expression: Invalid regular expression: …".
      [
        ["search", "(", "--regex"],
        /^error: invalid regular expression '\(': missing \); fix it, or search without --regex for plain text$/m,
      ],
      [["archive"], /name the messages to archive/],
      [["archive", "Nope0000"], /no message Nope0000/],
      [["archive", "x", "--read"], /not both/],
      [["archive", "--older-than", "3"], /goes with --read/],
      [["archive", "--read", "--older-than", "soon"], /number of hours/],
      [["send", "bob", "x", "-t", "memo"], /unknown type 'memo'; use one of message, status/],
      [["send", "bob", "x", "-p", "asap"], /unknown priority 'asap'; use one of urgent, high, normal, low/],
      [["inbox", "--priority", "asap"], /unknown priority/],
    ];
    for (const [argv, message] of cases) {
      const result = await run("bob", argv);
      expect({ argv, code: result.code, stdout: result.stdout }).toEqual({ argv, code: 1, stdout: "" });
      expect(result.stderr).toMatch(message);
    }
  });

  test("the hook delivers the oldest urgent message first, then the older normal one, in one text", async () => {
    const normal = await sendId("alice", ["carol", "normal first"]);
    const urgent = await sendId("alice", ["carol", "-p", "urgent", "urgent second"]);
    const first = await run("carol", ["receive", "--hook"]);
    expect(first.code).toBe(2);
    expect(first.stderr).toContain(`ID: ${urgent}\nPriority: urgent\n`);
    expect(first.stderr.indexOf(`ID: ${urgent}`)).toBeLessThan(first.stderr.indexOf(`ID: ${normal}`));
    expect(first.stderr).not.toContain("more unread");
    expect((await run("carol", ["receive", "--hook"])).code).toBe(0);
  });

  test("receive tells on stderr how many more are unread, in text and --json; the last one says nothing", async () => {
    for (const body of ["one", "two", "three"]) await sendId("alice", ["carol", body]);
    expect((await run("carol", ["receive"])).stderr).toBe("2 more unread; run agentmail receive again\n");
    const json = await run("carol", ["receive", "--json"]);
    expect({ message: JSON.parse(json.stdout).message, stderr: json.stderr }).toEqual({
      message: "two",
      stderr: "1 more unread; run agentmail receive again\n",
    });
    expect(await run("carol", ["receive"])).toMatchObject({ code: 0, stderr: "" });
  });
});

describe("terminal width", () => {
  test("lines fit a terminal's columns; a pipe or a closed descriptor has none", () => {
    expect(widthOf({ isTTY: true, columns: 120 })).toBe(120);
    expect(widthOf({ isTTY: true, columns: 10 })).toBeUndefined();
    expect(widthOf({ isTTY: false, columns: 120 })).toBeUndefined();
    expect(widthOf({})).toBeUndefined();
    expect(mayBeTerminal(987654)).toBe(false);
    const fd = openSync("/dev/null", "r");
    expect(mayBeTerminal(fd)).toBe(true);
    closeSync(fd);
    expect(typeof (terminalWidth() ?? 0)).toBe("number");
  });
});

describe("MCP tools", () => {
  async function agent(name: string): Promise<Client> {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createServer(() => ({ cwd: repo.dir, env: server.agent(name).env })).connect(serverSide);
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(clientSide);
    clients.push(client);
    return client;
  }
  async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    const item = result.content[0];
    if (item?.type !== "text") throw new Error("expected text");
    return { isError: result.isError === true, value: JSON.parse(item.text) };
  }

  test("send with fields, inbox with filters, read, reply, thread: the CLI's JSON documents", async () => {
    const alice = await agent("alice");
    const bob = await agent("bob");
    const sent = await call(alice, "send", {
      recipient: "bob",
      message: "deploy?",
      subject: "Deploy",
      type: "task",
      priority: "urgent",
      tags: ["ops"],
      needs_response: true,
    });
    const id = sent.value.id as string;
    const listed = await call(bob, "inbox", { priority: "urgent", tag: "ops", type: "task", from: "alice" });
    expect(listed.value.map((m: { id: string }) => m.id)).toEqual([id]);
    expect(listed.value[0]).toMatchObject({
      subject: "Deploy",
      type: "task",
      priority: "urgent",
      tags: ["ops"],
      needs_response: true,
      read_flag: false,
    });
    expect((await call(bob, "inbox", { thread: "Nope0000", all: true })).value).toEqual([]);
    const read = await call(bob, "read", { id });
    expect([read.value.id, read.value.read_flag]).toEqual([id, true]);
    const reply = await call(bob, "reply", { id, message: "done", tags: ["ops"] });
    const thread = await call(alice, "thread", { id: reply.value.id });
    expect(thread.value.map((m: { id: string }) => m.id)).toEqual([id, reply.value.id]);
    expect(thread.value[1]).toMatchObject({ subject: "Re: Deploy", type: "response", thread_id: id, in_reply_to: id });
    expect((await call(bob, "inbox", { archived: true })).value).toEqual([]);
    const missing = await call(bob, "reply", { id: "Nope0000", message: "x" });
    expect(missing.isError).toBe(true);
    expect(missing.value.error.code).toBe("not_found");
  });
});
