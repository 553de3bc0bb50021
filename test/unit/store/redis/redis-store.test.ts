/**
 * What the Redis store does beyond the Store contract (store-contract.test.ts runs that), against a real
 * redis-server on a unix socket in a temp dir: records that are not messages, names clashing across hosts, keys that
 * hold names only encoded, leases and bells, what doctor reads from the server.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RedisClient } from "bun";
import { AgentmailError } from "../../../../src/mail/errors.ts";
import { RedisServer } from "../../../support/redis-server.ts";
import { NO_FALLBACK_MS, waitFor, woken } from "../../../support/wait.ts";
import { drain, freshNamespace, mail, storeAt } from "./helpers.ts";

let server: RedisServer;
let raw: RedisClient;

beforeAll(async () => {
  server = await RedisServer.start();
  raw = new RedisClient(server.url);
});

afterAll(async () => {
  raw?.close();
  await server?.remove();
});

const prefix = (namespace: string) => `agentmail:{${namespace}}:`;

describe("records that are not messages", () => {
  test("are reported, passed over (with or without a preference) and kept", async () => {
    const namespace = freshNamespace("garbage");
    const store = storeAt(server.url, namespace);
    try {
      await store.append(mail("alice", "bob", "before"));
      await drain(store, "bob");
      const key = `${prefix(namespace)}mail:bob`;
      await raw.send("XADD", [key, "*", "id", "junk", "record", "{not json"]);
      await store.append(mail("alice", "bob", "after"));
      await raw.send("XADD", [key, "*", "id", "junk2", "record", "[]"]);
      await store.append(mail("alice", "bob", "last"));
      const skipped: string[] = [];
      const onSkip = (mailbox: string, where: string, reason: string) => skipped.push(`${mailbox} ${where} ${reason}`);
      expect((await store.take("bob", () => {}, { onSkip }))?.message).toBe("after");
      expect((await store.take("bob", () => {}, { onSkip, prefer: () => false }))?.message).toBe("last");
      expect(skipped).toHaveLength(2);
      expect(skipped[0]).toStartWith("bob stream entry ");
      expect(skipped[0]).toContain("it is not a message");
      expect(Number(await raw.send("XLEN", [key]))).toBe(5);
      expect(await store.countUnread("bob")).toBe(0);
      expect((await store.unread("bob")).length).toBe(0);
    } finally {
      store.close();
    }
  });
});

describe("names", () => {
  test("a mailbox's keys hold its name only encoded, so no name reaches another mailbox's keys", async () => {
    const namespace = freshNamespace("keys");
    const store = storeAt(server.url, namespace);
    try {
      await store.append(mail("alice", "x}:mail:y", "odd"));
      await store.append(mail("alice", "role:dev", "queue"));
      const keys = ((await raw.send("KEYS", [`${prefix(namespace)}*`])) as string[]).map((key) => key.slice(prefix(namespace).length));
      expect(keys).toContain("mail:x%7D%3Amail%3Ay");
      expect(keys).toContain("mail:role%3Adev");
      expect(keys.filter((key) => key.startsWith("mail:")).sort()).toEqual(["mail:role%3Adev", "mail:x%7D%3Amail%3Ay"]);
      await expect(store.take("a".repeat(300), () => {})).rejects.toThrow("too long");
    } finally {
      store.close();
    }
  });

  test("a name an agent on another host ran under lately is refused, with where it runs; once quiet, it moves", async () => {
    const store = storeAt(server.url, freshNamespace("clash"));
    try {
      expect(await store.touch({ name: "bob", host: "h1", pane: "%1" }, 300_000)).toEqual({ accepted: true });
      const first = await store.status("bob");
      expect(first).toMatchObject({ name: "bob", status: "ready", host: "h1", pane: "%1" });
      expect(Date.parse(first!.last_seen!)).not.toBeNaN();
      await store.writeStatus({ name: "bob", status: "work", pane: "%1" });
      const clash = await store.touch({ name: "bob", host: "h2", pane: "%5" }, 300_000);
      expect(clash).toMatchObject({ accepted: false, holder: { name: "bob", host: "h1", pane: "%1", status: "work" } });
      expect(await store.touch({ name: "bob", host: "h1", pane: "%1" }, 300_000)).toEqual({ accepted: true });
      // Without exclusivity (or once the other host has been quiet long enough) the name moves, status and all.
      expect(await store.touch({ name: "bob", host: "h2", pane: "%5" }, 0)).toEqual({ accepted: true });
      expect(await store.status("bob")).toMatchObject({ host: "h2", pane: "%5", status: "work" });
      expect((await store.touch({ name: "bob", host: "h1", pane: "%1" }, 300_000)).accepted).toBe(false);
    } finally {
      store.close();
    }
  });

  test("a pinned agent shows its pin's machine; another pane running under the name drops the pin", async () => {
    const store = storeAt(server.url, freshNamespace("pin"));
    try {
      await store.touch({ name: "bob", host: "agent-host", pane: "%1" });
      const pinned = await store.writeStatus({
        name: "bob",
        status: "ready",
        pane: "%1",
        at: new Date(),
        pin: { window: "@1", server: "s,1", host: "machine" },
      });
      expect(pinned).toMatchObject({ host: "machine", window: "@1" });
      await store.touch({ name: "bob", host: "agent-host", pane: "%1" });
      expect((await store.status("bob"))?.window).toBe("@1");
      await store.touch({ name: "bob", host: "agent-host", pane: "%9" });
      expect(await store.status("bob")).toMatchObject({ host: "agent-host", pane: "%9" });
      expect((await store.status("bob"))?.window).toBeUndefined();
    } finally {
      store.close();
    }
  });

  test("a registry entry that is not ours is left out; broken lists are an error naming their key", async () => {
    const namespace = freshNamespace("foreign");
    const store = storeAt(server.url, namespace);
    try {
      await store.writeStatus({ name: "bob", status: "ready", pane: "%1" });
      await raw.send("HSET", [`${prefix(namespace)}agents`, "eve", "{broken", "mallory", '{"name":"mallory","status":"sleeping"}']);
      expect((await store.statuses()).map((entry) => entry.name)).toEqual(["bob"]);
      expect(await store.status("eve")).toBeNull();
      await store.writeStatus({ name: "eve", status: "work", pane: "%2" });
      expect(await store.status("eve")).toMatchObject({ status: "work" });
      await raw.send("SET", [`${prefix(namespace)}groups`, '{"team":"bob"}']);
      const error = await store.memberships("groups").catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(AgentmailError);
      expect((error as Error).message).toContain(`${prefix(namespace)}groups`);
      await raw.send("SET", [`${prefix(namespace)}groups`, "[1]"]);
      await expect(store.updateMemberships("groups", () => {})).rejects.toThrow("not a JSON object");
    } finally {
      store.close();
    }
  });
});

describe("delivery details", () => {
  test("a retried send of a message archived meanwhile is not stored again", async () => {
    const store = storeAt(server.url, freshNamespace("archived-retry"));
    try {
      const once = mail("alice", "bob", "once");
      await store.append(once);
      await store.archive("bob", { ids: [once.id] }, false);
      await store.append(once);
      expect(await store.countUnread("bob")).toBe(0);
      expect(await store.mail("bob")).toHaveLength(1);
    } finally {
      store.close();
    }
  });

  test("archiving a mailbox longer than a page moves what the rule picks, a page at a time; a send meanwhile stays", async () => {
    const store = storeAt(server.url, freshNamespace("archive-pages"));
    try {
      // 1,200 messages, every other one read: two pages of 1,000.
      const messages = Array.from({ length: 1_200 }, (_, i) => mail("alice", "bob", `m${i}`));
      for (const message of messages) await store.append(message);
      for (let i = 0; i < messages.length; i += 2) await store.markRead("bob", messages[i]!.id);
      let sentMeanwhile: Promise<void> | null = null;
      const pick = (message: { message: string; read_flag: boolean }) => {
        // A send while the archive is between pages.
        if (message.message === "m1100") sentMeanwhile ??= store.append(mail("carol", "bob", "sent meanwhile")).then(() => {});
        return message.read_flag;
      };
      expect(await store.archive("bob", { pick }, false)).toEqual({ archived: 600, removed: false });
      await sentMeanwhile;
      expect(await store.countUnread("bob")).toBe(601);
      const live = (await store.mail("bob", { live: true, archived: false })).map((record) => record.message.message);
      expect(live).toHaveLength(601);
      expect(live).toContain("sent meanwhile");
      expect(live.every((body) => body === "sent meanwhile" || Number(body.slice(1)) % 2 === 1)).toBe(true);
      expect(await store.mail("bob", { live: false, archived: true })).toHaveLength(600);
    } finally {
      store.close();
    }
  });

  test("listings read a mailbox and its archive a page at a time: each record once, in order, however many pages", async () => {
    const store = storeAt(server.url, freshNamespace("list-pages"));
    try {
      // 6,000 messages, stored read but one in a hundred: the even ones archived, three pages of 2,000 in all.
      const messages = Array.from({ length: 6_000 }, (_, i) => ({
        ...mail("alice", "bob", i % 9 === 0 ? `needle ${i}` : `hay ${i}`),
        read_flag: i % 100 !== 1,
      }));
      for (let at = 0; at < messages.length; at += 500)
        await Promise.all(messages.slice(at, at + 500).map((message) => store.append(message)));
      expect(await store.archive("bob", { pick: (message) => Number(message.message.split(" ")[1]) % 2 === 0 }, false)).toEqual({
        archived: 3_000,
        removed: false,
      });
      const bodies = (records: { message: { message: string } }[]) => records.map((record) => record.message.message);
      const numbered = (test: (i: number) => boolean, word: (i: number) => string) =>
        messages
          .map((_, i) => i)
          .filter(test)
          .map((i) => `${word(i)} ${i}`);
      const word = (i: number) => (i % 9 === 0 ? "needle" : "hay");
      expect(bodies((await store.unread("bob")).map((message) => ({ message })))).toEqual(numbered((i) => i % 100 === 1, word));
      const needles = (live: boolean) =>
        numbered(
          (i) => i % 9 === 0 && i % 2 === (live ? 1 : 0),
          () => "needle",
        );
      const needle = (message: { message: string }) => message.message.startsWith("needle");
      expect(bodies(await store.mailMatching("bob", needle, /needle/))).toEqual([...needles(true), ...needles(false)]);
      expect(bodies(await store.mailMatching("bob", needle, undefined, { live: false, archived: true }))).toEqual(needles(false));
      expect(await store.mail("bob")).toHaveLength(6_000);
      // What alice sent: looked up a page of copies at a time.
      expect((await store.sentBy("alice")).map((record) => record.message.id)).toEqual(messages.map((message) => message.id));
    } finally {
      store.close();
    }
  });

  test("a message archived while it is being shown is not counted read twice", async () => {
    const store = storeAt(server.url, freshNamespace("archived-while-shown"));
    try {
      const [first] = [mail("alice", "bob", "first"), mail("alice", "bob", "second")];
      await store.append(first!);
      await store.append(mail("alice", "bob", "second"));
      await store.take("bob", () => store.archive("bob", { ids: [first!.id] }, false).then(() => {}));
      expect(await store.countUnread("bob")).toBe(1);
      expect(await drain(store, "bob")).toEqual(["second"]);
    } finally {
      store.close();
    }
  });

  test("a message marked read while it is being shown is marked once", async () => {
    const store = storeAt(server.url, freshNamespace("marked-while-shown"));
    try {
      const only = mail("alice", "bob", "only");
      await store.append(only);
      await store.take("bob", async () => void (await store.markRead("bob", only.id)));
      expect(await store.countUnread("bob")).toBe(0);
    } finally {
      store.close();
    }
  });
});

describe("waiting", () => {
  // A wait falls back to a look when its lease runs out: an hour here (NO_FALLBACK_MS), so that only a bell ends it
  // within woken's bound, except in the test of that fallback.
  test("a watch is woken when a showing fails and its message is takeable again", async () => {
    const store = storeAt(server.url, freshNamespace("wake-on-give-back"), { leaseMs: NO_FALLBACK_MS });
    const other = storeAt(server.url, store.namespace, { leaseMs: NO_FALLBACK_MS });
    try {
      await store.append(mail("alice", "bob", "hi"));
      const watch = await other.watch(["bob"]);
      await expect(
        store.take("bob", () => {
          throw new Error("no terminal");
        }),
      ).rejects.toThrow("no terminal");
      await woken("a watch of bob, after a showing of bob's message failed", watch.changed(NO_FALLBACK_MS));
      expect(await drain(other, "bob")).toEqual(["hi"]);
      watch.close();
    } finally {
      store.close();
      other.close();
    }
  });

  test("a wait longer than a lease comes back to look again: a lease that runs out rings no bell", async () => {
    const store = storeAt(server.url, freshNamespace("wait-lease"), { leaseMs: 30 });
    try {
      const watch = await store.watch(["bob"]);
      await woken("a wait of an hour on a store whose lease is 30 ms", watch.changed(NO_FALLBACK_MS));
      watch.close();
    } finally {
      store.close();
    }
  });

  test("closing the store ends its watches", async () => {
    const store = storeAt(server.url, freshNamespace("wait-store-close"), { leaseMs: NO_FALLBACK_MS });
    const watch = await store.watch(["bob"]);
    const pending = watch.changed(NO_FALLBACK_MS);
    await waitFor("the wait to block on the server", async () => (await server.blockedClients()) > 0);
    store.close();
    await woken("a pending wait, after its store was closed", pending);
    await woken("a wait begun after its store was closed", watch.changed(NO_FALLBACK_MS));
  });
});

describe("what doctor reads", () => {
  test("the server's version, its persistence settings and the number of agents", async () => {
    const store = storeAt(server.url, freshNamespace("info"));
    try {
      await store.touch({ name: "a", host: "h", pane: "%1" });
      await store.touch({ name: "b", host: "h", pane: "%2" });
      const info = await store.serverInfo();
      expect(info).toMatchObject({ appendonly: true, appendfsync: "always", agents: 2 });
      expect(info.version).toMatch(/^\d+\.\d+/);
    } finally {
      store.close();
    }
  });
});
