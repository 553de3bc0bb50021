/**
 * Agents on two hosts sharing mail through one Redis, against the compiled binary: two tmux servers with their own
 * host identity (AGENTMAIL_HOST) and their own clone of one repository (the same origin, so the same namespace),
 * one private redis-server on a unix socket, with a password (which must never be printed). Checks are on outcomes
 * (ids printed, ids delivered, exit codes, the words a user reads), never on timing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Message } from "../../src/mail/message.ts";
import { BINARY, expectError, expectSent, oneJson, patient, shown, type Result } from "../support/e2e.ts";
import { Hosts, type Host } from "../support/hosts.ts";
import { StormTally } from "../support/mail-storm.ts";
import { fakeClaude, installFakeAgents, startFakeAgent } from "../support/fake-agent.ts";
import { alive, killPid, paneText, printedPid, waitFor } from "../support/workflow.ts";
import { readFileSync } from "node:fs";
import { Running } from "../support/room-world.ts";

const PASSWORD = "pw-Zq81!never-shown";
const SENDERS = ["s1", "s2", "s3", "s4"];
const WORKERS = ["w1", "w2", "w3"];

let hosts: Hosts;
let a: Host;
let b: Host;

beforeAll(async () => {
  hosts = await Hosts.start(
    {
      "host-a": ["alice", "bob-twin", "mover", ...SENDERS.map((s) => `a-${s}`), ...WORKERS.map((w) => `a-${w}`)],
      "host-b": ["bob", "carol", ...SENDERS.map((s) => `b-${s}`), ...WORKERS.map((w) => `b-${w}`)],
    },
    { password: PASSWORD },
  );
  a = hosts.host("host-a");
  b = hosts.host("host-b");
  // Agents on host-b make themselves known: any command registers the caller in the namespace.
  for (const agent of ["bob", "carol"]) expect((await b.am(agent, ["status", "ready"])).code).toBe(0);
});

afterAll(async () => {
  await hosts?.remove();
});

/** As a user has it: AGENTMAIL_REDIS_TIMEOUT unset, the default of 2 s (the harness gives other tests a minute). */
const DEFAULT_TIMEOUT = { AGENTMAIL_REDIS_TIMEOUT: "" };

function expectNoPassword(...results: Result[]): void {
  for (const result of results) expect(result.stdout + result.stderr).not.toContain(PASSWORD);
}

