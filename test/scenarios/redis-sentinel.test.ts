/**
 * Agents on two hosts sharing mail through Redis Sentinel, against the compiled binary: two tmux servers with their
 * own AGENTMAIL_HOST and their own clone of one repository, a private deployment of a primary, two replicas and three
 * sentinels (test/support/redis-sentinel.ts), with a password that must never be printed. The primary is killed mid
 * storm, frozen past the sentinels' down-after, and its replicas partitioned; every outcome is counted (printed,
 * failed, received once, twice, never), never timed. Waits are for conditions (the sentinels name another primary, a
 * node is demoted or caught up) with bounds a loaded machine's Sentinel TILT fits in.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { readFileSync } from "node:fs";
import type { Message } from "../../src/mail/message.ts";
import { chunksOf } from "../support/byte-stream.ts";
import { BINARY, expectError, expectSent, oneJson, patient, shown, type Result } from "../support/e2e.ts";
import { fakeClaude, installFakeAgents, startFakeAgent } from "../support/fake-agent.ts";
import { Host } from "../support/hosts.ts";
import { StormTally } from "../support/mail-storm.ts";
import { FAILOVER_BOUND_MS, PATIENT, SentinelCluster } from "../support/redis-sentinel.ts";
import type { RedisServer } from "../support/redis-server.ts";
import { alive, killPid, paneText, printedPid, waitFor } from "../support/workflow.ts";

const PASSWORD = "pw-Sentinel!9-never-shown";
const SENDERS = ["s1", "s2", "s3", "s4"];
const RECEIVERS = ["r1", "r2"];
const PER_SENDER = 100;

let cluster: SentinelCluster;
let a: Host;
let b: Host;
/** The URL every agent uses; a test sets its parameters (replicas=…) for its own run. */
let url = "";

beforeAll(async () => {
  cluster = await SentinelCluster.start({ password: PASSWORD });
  url = cluster.url();
  const windows = (host: string) => ["alice", "bob", ...SENDERS.map((s) => `${host}-${s}`), ...RECEIVERS.map((r) => `${host}-${r}`)];
  a = new Host("host-a", windows("a"), () => url);
  b = new Host("host-b", windows("b"), () => url);
  for (const agent of ["bob", ...RECEIVERS.map((r) => `b-${r}`)]) expect((await b.am(agent, ["status", "ready"])).code).toBe(0);
});

// Each test starts from a whole deployment, even after one that failed midway with a node down or frozen.
beforeEach(async () => {
  await cluster.restore();
});

afterAll(async () => {
  a?.remove();
  b?.remove();
  await cluster?.remove();
});

/** As a user has it: AGENTMAIL_REDIS_TIMEOUT unset (2 s), failover-wait at its default (30 s). */
const AS_USERS_HAVE_IT = { AGENTMAIL_REDIS_TIMEOUT: "" };

function expectNoPassword(...results: Result[]): void {
  for (const result of results) expect(result.stdout + result.stderr).not.toContain(PASSWORD);
}

const receivers = () => [...RECEIVERS.map((r) => ({ host: a, agent: `a-${r}` })), ...RECEIVERS.map((r) => ({ host: b, agent: `b-${r}` }))];
const senders = () => [...SENDERS.map((s) => ({ host: a, agent: `a-${s}` })), ...SENDERS.map((s) => ({ host: b, agent: `b-${s}` }))];

/**
 * 8 senders (4 per host) × 100 messages to a role that the 4 receivers (2 per host) take from, while `meanwhile`
 * runs (it gets the number of ids printed so far). Receivers keep going until the senders are done and the queue is
 * empty; then the tally.
 */
async function storm(role: string, meanwhile: (printed: () => number) => Promise<void>): Promise<StormTally> {
  for (const { host, agent } of receivers()) expect((await host.am(agent, ["join", role], AS_USERS_HAVE_IT)).code).toBe(0);
  const tally = new StormTally();
  let sending = true;
  const sent = Promise.all(
    senders().map(async ({ host, agent }) => {
      for (let i = 0; i < PER_SENDER; i++) {
        const started = performance.now();
        const result = await host.am(agent, ["send", `role:${role}`, `${agent} ${i}`], AS_USERS_HAVE_IT);
        expectNoPassword(result);
        tally.send(result, performance.now() - started);
      }
    }),
  ).finally(() => {
    sending = false;
  });
  const taking = Promise.all(
    receivers().map(async ({ host, agent }) => {
      for (;;) {
        const done = !sending;
        const result = await host.am(agent, ["receive", "--json"], AS_USERS_HAVE_IT);
        expectNoPassword(result);
        if (!tally.receive(result) && done && result.code === 0) return;
      }
    }),
  );
  await Promise.all([sent, meanwhile(() => tally.printed.length), taking]);
  return tally;
}

