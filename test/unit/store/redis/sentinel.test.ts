/**
 * The Redis store through Sentinel, in process, against a private deployment (test/support/redis-sentinel.ts: a
 * primary, two replicas, three sentinels): the Store contract through a Sentinel URL, discovery and its failures,
 * `replicas=` (WAIT) with replicas frozen, a primary killed or frozen under a store in use, and doctor's report.
 * Every wait is for a condition (the sentinels name another primary, a node is demoted), never a fixed time.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { RedisClient } from "bun";
import { redisFindings } from "../../../../src/doctor/redis.ts";
import { MailServerUnreachable } from "../../../../src/store/server.ts";
import type { RedisStore } from "../../../../src/store/redis/redis-store.ts";
import { FAILOVER_BOUND_MS, PATIENT, PRIMARY_NAME, SentinelCluster } from "../../../support/redis-sentinel.ts";
import type { RedisServer } from "../../../support/redis-server.ts";
import { claimsContract } from "../../../support/claims-contract.ts";
import { feedContract } from "../../../support/feed-contract.ts";
import { failureOf, storeContract } from "../../../support/store-contract.ts";
import { waitFor } from "../../../support/workflow.ts";
import { drain, freshNamespace, mail, storeAt } from "./helpers.ts";

const PASSWORD = "sentinel-pw-77";
let cluster: SentinelCluster;
const opened: RedisStore[] = [];

beforeAll(async () => {
  cluster = await SentinelCluster.start({ password: PASSWORD });
});

// Each test starts from a whole deployment, even after one that failed midway with a node down or frozen.
beforeEach(async () => {
  await cluster.restore();
});

afterAll(async () => {
  for (const store of opened) store.close();
  await cluster?.remove();
});

/** A store through the sentinels, with these URL parameters (patient unless told); closed after the file. */
function open(namespace: string, params = PATIENT, timeoutMs = 2_000): RedisStore {
  const store = storeAt(cluster.url(params), namespace, { timeoutMs });
  opened.push(store);
  return store;
}

/** What a raw client on a data node sees (a key's existence), bypassing the store. */
async function onNode(node: RedisServer, command: string, args: string[]): Promise<unknown> {
  const client = new RedisClient(`redis://:${PASSWORD}@127.0.0.1:${node.port}`, { autoReconnect: false, maxRetries: 0 });
  try {
    return await client.send(command, args);
  } finally {
    client.close();
  }
}

async function roleOf(node: RedisServer): Promise<string | null> {
  return ((await onNode(node, "ROLE", []).catch(() => null)) as [string] | null)?.[0] ?? null;
}

/** The contracts' places: a fresh namespace each, through the sentinels (patient: about what, not how fast). */
const places = {
  freshPlace: (label: string) => freshNamespace(`sentinel-${label}`),
  open: (namespace: string) => storeAt(cluster.url(PATIENT), namespace, { timeoutMs: 60_000 }),
  namespaces: true,
  freshProject: (label: string) => {
    const namespace = freshNamespace(`sentinel-${label}`);
    return { project: { key: namespace, repository: null }, place: namespace };
  },
};

describe("the Store, claims and feed contracts through Sentinel", () => {
  storeContract(places);
  claimsContract(places);
  feedContract(places);
});