describe("mail between hosts", () => {
  test("an agent on one host sends to an agent on another, who receives it once and replies", async () => {
    const id = expectSent(await a.am("alice", ["send", "bob", "PR #12 is ready"]));
    const received = await b.am("bob", ["receive"]);
    expect({ code: received.code, stdout: received.stdout, stderr: received.stderr }).toEqual({
      code: 0,
      stdout: shown("alice", id, "PR #12 is ready"),
      stderr: "",
    });
    const again = await b.am("bob", ["receive"]);
    expect({ code: again.code, stdout: again.stdout }).toEqual({ code: 0, stdout: "No unread messages\n" });

    const replyId = expectSent(await b.am("bob", ["reply", id, "looking now"]));
    const answer = await a.am("alice", ["receive", "--json"]);
    const message = oneJson(answer) as Message;
    expect({ id: message.id, from: message.from, body: message.message }).toEqual({ id: replyId, from: "bob", body: "looking now" });
  });

  test("recipients lists the agents of every host; --json says which host and when each was last seen", async () => {
    const listed = oneJson(await a.am("alice", ["recipients", "--json"])) as { name: string; host?: string; last_seen?: string }[];
    const bob = listed.find((entry) => entry.name === "bob");
    expect(bob?.host).toBe("host-b");
    expect(Number.isFinite(Date.parse(String(bob?.last_seen)))).toBe(true);
    expect(listed.some((entry) => entry.name === "alice")).toBe(true);
    const text = await a.am("alice", ["recipients"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("bob");
  });

  test("receive --wait on one host wakes when an agent on another host sends", async () => {
    const blocked = await hosts.redis.blockedClients();
    const waiting = b.start("carol", ["receive", "--wait", "30"]);
    // The waiter has looked and blocks on the server (a send before its look would be found by the look, not woken).
    await waitFor("carol's receive --wait to block on the server", async () => (await hosts.redis.blockedClients()) > blocked);
    const id = expectSent(await a.am("alice", ["send", "carol", "wake up"]));
    const result = await waiting.done;
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: shown("alice", id, "wake up") });
  });

  test("the MCP wait tool of an agent on one host is woken by a send from the other host", async () => {
    const env = patient(b.env("carol"));
    const transport = new StdioClientTransport({ command: BINARY, args: ["mcp"], env, cwd: b.clone, stderr: "pipe" });
    const client = new Client({ name: "e2e", version: "1.0.0" });
    await client.connect(transport);
    try {
      const blocked = await hosts.redis.blockedClients();
      const waiting = client.callTool({ name: "wait", arguments: { timeout_seconds: 30 } }) as Promise<CallToolResult>;
      // As with receive --wait: the server blocks on the store before the send, so the wake is what is exercised.
      await waitFor("carol's MCP wait to block on the server", async () => (await hosts.redis.blockedClients()) > blocked);
      const id = expectSent(await a.am("alice", ["send", "carol", "wake the server"]));
      const [item] = (await waiting).content;
      expect(item?.type === "text" ? JSON.parse(item.text) : null).toMatchObject({ id, from: "alice", message: "wake the server" });
    } finally {
      await client.close();
    }
  });

  test("@all, groups and roles reach agents on other hosts", async () => {
    expect((await a.am("alice", ["group", "add", "crew", "bob", "carol"])).code).toBe(0);
    const groupId = expectSent(await a.am("alice", ["send", "@crew", "to the crew"]));
    for (const agent of ["bob", "carol"]) {
      const message = oneJson(await b.am(agent, ["receive", "--json"])) as Message;
      expect(message.id).toBe(groupId);
    }
    expect((await b.am("carol", ["join", "triage"])).code).toBe(0);
    const roleId = expectSent(await a.am("alice", ["send", "role:triage", "please look"]));
    const taken = oneJson(await b.am("carol", ["receive", "--json"])) as Message;
    expect(taken.id).toBe(roleId);
  });
});

describe("rich mail across hosts", () => {
  test("subjects, read, sent receipts, search, thread and archive work the same on the shared store", async () => {
    const first = expectSent(await a.am("alice", ["send", "carol", "-s", "Deploy plan", "canary at 10:00"]));
    const inbox = oneJson(await b.am("carol", ["inbox", "--json"])) as Message[];
    expect(inbox.map((message) => message.id)).toContain(first);
    const read = oneJson(await b.am("carol", ["read", first, "--json"])) as Message;
    expect({ subject: read.subject, read: read.read_flag }).toEqual({ subject: "Deploy plan", read: true });
    const answer = expectSent(await b.am("carol", ["reply", first, "canary looks fine"]));
    const receipts = oneJson(await a.am("alice", ["sent", "--json"])) as Message[];
    expect(receipts.find((message) => message.id === first)?.read_flag).toBe(true);
    const found = oneJson(await a.am("alice", ["search", "canary", "--json"])) as Message[];
    expect(found.map((message) => message.id)).toEqual(expect.arrayContaining([first, answer]));
    const thread = oneJson(await b.am("carol", ["thread", answer, "--json"])) as Message[];
    expect(thread.map((message) => message.id)).toEqual([first, answer]);
    expect((await b.am("carol", ["archive", first])).code).toBe(0);
    const archived = oneJson(await b.am("carol", ["inbox", "--archived", "--json"])) as Message[];
    expect(archived.map((message) => message.id)).toContain(first);
  });
});