/** Kills the primary once `printed()` reaches `after`; returns the seconds until a majority of sentinels named another. */
async function killPrimaryAfter(printed: () => number, after: number): Promise<{ old: RedisServer; seconds: number }> {
  await waitFor(`${after} sends printed before the kill`, () => printed() >= after, 180_000);
  const old = await cluster.primary();
  const killed = performance.now();
  await old.kill();
  await cluster.promotedOver(old);
  return { old, seconds: (performance.now() - killed) / 1000 };
}

/**
 * The storm with `params` in the URL, the primary SIGKILLed after 200 sends printed; prints the counts and the
 * failover time (reported, never asserted), and checks every send either printed an id or failed.
 */
async function killStorm(params: string) {
  url = cluster.url(params);
  let failover: { old: RedisServer; seconds: number } | null = null;
  const tally = await storm(`storm-${params.replace("=", "")}`, async (printed) => {
    failover = await killPrimaryAfter(printed, 200);
  });
  const { old, seconds } = failover!;
  const counts = tally.counts();
  console.log(`storm, ${params}: failover ${seconds.toFixed(1)} s; ${JSON.stringify(counts)}`);
  expect(counts.printed + counts.failed).toBe(8 * PER_SENDER);
  return { tally, counts, old };
}

/** Brings a killed node back (as a replica of the new primary) and waits until the deployment is whole. */
async function heal(old: RedisServer): Promise<void> {
  if (!old.running) await old.launch();
  await cluster.waitHealthy();
}

describe("the primary killed mid-storm", () => {
  test("replicas=1 (the default): every printed id received exactly once, no duplicate, nothing lost", async () => {
    const { tally, counts, old } = await killStorm("replicas=1");
    expect(counts.duplicates).toBe(0);
    expect(counts.lost).toBe(0);
    expect(counts.unexplained).toBe(0);
    // Every printed id was shown by exactly one receive that exited 0 (or, once, by one that failed after printing it).
    for (const id of tally.printed) {
      const times = tally.received.filter((each) => each === id).length;
      expect(times === 1 || (times === 0 && tally.shownByFailed.includes(id))).toBe(true);
    }
    await heal(old);
  });
});

