/**
 * The Redis mail store against a real redis-server on a unix socket in a temp dir (AOF, appendfsync always):
 * send, claim, acknowledge, release, unread counts, history, compaction, the registry and waiting.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AgentmailError } from "../../src/core/errors.ts";
import type { Claim } from "../../src/store/mail-store.ts";
import { RedisServer } from "../support/redis-server.ts";
import { drain, freshNamespace, mail, storeAt } from "./helpers.ts";
import { RedisClient } from "bun";

let server: RedisServer;

beforeAll(async () => {
  server = await RedisServer.start();
});

afterAll(async () => {
  await server?.remove();
});

describe("send, claim, acknowledge", () => {
  test("a sent message is claimed with its fields, and is read with read_at once acknowledged", async () => {
    const store = storeAt(server.url, freshNamespace("basic"));
    try {
      const sent = { ...mail("alice", "bob", "hello\nworld"), thread: "t-1" };
      await store.append([sent]);
      expect(await store.countUnread("bob")).toBe(1);

      const claim = (await store.claim("bob"))!;
      expect(claim.mailbox).toBe("bob");
      expect(claim.message).toMatchObject({ id: sent.id, from: "alice", to: "bob", message: "hello\nworld", thread: "t-1" });
      expect(claim.message.created_at).toBe(sent.created_at);
      expect(await store.countUnread("bob")).toBe(1);

      await store.acknowledge(claim);
      expect(await store.countUnread("bob")).toBe(0);
      expect(await store.claim("bob")).toBeNull();
      const [stored] = await store.messages("bob");
      expect(stored).toMatchObject({ id: sent.id, read_flag: true, thread: "t-1" });
      expect(typeof stored!.read_at).toBe("string");
      expect(Date.parse(String(stored!.read_at))).not.toBeNaN();
    } finally {
      store.close();
    }
  });

  test("messages come out oldest first, and a mailbox with nothing claimable gives null", async () => {
    const store = storeAt(server.url, freshNamespace("fifo"));
    try {
      expect(await store.claim("bob")).toBeNull();
      for (let i = 0; i < 5; i++) await store.append([mail("alice", "bob", `m${i}`)]);
      expect(await drain(store, "bob")).toEqual(["m0", "m1", "m2", "m3", "m4"]);
    } finally {
      store.close();
    }
  });

  test("one append to several mailboxes stores each copy in its own mailbox", async () => {
    const store = storeAt(server.url, freshNamespace("many"));
    try {
      await store.append([mail("alice", "bob", "to bob"), mail("alice", "carol", "to carol"), mail("alice", "bob", "to bob again")]);
      expect(await store.listMailboxes()).toEqual(["bob", "carol"]);
      expect(await drain(store, "bob")).toEqual(["to bob", "to bob again"]);
      expect(await drain(store, "carol")).toEqual(["to carol"]);
    } finally {
      store.close();
    }
  });

  test("sending the same message again stores it once; another message under a taken id is refused and stores nothing", async () => {
    const store = storeAt(server.url, freshNamespace("idempotent"));
    try {
      const first = mail("alice", "bob", "once");
      await store.append([first]);
      await store.append([first]);
      const impostor = { ...mail("eve", "bob", "other text"), id: first.id };
      const bystander = mail("eve", "carol", "should not land");
      const error = await store.append([bystander, impostor]).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(AgentmailError);
      expect((error as AgentmailError).code).toBe("conflict");
      expect(await store.listMailboxes()).toEqual(["bob"]);
      expect(await drain(store, "bob")).toEqual(["once"]);
      await expect(store.append([{ ...mail("alice", "", "x") }])).rejects.toThrow("cannot be empty");
    } finally {
      store.close();
    }
  });

  test("a message appended as read (migration) keeps its read_at and is never claimed", async () => {
    const store = storeAt(server.url, freshNamespace("migrated"));
    try {
      await store.append([{ ...mail("alice", "bob", "old"), read_flag: true, read_at: "2025-01-02T03:04:05.000Z" }]);
      await store.append([{ ...mail("alice", "bob", "old, no read_at"), read_flag: true }]);
      await store.append([mail("alice", "bob", "new")]);
      expect(await store.countUnread("bob")).toBe(1);
      expect(await drain(store, "bob")).toEqual(["new"]);
      const history = await store.messages("bob");
      expect(history.map((message) => [message.message, message.read_flag])).toEqual([
        ["old", true],
        ["old, no read_at", true],
        ["new", true],
      ]);
      expect(history[0]!.read_at).toBe("2025-01-02T03:04:05.000Z");
    } finally {
      store.close();
    }
  });

  test("a released claim is claimable again at once, ahead of later mail", async () => {
    const store = storeAt(server.url, freshNamespace("release"));
    try {
      await store.append([mail("alice", "bob", "first"), mail("alice", "bob", "second")]);
      const claim = (await store.claim("bob"))!;
      expect(claim.message.message).toBe("first");
      await store.release(claim);
      expect(await drain(store, "bob")).toEqual(["first", "second"]);
      // Acknowledging a claim that was given back and delivered again is harmless.
      await store.acknowledge(claim);
      expect(await store.countUnread("bob")).toBe(0);
    } finally {
      store.close();
    }
  });

  test("two receivers claiming at once get different messages; an acknowledged one never comes back", async () => {
    const store = storeAt(server.url, freshNamespace("concurrent"));
    const other = storeAt(server.url, store.namespace);
    try {
      await store.append(Array.from({ length: 20 }, (_, i) => mail("alice", "bob", `m${i}`)));
      const claims = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? store : other).claim("bob")));
      const bodies = claims.map((claim) => claim!.message.message);
      expect(new Set(bodies).size).toBe(20);
      await Promise.all(claims.map((claim, i) => (i % 2 ? store : other).acknowledge(claim!)));
      expect(await store.claim("bob")).toBeNull();
      expect(await store.countUnread("bob")).toBe(0);
    } finally {
      store.close();
      other.close();
    }
  });

  test("a record that is not a message is reported, passed over and kept", async () => {
    const namespace = freshNamespace("garbage");
    const store = storeAt(server.url, namespace);
    const raw = new RedisClient(server.url);
    try {
      await store.append([mail("alice", "bob", "before")]);
      await drain(store, "bob");
      const key = `agentmail:{${namespace}}:mail:bob`;
      await raw.send("XADD", [key, "*", "id", "junk", "record", "{not json"]);
      await store.append([mail("alice", "bob", "after")]);
      const skipped: string[] = [];
      const claim = await store.claim("bob", { onSkip: (mailbox, where, reason) => skipped.push(`${mailbox} ${where} ${reason}`) });
      expect(claim!.message.message).toBe("after");
      expect(skipped).toHaveLength(1);
      expect(skipped[0]).toStartWith("bob stream entry ");
      expect(Number(await raw.send("XLEN", [key]))).toBe(3);
    } finally {
      raw.close();
      store.close();
    }
  });
});

describe("read state", () => {
  test("a read message marked unread is delivered again, before later unread mail", async () => {
    const store = storeAt(server.url, freshNamespace("unread"));
    try {
      const messages = ["a", "b", "c", "d"].map((body) => mail("alice", "bob", body));
      await store.append(messages);
      expect(await drain(store, "bob")).toEqual(["a", "b", "c", "d"]);
      await store.append([mail("alice", "bob", "e")]);
      expect(await store.markUnread("bob", messages[1]!.id)).toBe(true);
      expect(await store.markUnread("bob", messages[1]!.id)).toBe(false);
      expect(await store.countUnread("bob")).toBe(2);
      expect(await drain(store, "bob")).toEqual(["b", "e"]);
      const error = await store.markUnread("bob", "NoSuchId").catch((caught: unknown) => caught);
      expect((error as AgentmailError).code).toBe("not_found");
    } finally {
      store.close();
    }
  });

  test("the first message of a mailbox marked unread is delivered again", async () => {
    const store = storeAt(server.url, freshNamespace("unread-first"));
    try {
      const first = mail("alice", "bob", "first");
      await store.append([first, mail("alice", "bob", "second")]);
      await drain(store, "bob");
      await store.markUnread("bob", first.id);
      expect(await drain(store, "bob")).toEqual(["first"]);
    } finally {
      store.close();
    }
  });

  test("compaction drops the read messages it is asked to, never unread ones, and removes an emptied mailbox", async () => {
    const store = storeAt(server.url, freshNamespace("compact"));
    try {
      await store.append(["old1", "old2", "keep"].map((body) => mail("alice", "bob", body)));
      await drain(store, "bob");
      await store.append([mail("alice", "bob", "unread")]);
      const everything = () => true;
      expect(await store.compact("bob", (message) => message.message.startsWith("old"), true)).toEqual({ dropped: 2, removed: false });
      expect((await store.messages("bob")).length).toBe(4);
      expect(await store.compact("bob", (message) => message.message.startsWith("old"), false)).toEqual({ dropped: 2, removed: false });
      expect((await store.messages("bob")).map((message) => message.message)).toEqual(["keep", "unread"]);
      expect(await store.compact("bob", everything, false)).toEqual({ dropped: 1, removed: false });
      expect(await drain(store, "bob")).toEqual(["unread"]);
      expect(await store.compact("bob", everything, true)).toEqual({ dropped: 1, removed: true });
      expect(await store.compact("bob", everything, false)).toEqual({ dropped: 1, removed: true });
      expect(await store.listMailboxes()).toEqual([]);
      expect(await store.messages("bob")).toEqual([]);
      await store.append([mail("alice", "bob", "a new life")]);
      expect(await drain(store, "bob")).toEqual(["a new life"]);
    } finally {
      store.close();
    }
  });
});

describe("the agent registry", () => {
  test("an agent is recorded with host, pane, status and last seen; a status sticks until changed", async () => {
    const store = storeAt(server.url, freshNamespace("registry"));
    try {
      const first = await store.touchAgent({ name: "bob", host: "h1", pane: "%1", status: "ready" });
      expect(first.registered).toBe(true);
      const again = await store.touchAgent({ name: "bob", host: "h1", pane: "%2" });
      expect(again).toMatchObject({ registered: true, record: { name: "bob", host: "h1", pane: "%2", status: "ready" } });
      if (first.registered && again.registered) expect(again.record.since).toBe(first.record.since);
      await store.touchAgent({ name: "alice", host: "h2", pane: "%9" });
      const agents = await store.listAgents();
      expect(agents.map((agent) => [agent.name, agent.host, agent.status])).toEqual([
        ["alice", "h2", null],
        ["bob", "h1", "ready"],
      ]);
      expect(agents[0]!.since).toBeNull();
      expect(Date.parse(agents[1]!.last_seen)).not.toBeNaN();
      await store.removeAgent("alice");
      expect((await store.listAgents()).map((agent) => agent.name)).toEqual(["bob"]);
    } finally {
      store.close();
    }
  });

  test("a name an agent on another host was seen under recently is refused, with that agent's record", async () => {
    const store = storeAt(server.url, freshNamespace("clash"));
    try {
      await store.touchAgent({ name: "bob", host: "h1", pane: "%1", status: "work" });
      const clash = await store.touchAgent({ name: "bob", host: "h2", pane: "%5" }, { exclusiveMs: 300_000 });
      expect(clash).toMatchObject({ registered: false, holder: { name: "bob", host: "h1", pane: "%1", status: "work" } });
      expect((await store.touchAgent({ name: "bob", host: "h1", pane: "%1" }, { exclusiveMs: 300_000 })).registered).toBe(true);
      // Without exclusivity (or once the other host has been silent long enough) the name moves.
      expect((await store.touchAgent({ name: "bob", host: "h2", pane: "%5" })).registered).toBe(true);
    } finally {
      store.close();
    }
  });
});

describe("waiting for mail", () => {
  test("a wait wakes on a send from another client and sees only mail newer than the watch", async () => {
    const namespace = freshNamespace("wait");
    const waiter = storeAt(server.url, namespace);
    const sender = storeAt(server.url, namespace);
    try {
      await sender.append([mail("alice", "bob", "before the watch")]);
      const watch = await waiter.watch("bob");
      const woke = watch.changed(30_000);
      const sentAt = performance.now();
      await sender.append([mail("alice", "bob", "wake up")]);
      expect(await woke).toBe(true);
      console.error(`redis wake latency (in process, second client): ${(performance.now() - sentAt).toFixed(2)} ms`);
      expect(await drain(waiter, "bob")).toEqual(["before the watch", "wake up"]);
      // A send to someone else does not ring bob's bell; the timeout ends the wait.
      await sender.append([mail("alice", "carol", "not for bob")]);
      expect(await watch.changed(50)).toBe(false);
      watch.close();
      watch.close();
      expect(await watch.changed(10)).toBe(false);
    } finally {
      waiter.close();
      sender.close();
    }
  });

  test("a watch on every mailbox wakes on a send to anyone, and on a claim given back", async () => {
    const namespace = freshNamespace("wait-any");
    const store = storeAt(server.url, namespace);
    try {
      const any = await store.watch(null);
      const bobs = await store.watch("bob");
      await store.append([mail("alice", "carol", "hi")]);
      expect(await any.changed(30_000)).toBe(true);
      await store.append([mail("alice", "bob", "hi bob")]);
      expect(await bobs.changed(30_000)).toBe(true);
      const claim = (await store.claim("bob")) as Claim;
      const woken = bobs.changed(30_000);
      await store.release(claim);
      expect(await woken).toBe(true);
      any.close();
      bobs.close();
    } finally {
      store.close();
    }
  });

  test("closing a watch ends a pending wait at once", async () => {
    const store = storeAt(server.url, freshNamespace("wait-abort"));
    try {
      const watch = await store.watch("bob");
      const pending = watch.changed(600_000);
      setTimeout(() => watch.close(), 20);
      expect(await pending).toBe(false);
    } finally {
      store.close();
    }
  });

  test("closing the store ends its watches", async () => {
    const store = storeAt(server.url, freshNamespace("wait-store-close"));
    const watch = await store.watch("bob");
    const pending = watch.changed(600_000);
    setTimeout(() => store.close(), 20);
    expect(await pending).toBe(false);
  });

  test("a wait longer than a lease comes back to look again: a lease that runs out rings no bell", async () => {
    const store = storeAt(server.url, freshNamespace("wait-lease"), { leaseMs: 30 });
    try {
      const watch = await store.watch("bob");
      expect(await watch.changed(60_000)).toBe(true);
      watch.close();
    } finally {
      store.close();
    }
  });
});