describe("one name, one agent in a namespace", () => {
  test("a window on another host cannot take a name an agent used there minutes ago, and is told how to pick another", async () => {
    expect((await b.am("bob", ["status", "work"])).code).toBe(0);
    // bob-twin on host-a renames its window to bob: a second agent called bob.
    a.tmux.run(["rename-window", "-t", a.tmux.agent("bob-twin").paneId, "bob"]);
    try {
      const clash = await a.am("bob-twin", ["receive"]);
      const line = expectError(clash, 1);
      expect(line).toContain("host-b");
      expect(line).toMatch(/agentmail name|rename/);
      expectNoPassword(clash);
    } finally {
      a.tmux.run(["rename-window", "-t", a.tmux.agent("bob-twin").paneId, "bob-twin"]);
    }
  });
});

describe("delivery under load across hosts", () => {
  test("8 senders on two hosts × 100 messages to a role with 6 members on both hosts: every id delivered once", async () => {
    const members = [...WORKERS.map((w) => ({ host: a, agent: `a-${w}` })), ...WORKERS.map((w) => ({ host: b, agent: `b-${w}` }))];
    for (const member of members) expect((await member.host.am(member.agent, ["join", "load"])).code).toBe(0);
    const printed: string[] = [];
    const sending = [...SENDERS.map((s) => ({ host: a, agent: `a-${s}` })), ...SENDERS.map((s) => ({ host: b, agent: `b-${s}` }))].map(
      async (sender) => {
        for (let i = 0; i < 100; i++)
          printed.push(expectSent(await sender.host.am(sender.agent, ["send", "role:load", `${sender.agent} ${i}`])));
      },
    );
    let sendersDone = false;
    const delivered: string[] = [];
    const receiving = members.map(async (member) => {
      for (;;) {
        const result = await member.host.am(member.agent, ["receive", "--json"]);
        expect(result.code).toBe(0);
        const message = JSON.parse(result.stdout) as Message | null;
        if (message) delivered.push(message.id);
        else if (sendersDone) return;
      }
    });
    await Promise.all(sending);
    sendersDone = true;
    await Promise.all(receiving);
    expect(printed.length).toBe(800);
    expect(new Set(printed).size).toBe(800);
    expect(delivered.length).toBe(800);
    expect([...delivered].sort()).toEqual([...printed].sort());
  });

  test("receivers SIGKILLed at random moments lose nothing; only a killed receive's message may be shown again", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) ids.push(expectSent(await a.am("alice", ["send", "bob", `kill test ${i}`])));
    const shownByFinished: string[] = [];
    const shownByKilled: string[] = [];
    let kills = 0;
    for (let round = 0; round < 400 && shownByFinished.length < ids.length; round++) {
      const running = b.start("bob", ["receive", "--json"]);
      if (round % 3 === 0) setTimeout(running.kill, Math.floor(Math.random() * 25));
      const result = await running.done;
      // A receive killed before it wrote anything leaves stdout empty; an empty mailbox prints null.
      const id = result.stdout.trim() === "" ? null : ((JSON.parse(result.stdout) as Message | null)?.id ?? null);
      if (result.signal !== null) {
        kills++;
        if (id) shownByKilled.push(id);
      } else if (id) shownByFinished.push(id);
      else if (result.code === 0) break;
    }
    expect(kills).toBeGreaterThan(0);
    // Every id reached a receive that finished, or a killed one that had shown it (then it was not marked read and
    // a later receive showed it again, or it was marked just before the kill).
    const everShown = new Set([...shownByFinished, ...shownByKilled]);
    expect(ids.filter((id) => !everShown.has(id))).toEqual([]);
    expect(new Set(shownByFinished).size).toBe(shownByFinished.length);
    const inbox = oneJson(await b.am("bob", ["inbox", "--json"])) as Message[];
    expect(inbox.filter((message) => ids.includes(message.id))).toEqual([]);
  });
});