describe("long-lived processes through a failover", () => {
  test("receive --wait, watch --json, the MCP server and the mailman started before the kill all carry on with the new primary", async () => {
    url = cluster.url(PATIENT);
    b.tmux.addWindow("erin", b.clone);
    await startFakeAgent(b.tmux, "erin", fakeClaude(installFakeAgents(b.tmux.dir)));
    expect((await b.am("erin", ["status", "ready"])).code).toBe(0);
    const mailman = await b.am("erin", ["mailman", "--daemon", "--typing", "--interval", "2", "--sweep", "0.2"], AS_USERS_HAVE_IT);
    const mailmanPid = printedPid(mailman.stdout);
    const env = patient(b.env("bob", AS_USERS_HAVE_IT));
    const transport = new StdioClientTransport({ command: BINARY, args: ["mcp"], env, cwd: b.clone, stderr: "pipe" });
    const mcp = new Client({ name: "e2e", version: "1.0.0" });
    await mcp.connect(transport);
    const watching = Bun.spawn([BINARY, "watch", "--json"], {
      env: patient(b.env("alice", AS_USERS_HAVE_IT)),
      cwd: b.clone,
      stdout: "pipe",
      stderr: "pipe",
    });
    let streamed = "";
    void (async () => {
      for await (const chunk of chunksOf(watching.stdout)) streamed += new TextDecoder().decode(chunk);
    })();
    try {
      expect({ code: mailman.code, stderr: mailman.stderr }).toEqual({ code: 0, stderr: "" });
      await waitFor("watch's first event", () => streamed.includes('"event":"agents"'));
      const waiting = b.start("b-r1", ["receive", "--wait", "120"], AS_USERS_HAVE_IT);
      const mcpWaiting = mcp.callTool({ name: "wait", arguments: { timeout_seconds: 120 } }, undefined, {
        timeout: 180_000,
      }) as Promise<CallToolResult>;
      // Both blocked on the primary about to die: the canary makes the test exercise the wake-up, not the first look.
      await Bun.sleep(500);
      const old = await cluster.primary();
      await old.kill();
      await cluster.promotedOver(old);
      const toWaiter = expectSent(await a.am("alice", ["send", "b-r1", "after the failover"], AS_USERS_HAVE_IT));
      const toBob = expectSent(await a.am("alice", ["send", "bob", "to the MCP server"], AS_USERS_HAVE_IT));
      const toErin = expectSent(await a.am("alice", ["send", "erin", "to the mailman's agent"], AS_USERS_HAVE_IT));
      const woken = await waiting.done;
      expect({ code: woken.code, stdout: woken.stdout }).toEqual({ code: 0, stdout: shown("alice", toWaiter, "after the failover") });
      const [item] = (await mcpWaiting).content;
      expect(item?.type === "text" ? JSON.parse(item.text) : null).toMatchObject({ id: toBob, message: "to the MCP server" });
      await waitFor(`watch to stream ${toErin}`, () => streamed.includes(`"id":"${toErin}"`));
      await waitFor(
        () => `a reminder in erin's pane:\n${paneText(b.tmux, "erin")}`,
        () => paneText(b.tmux, "erin").includes("got: agentmail: 1 unread message."),
      );
      expect(alive(mailmanPid!)).toBe(true);
      await heal(old);
    } finally {
      await mcp.close();
      watching.kill("SIGINT");
      expect(await watching.exited).toBe(0);
      const status = oneJson(await b.am("erin", ["mailman", "status", "--json"])) as { log: string };
      expect(readFileSync(status.log, "utf8")).not.toContain(PASSWORD);
      await b.am("erin", ["mailman", "stop"]);
      if (mailmanPid && alive(mailmanPid)) killPid(mailmanPid);
    }
    expect(streamed).not.toContain(PASSWORD);
  });
});

describe("the primary frozen past down-after", () => {
  test("sends go on through the failover; the thawed primary is demoted; nothing printed is lost, even from a connection that outlived the freeze", async () => {
    // The WAIT on the thawed old primary must time out (no replica there) for the send to move on: not a minute.
    url = cluster.url(`replica-timeout=5000&failover-wait=${FAILOVER_BOUND_MS}`);
    const env = patient(a.env("alice", AS_USERS_HAVE_IT));
    const transport = new StdioClientTransport({ command: BINARY, args: ["mcp"], env, cwd: a.clone, stderr: "pipe" });
    const mcp = new Client({ name: "e2e", version: "1.0.0" });
    await mcp.connect(transport);
    const viaMcp = async (body: string) => {
      const result = (await mcp.callTool({ name: "send", arguments: { recipient: "bob", message: body } }, undefined, {
        timeout: 180_000,
      })) as CallToolResult;
      const [item] = result.content;
      expect(result.isError ?? false).toBe(false);
      return (item?.type === "text" ? JSON.parse(item.text) : null) as { id: string };
    };
    const tally = new StormTally();
    try {
      tally.printed.push((await viaMcp("before the freeze")).id);
      const old = await cluster.primary();
      old.freeze();
      let thawed = false;
      try {
        // Sends during the freeze wait for the failover, or fail saying so.
        const during = Promise.all(
          SENDERS.map(async (s) => {
            for (let i = 0; i < 5; i++) {
              const started = performance.now();
              tally.send(await a.am(`a-${s}`, ["send", "bob", `frozen ${s} ${i}`], AS_USERS_HAVE_IT), performance.now() - started);
            }
          }),
        );
        await cluster.promotedOver(old);
        old.thaw();
        thawed = true;
        // At once, on the MCP server's connection to the old primary, before the sentinels demote it.
        tally.printed.push((await viaMcp("right after the thaw")).id);
        await during;
      } finally {
        if (!thawed) old.thaw();
      }
      await waitFor(
        `${old.port} to be demoted`,
        async () => (await cluster.replication(old).catch(() => null))?.get("role") === "slave",
        180_000,
      );
      await heal(old);
      while (tally.receive(await b.am("bob", ["receive", "--json"], AS_USERS_HAVE_IT)));
      const counts = tally.counts();
      console.log(`freeze: ${JSON.stringify(counts)}`);
      expect(counts).toMatchObject({ duplicates: 0, lost: 0, unexplained: 0, receiveFailures: 0 });
      expect(counts.receivedOnce).toBe(counts.printed);
    } finally {
      await mcp.close();
    }
  });
});