describe("finding the primary", () => {
  test("the store writes on the primary the sentinels name, and by default each send reaches a replica", async () => {
    const namespace = freshNamespace("found");
    const store = open(namespace);
    expect(store.location).toBe(cluster.url(PATIENT).replace(`:${PASSWORD}@`, ""));
    expect(Bun.inspect(store)).not.toContain(PASSWORD);
    await store.append(mail("alice", "bob", "through sentinel"));
    const key = `agentmail:{${namespace}}:mail:bob`;
    const primary = await cluster.primary();
    expect(await onNode(primary, "EXISTS", [key])).toBe(1);
    // WAIT 1 came back before the send did: at least one replica holds it already.
    const copies = await Promise.all((await cluster.replicas()).map((replica) => onNode(replica, "EXISTS", [key])));
    expect(copies).toContain(1);
    expect(await drain(store, "bob")).toEqual(["through sentinel"]);
  });

  test("a name no sentinel monitors, or sentinels that do not run, fail at once saying why", async () => {
    const misnamed = storeAt(cluster.url().replace(`/${PRIMARY_NAME}`, "/nobody"), freshNamespace("misnamed"), { timeoutMs: 2_000 });
    const unknown = await failureOf(misnamed.countUnread("bob"));
    misnamed.close();
    expect(unknown).toBeInstanceOf(MailServerUnreachable);
    expect(unknown.message).toContain("no sentinel named the primary (sentinel 127.0.0.1:");
    expect(unknown.message).toContain("monitors no primary named nobody");
    expect(unknown.message).not.toContain(PASSWORD);
    const nowhere = storeAt(`redis+sentinel://:${PASSWORD}@127.0.0.1:1,127.0.0.1:2/${PRIMARY_NAME}`, freshNamespace("nowhere"), {
      timeoutMs: 2_000,
    });
    const down = await failureOf(nowhere.append(mail("alice", "bob", "lost?")));
    nowhere.close();
    expect(down.message).toBe(
      `cannot reach the mail server at redis+sentinel://127.0.0.1:1,127.0.0.1:2/${PRIMARY_NAME}: no sentinel named the primary ` +
        "(sentinel 127.0.0.1:1: the connection was refused or closed (is the sentinel running?); " +
        "sentinel 127.0.0.1:2: the connection was refused or closed (is the sentinel running?))",
    );
  });

  test("a sentinel that names a replica is not believed: ROLE says so, and the store keeps asking until failover-wait", async () => {
    const [replica] = await cluster.replicas();
    const sentinel = cluster.sentinels[0]!;
    await sentinel.ask("SENTINEL", ["MONITOR", "misled", "127.0.0.1", String(replica!.port), "2"]);
    await sentinel.ask("SENTINEL", ["SET", "misled", "auth-pass", PASSWORD]);
    const namespace = freshNamespace("misled");
    try {
      const store = storeAt(`redis+sentinel://:${PASSWORD}@127.0.0.1:${sentinel.port}/misled?failover-wait=300`, namespace, {
        timeoutMs: 2_000,
      });
      const error = await failureOf(store.append(mail("alice", "bob", "to a replica?")));
      store.close();
      expect(error.message).toContain(`127.0.0.1:${replica!.port}, which the sentinels named, is not the primary (its ROLE says slave)`);
      expect(error.message).toContain("still so after trying again");
      expect(await onNode(replica!, "EXISTS", [`agentmail:{${namespace}}:mail:bob`])).toBe(0);
    } finally {
      await sentinel.ask("SENTINEL", ["REMOVE", "misled"]);
    }
  });
});

describe("replicas=", () => {
  test("a send waits for the replicas it asks for: one frozen is fine; both frozen fails, saying it may still be delivered", async () => {
    const namespace = freshNamespace("partition");
    // Long enough for the replica still up to answer on a loaded machine; the send with none up waits it out.
    const store = open(namespace, "replicas=1&replica-timeout=3000");
    const [first, second] = await cluster.replicas();
    first!.freeze();
    try {
      await store.append(mail("alice", "bob", "one replica is enough"));
      second!.freeze();
      const stuck = mail("alice", "bob", "no replica answers");
      const error = await failureOf(store.append(stuck));
      expect(error.message).toBe(
        `message ${stuck.id} may still be delivered: the primary of ${store.location} made the change, but 0 of the 1 replica it must reach ` +
          "(replicas=1 in AGENTMAIL_URL) acknowledged it within 3 s, so a failover now could undo it; bring the replicas back, " +
          "or lower replicas= in AGENTMAIL_URL; check 'agentmail sent' for it before sending it again",
      );
      // As it says: on the primary, and sent.
      expect((await store.sentBy("alice")).map((record) => record.message.id)).toContain(stuck.id);
      const twice = open(namespace, "replicas=2&replica-timeout=300");
      const shown: string[] = [];
      const mark = await failureOf(twice.take("bob", (message) => void shown.push(message.message)));
      expect(shown).toEqual(["one replica is enough"]);
      expect(mark.message).toContain(
        `was shown and marked read, but the primary of ${twice.location} made the change, but 0 of the 2 replicas`,
      );
    } finally {
      first!.thaw();
      second!.thaw();
    }
    expect(await drain(store, "bob")).toEqual(["no replica answers"]);
    await cluster.waitHealthy();
  });
});