describe("the server restarting or gone", () => {
  test("mail sent before a redis-server crash and restart (AOF, appendfsync always) is received after it", async () => {
    const sent = [];
    for (let i = 0; i < 3; i++) sent.push(expectSent(await a.am("alice", ["send", "carol", `before restart ${i}`])));
    await hosts.redis.restart();
    const received = [];
    for (let i = 0; i < 3; i++) received.push((oneJson(await b.am("carol", ["receive", "--json"])) as Message).id);
    expect(received).toEqual(sent);
  });

  test("with the server down, send fails fast with what to check and prints no id; receive --hook stays silent", async () => {
    await hosts.redis.stop();
    try {
      const send = await a.am("alice", ["send", "bob", "nobody home"], DEFAULT_TIMEOUT);
      const line = expectError(send, 1);
      expect(line).toStartWith("error: cannot reach the mail server at ");
      const receive = await b.am("bob", ["receive"], DEFAULT_TIMEOUT);
      expect(expectError(receive, 1)).toStartWith("error: cannot reach the mail server at ");
      const hook = await b.am("bob", ["receive", "--hook"], DEFAULT_TIMEOUT);
      expect({ code: hook.code, stdout: hook.stdout, stderr: hook.stderr }).toEqual({ code: 0, stdout: "", stderr: "" });
      expectNoPassword(send, receive, hook);
    } finally {
      await hosts.redis.launch();
    }
  });

  test("sends while the server is SIGKILLed and restarted again and again: each printed id delivered once, and a failed send that may have been stored says so", async () => {
    for (const member of ["b-w1", "b-w2"]) expect((await b.am(member, ["join", "restarts"])).code).toBe(0);
    const tally = new StormTally();
    let sending = true;
    const senders = SENDERS.map(async (sender) => {
      for (let i = 0; i < 40; i++) {
        const started = performance.now();
        const result = await a.am(`a-${sender}`, ["send", "role:restarts", `${sender} ${i}`], DEFAULT_TIMEOUT);
        expectNoPassword(result);
        tally.send(result, performance.now() - started);
      }
    });
    const crashes = (async () => {
      let restarts = 0;
      for (; sending; restarts++) {
        await Bun.sleep(100 + Math.random() * 300);
        await hosts.redis.restart();
      }
      return restarts;
    })();
    await Promise.all(senders);
    sending = false;
    const restarts = await crashes;
    while (tally.receive(await b.am("b-w1", ["receive", "--json"]))) {}
    const counts = tally.counts();
    console.log(`${restarts} restarts during 160 sends: ${JSON.stringify(counts)}`);
    expect(restarts).toBeGreaterThan(2);
    // A failure either stored nothing, or names the message that may have been stored and says to look before sending again.
    expect(counts).toMatchObject({ duplicates: 0, lost: 0, unexplained: 0, receiveFailures: 0 });
    expect(counts.receivedOnce).toBe(tally.received.length);
  });

  test("watch --json keeps streaming across a clean restart of the server, and says on stderr while it cannot read", async () => {
    const stream = new Running(["watch", "--json"], b.env("carol", { AGENTMAIL_REDIS_TIMEOUT: "0.5" }), b.clone);
    try {
      expect(JSON.parse(await stream.line()).event).toBe("agents");
      await hosts.redis.stop();
      await waitFor(
        () => `watch to say it cannot read:\n${stream.stderrNow}`,
        () => stream.stderrNow.includes("cannot read the mail store"),
      );
      await hosts.redis.launch();
      await waitFor(
        () => `watch to say the store answers again:\n${stream.stderrNow}`,
        () => stream.stderrNow.includes("answers again"),
      );
      const id = expectSent(await a.am("alice", ["send", "carol", "after the restart"]));
      for (;;) {
        const event = JSON.parse(await stream.line());
        if (event.event === "mail" && event.item.id === id) break;
      }
    } finally {
      expect(await stream.stop()).toBe(0);
    }
    const said = await stream.stderr;
    expect(said).toContain("warning: cannot read the mail store: cannot reach the mail server at ");
    expect(said).not.toContain(PASSWORD);
  });

  test("a frozen server (accepts, never answers) fails a send within the default timeout, with no id", async () => {
    hosts.redis.freeze();
    try {
      const started = performance.now();
      const send = await a.am("alice", ["send", "bob", "into the void"], DEFAULT_TIMEOUT);
      const elapsed = performance.now() - started;
      expect(expectError(send, 1)).toStartWith("error: cannot reach the mail server at ");
      expectNoPassword(send);
      // Reported, not asserted (timing): the default is 2 s.
      console.log(`send against a frozen server failed after ${elapsed.toFixed(0)} ms`);
    } finally {
      hosts.redis.thaw();
    }
  });
});