describe("migrate through Sentinel", () => {
  test("a file store's mail moves to the deployment, and the old store's clean-up names the primary", async () => {
    url = cluster.url(PATIENT);
    const own = { AGENTMAIL_NAMESPACE: "test/migrate-sentinel" };
    const fileEnv = { ...a.fileStoreEnv({ fresh: true }), ...own };
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(expectSent(await a.amWith(fileEnv, "alice", ["send", "bob", `history ${i}`])));
    const moved = await a.amWith(fileEnv, "alice", ["migrate", "--to", url, "--json"]);
    expect({ code: moved.code, stderr: moved.stderr }).toEqual({ code: 0, stderr: "" });
    expectNoPassword(moved);
    const inbox = oneJson(await b.am("bob", ["inbox", "--json"], own)) as Message[];
    expect(inbox.map((message) => message.id)).toEqual(ids);
    // Back from Redis, the clean-up of the Sentinel namespace runs redis-cli against the primary of the moment.
    const backEnv = { ...a.fileStoreEnv({ fresh: true }), ...own };
    const back = await a.amWith({ ...backEnv }, "alice", ["migrate", "--from", url, "--json"]);
    expect({ code: back.code, stderr: back.stderr }).toEqual({ code: 0, stderr: "" });
    const primary = await cluster.primary();
    expect((oneJson(back) as { remove_source: string }).remove_source).toContain(`redis-cli -h 127.0.0.1 -p ${primary.port}`);
    expectNoPassword(back);
  });
});

describe("a replica partitioned, replicas=1", () => {
  test("with one replica frozen sends succeed; with both, a send waits the timeout and fails saying it may still be delivered", async () => {
    // Long enough for the replica still up to answer on a loaded machine; the send with none up waits it out.
    url = cluster.url(`replica-timeout=5000&failover-wait=${FAILOVER_BOUND_MS}`);
    const [first, second] = await cluster.replicas();
    first!.freeze();
    try {
      const one = expectSent(await a.am("alice", ["send", "bob", "one replica answers"], AS_USERS_HAVE_IT));
      second!.freeze();
      const failed = await a.am("alice", ["send", "bob", "no replica answers"], AS_USERS_HAVE_IT);
      const line = expectError(failed, 1);
      expect(line).toMatch(/^error: message (\S+) may still be delivered: the primary of redis\+sentinel:\/\/127\.0\.0\.1:\d+/);
      expect(line).toContain("0 of the 1 replica it must reach (replicas=1 in AGENTMAIL_URL) acknowledged it within 5 s");
      expect(line.trimEnd()).toEndWith("; check 'agentmail sent' for it before sending it again");
      expectNoPassword(failed);
      const id = /^error: message (\S+)/.exec(line)![1]!;
      // As it says: sent lists it, and once the replicas are back it is delivered, once.
      const sent = oneJson(await a.am("alice", ["sent", "--json"], AS_USERS_HAVE_IT)) as Message[];
      expect(sent.map((message) => message.id)).toContain(id);
      first!.thaw();
      second!.thaw();
      const got: string[] = [];
      for (;;) {
        const message = JSON.parse((await b.am("bob", ["receive", "--json"], AS_USERS_HAVE_IT)).stdout) as Message | null;
        if (!message) break;
        got.push(message.id);
      }
      expect(got).toEqual([one, id]);
    } finally {
      first!.thaw();
      second!.thaw();
    }
    await cluster.waitHealthy();
  });
});

describe("the primary killed mid-storm, replicas=0", () => {
  test("the same storm without waiting for replicas: what it loses is reported, not asserted", async () => {
    const { old } = await killStorm("replicas=0");
    await heal(old);
  });
});