describe("failover", () => {
  test("the primary killed under a store in use: sends go on on the new primary, each stored once; a blocked wait wakes there", async () => {
    const namespace = freshNamespace("killed");
    const sender = open(namespace);
    const waiter = open(namespace);
    await sender.append(mail("alice", "bob", "before"));
    expect(await drain(waiter, "bob")).toEqual(["before"]);
    const watch = await waiter.watch(["bob"]);
    const old = await cluster.primary();
    const killedAt = performance.now();
    const killing = old.kill();
    const sent: string[] = [];
    const failed: string[] = [];
    for (let i = 0; i < 30; i++) {
      const message = mail("alice", "bob", `during ${i}`);
      await sender.append(message).then(
        () => sent.push(message.message),
        (error: Error) => failed.push(error.message),
      );
    }
    await killing;
    const promoted = await cluster.promotedOver(old);
    console.log(
      `primary ${old.port} killed; the sentinels named ${promoted.port} after ${((performance.now() - killedAt) / 1000).toFixed(1)} s`,
    );
    expect(failed).toEqual([]);
    // The waiter's blocked read was cut off with the old primary; it waits on the new one and wakes for the next send.
    const woken = watch.changed(60_000);
    await sender.append(mail("alice", "bob", "after"));
    await woken;
    watch.close();
    expect(await drain(waiter, "bob")).toEqual([...sent, "after"]);
    await old.launch();
    await cluster.waitHealthy();
  });

  test("a frozen primary replaced meanwhile: a store that used it writes to the new primary after the thaw, and nothing is lost when it is demoted", async () => {
    const namespace = freshNamespace("frozen");
    // Both ways a store notices: asking the sentinels before using an idle connection (replicas=0), and a WAIT no
    // replica answers on the old primary (replicas=1).
    const patient = `failover-wait=${FAILOVER_BOUND_MS}`;
    const stores = {
      "replicas=0": open(namespace, `replicas=0&${patient}`),
      // The WAIT on the thawed old primary must time out (no replica there) for the send to move on: not a minute.
      "replicas=1": open(namespace, `replicas=1&replica-timeout=5000&${patient}`),
    };
    for (const [label, store] of Object.entries(stores)) await store.append(mail("alice", "bob", `before, ${label}`));
    const old = await cluster.primary();
    old.freeze();
    let thawed = false;
    try {
      await cluster.promotedOver(old);
      old.thaw();
      thawed = true;
      // At once, before the sentinels demote it: the old primary still takes writes from anyone connected to it.
      for (const [label, store] of Object.entries(stores)) await store.append(mail("alice", "bob", `after, ${label}`));
    } finally {
      if (!thawed) old.thaw();
    }
    await waitFor(`${old.port} to be demoted`, async () => (await roleOf(old)) === "slave", 180_000);
    await cluster.waitHealthy();
    const reader = open(namespace);
    expect((await drain(reader, "bob")).sort()).toEqual([
      "after, replicas=0",
      "after, replicas=1",
      "before, replicas=0",
      "before, replicas=1",
    ]);
  });
});

describe("doctor through Sentinel", () => {
  test("names the sentinels it reached, the primary, its replicas and how far behind each is, and what a write waits for", async () => {
    const primary = await cluster.primary();
    const env = { AGENTMAIL_URL: cluster.url(), AGENTMAIL_NAMESPACE: freshNamespace("doctor"), AGENTMAIL_REDIS_TIMEOUT: "60" };
    const lines = (await redisFindings({ cwd: "/", env })).map((finding) => `${finding.status}: ${finding.message}`);
    expect(lines.join("\n")).not.toContain(PASSWORD);
    expect(lines).toContain(
      `ok: 3 of 3 sentinels answer and name the primary of ${PRIMARY_NAME}: 127.0.0.1:${primary.port} (quorum 2, each knowing 2 replicas and 2 other sentinels)`,
    );
    expect(
      lines.filter((line) => /^ok: replica 127\.0\.0\.1:\d+: online, \d+ bytes behind, last heard \d+ s ago$/.test(line)),
    ).toHaveLength(2);
    expect(lines).toContain("ok: each write waits for 1 replica of 2 online (replicas=1): a failover keeps what was acknowledged");

    const asked = (await redisFindings({ cwd: "/", env: { ...env, AGENTMAIL_URL: cluster.url("replicas=3") } })).filter(
      (finding) => finding.status === "problem",
    );
    expect(asked.map((finding) => finding.message)).toEqual([
      `replicas=3 in AGENTMAIL_URL asks each write to reach 3 replicas, and 127.0.0.1:${primary.port} has 2 online: every send fails after 2000 ms`,
    ]);
    const sentinel = cluster.sentinels[2]!;
    const withDead = cluster.url().replace(`127.0.0.1:${sentinel.port}`, "127.0.0.1:1");
    const dead = (await redisFindings({ cwd: "/", env: { ...env, AGENTMAIL_URL: withDead } })).map(
      (finding) => `${finding.status}: ${finding.message}`,
    );
    expect(dead).toContain(
      "problem: sentinel 127.0.0.1:1 does not answer: the connection was refused or closed (is the sentinel running?)",
    );
    expect(dead).toContainEqual(expect.stringMatching(/^ok: 2 of 3 sentinels answer and name the primary/));
  });
});