describe("migrate", () => {
  /** Sends `count` messages from alice to mover in host-a's file store, has mover read and archive some. */
  async function fileStoreWithHistory(env: Record<string, string>): Promise<{ unread: string[]; read: string[]; archived: string[] }> {
    const ids: string[] = [];
    for (let i = 0; i < 120; i++) ids.push(expectSent(await a.amWith(env, "alice", ["send", "mover", `history ${i}`])));
    const read: string[] = [];
    for (let i = 0; i < 30; i++) read.push((oneJson(await a.amWith(env, "mover", ["receive", "--json"])) as Message).id);
    const archived = read.slice(0, 10);
    expect((await a.amWith(env, "mover", ["archive", ...archived])).code).toBe(0);
    return { unread: ids.slice(30), read: read.slice(10), archived };
  }

  /** Runs migrate, SIGKILLing it partway until one run was cut short, then runs it to the end. */
  async function migrateWithACrash(env: Record<string, string>, args: string[]): Promise<void> {
    let cut = 0;
    for (let delay = 15; cut === 0 && delay < 2_000; delay *= 2) {
      const running = a.startWith(env, "mover", ["migrate", ...args]);
      setTimeout(running.kill, delay);
      const result = await running.done;
      if (result.signal !== null) cut++;
      else expect(result.code).toBe(0);
    }
    expect(cut).toBe(1);
    const finished = await a.amWith(env, "mover", ["migrate", ...args]);
    expect({ code: finished.code, stderr: finished.stderr }).toEqual({ code: 0, stderr: "" });
    expectNoPassword(finished);
  }

  async function mailOf(env: Record<string, string>): Promise<{ unread: string[]; live: string[]; archived: string[] }> {
    const ids = async (args: string[]) =>
      (oneJson(await a.amWith(env, "mover", ["inbox", ...args, "--json"])) as Message[]).map((m) => m.id);
    return { unread: await ids([]), live: await ids(["--all"]), archived: await ids(["--archived"]) };
  }

  test("a file store's mail moves to Redis and back exactly once, though each migrate is killed partway", async () => {
    // A namespace and file stores of its own: the stores a migration leaves behind refuse every command.
    const own = { AGENTMAIL_NAMESPACE: "test/migrate" };
    const fileEnv = { ...a.fileStoreEnv({ fresh: true }), ...own };
    const serverEnv = a.env("mover", own);
    const history = await fileStoreWithHistory(fileEnv);
    const before = await mailOf(fileEnv);
    expect(before.unread).toEqual(history.unread);
    expect(before.archived).toEqual(history.archived);

    const dry = await a.amWith(fileEnv, "mover", ["migrate", "--to", hosts.redis.url, "--dry-run"]);
    expect(dry.code).toBe(0);
    expectNoPassword(dry);
    expect((await mailOf(serverEnv)).live).toEqual([]);

    await migrateWithACrash(fileEnv, ["--to", hosts.redis.url]);
    expect(await mailOf(serverEnv)).toEqual(before);
    // The source now says where its mail went, and delivers nothing more.
    const left = await a.amWith(fileEnv, "mover", ["receive"]);
    expect(left.code).toBe(1);
    expect(left.stderr).toContain("; point agentmail there: export AGENTMAIL_URL=");
    expectNoPassword(left);

    const backEnv: Record<string, string> = { ...a.fileStoreEnv({ fresh: true }), ...own };
    await migrateWithACrash(backEnv, ["--from", hosts.redis.url]);
    expect(await mailOf(backEnv)).toEqual(before);
    const onServer = await a.amWith(serverEnv, "mover", ["inbox"]);
    expect(onServer.code).toBe(1);
    expect(onServer.stderr).toContain(`; point agentmail there: unset AGENTMAIL_URL; export AGENTMAIL_DIR=${backEnv.AGENTMAIL_DIR}`);
  });
});

describe("doctor on a shared store", () => {
  test("checks the server (version, persistence, namespace) and says nothing of a password", async () => {
    const result = await a.am("alice", ["doctor", "--json"]);
    expectNoPassword(result);
    const report = oneJson(result) as { ok: boolean; store: string; findings: { area: string; status: string; message: string }[] };
    const server = report.findings.filter((finding) => finding.area === "store").map((finding) => finding.message);
    expect(server.join("\n")).toContain("namespace github.com/acme/widgets");
    expect(server.join("\n")).toMatch(/runs Redis \d+\.\d+/);
    expect(report.store).toStartWith("redis+unix://");
  });
});

describe("the mailman of each host", () => {
  test("outlives a clean restart of the server (AOF): says so in its log, and reminds of mail sent after it", async () => {
    b.tmux.addWindow("fred", b.clone);
    await startFakeAgent(b.tmux, "fred", fakeClaude(installFakeAgents(b.tmux.dir)));
    expect((await b.am("fred", ["status", "ready"])).code).toBe(0);
    const started = await b.am("fred", ["mailman", "--daemon", "--typing", "--interval", "2", "--sweep", "0.2"], DEFAULT_TIMEOUT);
    const pid = printedPid(started.stdout);
    try {
      expect({ code: started.code, stderr: started.stderr }).toEqual({ code: 0, stderr: "" });
      const status = oneJson(await b.am("fred", ["mailman", "status", "--json"])) as { log: string };
      const log = () => readFileSync(status.log, "utf8");
      await hosts.redis.stop();
      await waitFor(
        () => `the mailman to notice the server away:\n${log()}`,
        () => log().includes("cannot reach the mail server"),
      );
      await hosts.redis.launch();
      await waitFor(
        () => `the mailman to say the server answers again:\n${log()}`,
        () => log().includes("answers again"),
      );
      expect(alive(pid!)).toBe(true);
      expectSent(await a.am("alice", ["send", "fred", "after the restart"]));
      await waitFor(
        () => `a reminder in fred's pane:\n${paneText(b.tmux, "fred")}`,
        () => paneText(b.tmux, "fred").includes("got: agentmail: 1 unread message."),
      );
      expect(log()).not.toContain(PASSWORD);
    } finally {
      await b.am("fred", ["mailman", "stop"]);
      if (pid && alive(pid)) killPid(pid);
    }
  });

  test("reminds an agent on its own host of mail sent from another host", async () => {
    b.tmux.addWindow("erin", b.clone);
    // An agent CLI at its prompt: the mailman types into nothing else.
    await startFakeAgent(b.tmux, "erin", fakeClaude(installFakeAgents(b.tmux.dir)));
    expect((await b.am("erin", ["status", "ready"])).code).toBe(0);
    const started = await b.am("erin", ["mailman", "--daemon", "--typing", "--interval", "2", "--sweep", "0.2"]);
    const pid = printedPid(started.stdout);
    try {
      expect({ code: started.code, stderr: started.stderr }).toEqual({ code: 0, stderr: "" });
      expectSent(await a.am("alice", ["send", "erin", "from the other host"]));
      await waitFor(
        () => `a reminder in erin's pane:\n${paneText(b.tmux, "erin")}`,
        () => paneText(b.tmux, "erin").includes("got: agentmail: 1 unread message."),
      );
    } finally {
      await b.am("erin", ["mailman", "stop"]);
      if (pid && alive(pid)) killPid(pid);
    }
  });
});
