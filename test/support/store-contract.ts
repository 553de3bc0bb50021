/**
 * The Store contract (src/store/store.ts), for every engine: the same tests run against the file store and the
 * Redis store. An engine's test file calls `storeContract` with a factory; each test opens its own fresh store, and a
 * second handle on it where it checks what another process would see.
 */
import { isAbsolute } from "node:path";
import { afterAll, describe, expect, test } from "bun:test";
import { AgentmailError } from "../../src/mail/errors.ts";
import type { DeliveryEvent } from "../../src/mail/arrival.ts";
import { createMessage, type Message } from "../../src/mail/message.ts";
import { movedCopy } from "../../src/mail/moves.ts";
import { receiveMail } from "../../src/actions/receive.ts";
import type { ProjectPlace, Store } from "../../src/store/store.ts";
import { NO_FALLBACK_MS, woken } from "./wait.ts";

export interface StoreFactory {
  /** A place no other test uses: a fresh directory for the file store, a fresh namespace for Redis. */
  freshPlace(label: string): string;
  /**
   * Opens the store at a place; opening it again gives a second handle, as another process would have. A wait on it
   * may fall back to a look only after NO_FALLBACK_MS (wait.ts), so that only a wake ends a wait within a test's bound.
   */
  open(place: string): Store | Promise<Store>;
  /**
   * The places are namespaces of one server (Redis), so each store lists the others that have registered agents
   * (Store.otherNamespaces); without, places are apart (file store directories) and none is listed.
   */
  namespaces?: boolean;
  /**
   * Another project's place on this engine (Store.projectStore): how an agent there finds its store (`project`), and
   * the place `open` opens it at. A repository's store needs a git repository; `remove` takes it away again.
   */
  freshProject(label: string): { project: ProjectPlace; place: string; remove?(): void };
}

const BASE = Date.parse("2026-01-01T00:00:00.000Z");
let clock = 0;

/** A message with a created_at later than every one made before it. */
function mail(from: string, to: string, body: string, fields: object = {}): Message {
  return createMessage(from, to, body, new Date(BASE + ++clock * 1000), fields);
}

const bodies = (messages: readonly Message[]) => messages.map((message) => message.message);
const byName = <T extends { name: string }>(entries: T[]) => [...entries].sort((a, b) => (a.name < b.name ? -1 : 1));

/** The AgentmailError a call fails with (the test fails if it succeeds or throws anything else). */
export async function failureOf(work: Promise<unknown>): Promise<AgentmailError> {
  const error = await work.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AgentmailError);
  return error as AgentmailError;
}

export function storeContract(factory: StoreFactory): void {
  const opened: Store[] = [];
  afterAll(() => {
    for (const store of opened) store.close();
  });
  async function open(place: string): Promise<Store> {
    const store = await factory.open(place);
    opened.push(store);
    return store;
  }
  /** A fresh store, and a function that opens another handle on it. */
  async function fresh(label: string): Promise<{ store: Store; again: () => Promise<Store> }> {
    const place = factory.freshPlace(label);
    return { store: await open(place), again: () => open(place) };
  }
  async function sendAll(store: Store, messages: Message[]): Promise<Message[]> {
    for (const message of messages) await store.append(message);
    return messages;
  }
  /** Takes until nothing is left; the bodies in the order they were shown. */
  async function drain(store: Store, mailbox: string): Promise<string[]> {
    const shown: string[] = [];
    while (await store.take(mailbox, (message) => void shown.push(message.message)));
    return shown;
  }

  describe("what callers may ask of any engine", () => {
    test("where the mail is: a description for a person, a namespace only on a store of namespaces, shared across hosts only then", async () => {
      const place = factory.freshPlace("kind");
      const store = await open(place);
      expect(store.description).toEndWith(` ${store.location}`);
      expect(store.namespace).toBe(factory.namespaces ? place : null);
      expect(store.sharedAcrossHosts).toBe(Boolean(factory.namespaces));
      expect(store.pointer).not.toBe("");
    });

    test("the local directory: absolute, the same for every handle, and a repository's store's own", async () => {
      const { store, again } = await fresh("local-root");
      const root = store.localRoot();
      expect(isAbsolute(root)).toBe(true);
      expect((await again()).localRoot()).toBe(root);
      if (!store.sharedAcrossHosts) expect(root).toBe(store.location);
    });

    test("another project's store: mail stored through it is in that project's mailbox, not in this one's", async () => {
      const { store } = await fresh("project-here");
      const other = factory.freshProject("project-there");
      try {
        const there = await store.projectStore(other.project);
        expect(there.location).toBe((await open(other.place)).location);
        expect(there.namespace).toBe(factory.namespaces ? other.project.key : null);
        await there.append(mail("alice@here", "bob", "across projects"));
        expect(await store.countUnread("bob")).toBe(0);
        expect(await drain(await open(other.place), "bob")).toEqual(["across projects"]);
      } finally {
        other.remove?.();
      }
    });

    test("AGENTMAIL_NAME claims, where kept, are the registrations' claims, read without a lock", async () => {
      const { store, again } = await fresh("name-claims");
      const claims = store.nameClaims;
      if (claims === null) {
        expect(store.sharedAcrossHosts).toBe(true);
        return;
      }
      const claim = { server: "/tmp/tmux-1/default,42", host: "box" };
      expect(claims.claimOf("bob")).toBeNull();
      await (await again()).writeStatus({ name: "bob", status: "ready", pane: "%3", claim });
      await store.writeStatus({ name: "carol", status: "ready", pane: "%4" });
      expect(claims.claimOf("bob")).toEqual({ name: "bob", pane: "%3", ...claim, active: true });
      expect(claims.claimOf("carol")).toBeNull();
      await store.writeStatus({ name: "bob", status: "offline", pane: "%3", claim });
      expect(claims.claimOf("bob")).toMatchObject({ name: "bob", active: false });
    });
  });

  describe("append and take", () => {
    test("a sent message is taken with its fields, shown read with read_at, and read once take returns", async () => {
      const { store } = await fresh("basic");
      const sent = mail("alice", "bob", "hello\nworld", { thread: "t-1" });
      await store.append(sent);
      expect(await store.countUnread("bob")).toBe(1);
      let shown: Message | null = null;
      const taken = await store.take("bob", async (message) => {
        shown = { ...message };
        // While it is being shown it is still unread.
        expect(await store.countUnread("bob")).toBe(1);
      });
      expect(taken).toMatchObject({ id: sent.id, from: "alice", to: "bob", message: "hello\nworld", thread: "t-1", read_flag: true });
      expect(taken!.created_at).toBe(sent.created_at);
      expect(shown!).toMatchObject({ id: sent.id, read_flag: true });
      expect(Date.parse(String(shown!.read_at))).not.toBeNaN();
      expect(await store.countUnread("bob")).toBe(0);
      expect(await store.take("bob", () => {})).toBeNull();
      const [record] = await store.mail("bob");
      expect(record).toMatchObject({ archived: false, message: { id: sent.id, read_flag: true, thread: "t-1" } });
      expect(Date.parse(String(record!.message.read_at))).not.toBeNaN();
    });

    test("mail is taken oldest first; an empty or unknown mailbox gives null", async () => {
      const { store } = await fresh("fifo");
      expect(await store.take("nobody", () => {})).toBeNull();
      await sendAll(
        store,
        ["m0", "m1", "m2", "m3"].map((body) => mail("alice", "bob", body)),
      );
      expect(await drain(store, "bob")).toEqual(["m0", "m1", "m2", "m3"]);
      expect(await store.take("bob", () => {})).toBeNull();
    });

    test("a show that throws leaves the message unread and takeable again at once, before later mail", async () => {
      const { store } = await fresh("show-fails");
      await sendAll(store, [mail("alice", "bob", "first"), mail("alice", "bob", "second")]);
      const failure = new Error("stdout closed");
      await expect(
        store.take("bob", () => {
          throw failure;
        }),
      ).rejects.toBe(failure);
      expect(await store.countUnread("bob")).toBe(2);
      expect(await drain(store, "bob")).toEqual(["first", "second"]);
    });

    test("unreadIds names the unread messages, oldest first, as countUnread counts them", async () => {
      const { store } = await fresh("unread-ids");
      const sent = [mail("alice", "bob", "one"), mail("alice", "bob", "two"), mail("alice", "bob", "three")];
      await sendAll(store, sent);
      expect(await store.unreadIds("bob")).toEqual(sent.map((message) => message.id));
      await store.take("bob", () => {});
      expect(await store.unreadIds("bob")).toEqual([sent[1]!.id, sent[2]!.id]);
      expect(await store.unreadIds("nobody")).toEqual([]);
    });

    test("a message whose id the mailbox holds is not stored again; another mailbox may hold the same id", async () => {
      const { store } = await fresh("dedupe");
      const once = mail("alice", "bob", "once");
      await store.append(once);
      await store.append({ ...once });
      await store.append({ ...once, to: "carol" });
      expect(await store.countUnread("bob")).toBe(1);
      expect(await drain(store, "bob")).toEqual(["once"]);
      await store.append({ ...once });
      expect(await store.countUnread("bob")).toBe(0);
      expect(await drain(store, "carol")).toEqual(["once"]);
    });

    test("a message appended read (migration) is stored read, keeps its read_at, and is never taken", async () => {
      const { store } = await fresh("migrated");
      const old = { ...mail("alice", "bob", "old"), read_flag: true, read_at: "2025-01-02T03:04:05.000Z" };
      await store.append(old);
      await store.append(mail("alice", "bob", "new"));
      expect(await store.countUnread("bob")).toBe(1);
      expect(await drain(store, "bob")).toEqual(["new"]);
      const found = await store.find("bob", old.id);
      expect(found).toMatchObject({ archived: false, message: { read_flag: true, read_at: "2025-01-02T03:04:05.000Z" } });
    });

    test("with a preference, the oldest message it accepts comes first, then the oldest", async () => {
      const { store } = await fresh("prefer");
      const urgent = { priority: "urgent" };
      await sendAll(store, [mail("a", "bob", "plain 1"), mail("a", "bob", "urgent 1", urgent), mail("a", "bob", "plain 2")]);
      await store.append(mail("a", "bob", "urgent 2", urgent));
      const prefer = (message: Message) => message.priority === "urgent";
      const order: string[] = [];
      while (await store.take("bob", (message) => void order.push(message.message), { prefer }));
      expect(order).toEqual(["urgent 1", "urgent 2", "plain 1", "plain 2"]);
    });

    test("two handles taking at once each get different messages, and every message is taken once", async () => {
      const { store, again } = await fresh("concurrent");
      const other = await again();
      await sendAll(
        store,
        Array.from({ length: 20 }, (_, i) => mail("alice", "bob", `m${i}`)),
      );
      const shown: string[] = [];
      const takers = [store, other, store, other].map(async (taker) => {
        while (await taker.take("bob", (message) => void shown.push(message.message)));
      });
      await Promise.all(takers);
      expect([...shown].sort()).toEqual(Array.from({ length: 20 }, (_, i) => `m${i}`).sort());
      expect(await other.countUnread("bob")).toBe(0);
    });
  });

  describe("reading without taking", () => {
    test("unread lists the unread messages oldest first and marks nothing; markRead marks one once", async () => {
      const { store } = await fresh("unread");
      const [a, b, c] = await sendAll(
        store,
        ["a", "b", "c"].map((body) => mail("alice", "bob", body)),
      );
      await store.take("bob", () => {});
      expect(bodies(await store.unread("bob"))).toEqual(["b", "c"]);
      expect(await store.countUnread("bob")).toBe(2);
      expect(await store.markRead("bob", c!.id, new Date("2026-02-03T04:05:06.000Z"))).toBe(c!.id);
      expect(await store.markRead("bob", c!.id)).toBeNull();
      expect(await store.markRead("bob", a!.id)).toBeNull();
      expect(await store.markRead("bob", "NoSuchId")).toBeNull();
      expect(await store.markRead("nobody", b!.id)).toBeNull();
      expect(bodies(await store.unread("bob"))).toEqual(["b"]);
      expect(await store.countUnread("bob")).toBe(1);
      expect((await store.find("bob", c!.id))?.message.read_at).toBe("2026-02-03T04:05:06.000Z");
      expect(await drain(store, "bob")).toEqual(["b"]);
      expect(await store.unread("nobody")).toEqual([]);
    });

    test("find looks up one id, live or archived; mail lists live then archived, each oldest first", async () => {
      const { store } = await fresh("mail");
      const [a, b, c] = await sendAll(
        store,
        ["a", "b", "c"].map((body) => mail("alice", "bob", body)),
      );
      await store.archive("bob", { ids: [a!.id] }, false);
      expect(await store.find("bob", a!.id)).toMatchObject({ archived: true, message: { id: a!.id } });
      expect(await store.find("bob", b!.id)).toMatchObject({ archived: false, message: { id: b!.id, read_flag: false } });
      expect(await store.find("bob", "NoSuchId")).toBeNull();
      expect(await store.find("carol", a!.id)).toBeNull();
      const all = await store.mail("bob");
      expect(all.map((record) => [record.message.message, record.archived])).toEqual([
        ["b", false],
        ["c", false],
        ["a", true],
      ]);
      expect(bodies((await store.mail("bob", { live: true, archived: false })).map((record) => record.message))).toEqual(["b", "c"]);
      expect(bodies((await store.mail("bob", { live: false, archived: true })).map((record) => record.message))).toEqual(["a"]);
      // A needle only lets an engine skip records that cannot match: those that do are always there.
      const needled = await store.mail("bob", { live: true, archived: true }, JSON.stringify(c!.id));
      expect(needled.map((record) => record.message.id)).toContain(c!.id);
      expect(await store.mail("nobody")).toEqual([]);
    });
  });

  describe("listing", () => {
    test("mailMatching lists each record accept takes once, live then archived, those asked for, with a hint or without", async () => {
      const { store } = await fresh("matching");
      const sent = await sendAll(
        store,
        Array.from({ length: 30 }, (_, i) => mail("alice", "bob", i % 3 === 0 ? `Zebra ${i}` : `other ${i}`)),
      );
      await drain(store, "bob");
      await store.archive("bob", { ids: sent.filter((_, i) => i % 4 === 0).map((message) => message.id) }, false);
      // A match that went to bob2 and came back unread: one record, the copy moved most.
      await store.append(mail("alice", "bob", "a zebra that came back"));
      for (const [from, to] of [
        ["bob", "bob2"],
        ["bob2", "bob"],
      ] as const) {
        while (await store.take(from, (message) => store.append(movedCopy(message, from, to))));
      }
      const zebra = (message: Message) => /zebra/i.test(message.message);
      const live = ["Zebra 3", "Zebra 6", "Zebra 9", "Zebra 15", "Zebra 18", "Zebra 21", "Zebra 27", "a zebra that came back"];
      const archived = ["Zebra 0", "Zebra 12", "Zebra 24"];
      const listed = (records: { message: Message; archived: boolean }[]) =>
        records.map((record) => [record.message.message, record.archived]);
      const both = [...live.map((body) => [body, false]), ...archived.map((body) => [body, true])];
      expect(listed(await store.mailMatching("bob", zebra))).toEqual(both);
      expect(listed(await store.mailMatching("bob", zebra, /zebra/i))).toEqual(both);
      const onlyLive = await store.mailMatching("bob", zebra, /zebra/i, { live: true, archived: false });
      expect(listed(onlyLive)).toEqual(live.map((body) => [body, false]));
      expect(listed(await store.mailMatching("bob", zebra, undefined, { live: false, archived: true }))).toEqual(
        archived.map((body) => [body, true]),
      );
      // Each with its read state; the copy that came back unread, as moved twice.
      expect(onlyLive[0]!.message).toMatchObject({ read_flag: true, read_at: expect.any(String) });
      expect(onlyLive.at(-1)!.message).toMatchObject({ read_flag: false, moves: 2, moved_from: "bob2" });
      expect(await store.mailMatching("nobody", zebra)).toEqual([]);
    });
  });

  describe("the delivery record", () => {
    const at = "2026-03-04T05:06:07.000Z";
    const notified = (id: string, shown: DeliveryEvent["shown"] = "whole"): DeliveryEvent => ({
      id,
      event: "notified",
      at,
      channel: "claude-inbox",
      shown,
      pane: "%3",
    });

    test("events are kept per message in the order recorded; the announced set follows what they say", async () => {
      const { store, again } = await fresh("delivery");
      const [a, b] = await sendAll(store, [mail("alice", "bob", "a"), mail("alice", "bob", "b")]);
      expect(await store.deliveries("bob")).toEqual(new Map());
      expect(await store.announced("bob")).toEqual(new Set());
      const unreachable: DeliveryEvent = { id: b!.id, event: "unreachable", at, reason: "the pane runs bash" };
      await store.recordDelivery("bob", [notified(a!.id), unreachable]);
      await store.recordDelivery("bob", [{ id: a!.id, event: "dropped", at, channel: "claude-inbox", reason: "rate-limited" }]);
      const other = await again();
      const record = await other.deliveries("bob");
      expect([...record.keys()]).toEqual([a!.id, b!.id]);
      expect(record.get(a!.id)!.map((event) => event.event)).toEqual(["notified", "dropped"]);
      expect(record.get(b!.id)).toEqual([unreachable]);
      expect([...(await other.deliveries("bob", new Set([b!.id]))).keys()]).toEqual([b!.id]);
      // Dropped after it was notified: it may be announced again.
      expect(await other.announced("bob")).toEqual(new Set());
      await store.recordDelivery("bob", [{ id: b!.id, event: "held", at, channel: "claude-inbox" }]);
      expect(await other.announced("bob")).toEqual(new Set([b!.id]));
    });

    test("announce claims unread messages not announced yet, once; a read message or a withdrawn claim is handled", async () => {
      const { store, again } = await fresh("announce");
      const [a, b, c] = await sendAll(
        store,
        ["a", "b", "c"].map((body) => mail("alice", "bob", body)),
      );
      await store.take("bob", () => {});
      const other = await again();
      expect(await other.announce("bob", [notified(a!.id), notified(b!.id), notified(c!.id, "listed")])).toEqual([b!.id, c!.id]);
      expect(await store.announce("bob", [notified(b!.id), notified(c!.id)])).toEqual([]);
      expect(await store.announced("bob")).toEqual(new Set([b!.id, c!.id]));
      await store.recordDelivery("bob", [{ id: c!.id, event: "failed", at, reason: "the socket refused the connection" }]);
      expect(await store.announce("bob", [notified(c!.id)])).toEqual([c!.id]);
      // A message read since leaves the announced set at the next change.
      await store.markRead("bob", b!.id);
      await store.recordDelivery("bob", [{ id: c!.id, event: "held", at }]);
      expect(await other.announced("bob")).toEqual(new Set([c!.id]));
      expect(await store.announce("nobody", [notified(a!.id)])).toEqual([]);
    });

    test("a message being shown by a receiver cannot be claimed for another arrival", async () => {
      const { store, again } = await fresh("announce-shown");
      const [a] = await sendAll(store, [mail("alice", "bob", "a")]);
      const other = await again();
      let claim: Promise<string[]> | null = null;
      await store.take("bob", async () => {
        claim = other.announce("bob", [notified(a!.id)]);
        // The claim waits for the receive (file store) or sees its lease (Redis): either way it gets nothing.
        await new Promise((done) => setTimeout(done, 50));
      });
      expect(await claim!).toEqual([]);
      expect(await other.announced("bob")).toEqual(new Set());
    });
  });

  describe("mailboxes, role queues and archives", () => {
    test("agents' mailboxes and role queues are listed apart, sorted; a role queue is taken like any mailbox", async () => {
      const { store } = await fresh("lists");
      expect(await store.mailboxes()).toEqual([]);
      expect(await store.roleQueues()).toEqual([]);
      expect(await store.archives()).toEqual([]);
      await sendAll(store, [mail("a", "carol", "x"), mail("a", "bob", "y"), mail("a", "role:dev", "z"), mail("a", "role:ops", "w")]);
      expect(await store.mailboxes()).toEqual(["bob", "carol"]);
      expect(await store.roleQueues()).toEqual(["dev", "ops"]);
      expect(await store.countUnread("role:dev")).toBe(1);
      expect(await drain(store, "role:dev")).toEqual(["z"]);
    });

    test("archiving by id moves them with their read state; an unknown id moves nothing; an emptied mailbox goes", async () => {
      const { store } = await fresh("archive-ids");
      const [a, b] = await sendAll(store, [mail("alice", "bob", "a"), mail("alice", "bob", "b")]);
      await store.take("bob", () => {});
      const refused = await failureOf(store.archive("bob", { ids: [a!.id, "NoSuchId"] }, false));
      expect(refused.code).toBe("not_found");
      expect(refused.message).toContain("NoSuchId");
      expect((await store.mail("bob")).every((record) => !record.archived)).toBe(true);

      const dry = await store.archive("bob", { ids: [a!.id, b!.id] }, true);
      expect(dry).toEqual({ removed: true, archived: 2 });
      expect(await store.mailboxes()).toEqual(["bob"]);

      const first = await store.archive("bob", { ids: [a!.id] }, false);
      expect(first).toEqual({ removed: false, archived: 1 });
      const moved = await store.find("bob", a!.id);
      expect(moved).toMatchObject({ archived: true, message: { id: a!.id, read_flag: true } });
      expect(typeof moved!.message.read_at).toBe("string");
      expect(await store.archives()).toEqual(["bob"]);
      expect(await store.countUnread("bob")).toBe(1);
      const rest = await store.archive("bob", { ids: [b!.id] }, false);
      expect(rest).toEqual({ removed: true, archived: 1 });
      expect(await store.mailboxes()).toEqual([]);
      expect(await store.countUnread("bob")).toBe(0);
      expect(await store.take("bob", () => {})).toBeNull();
      const archived = await store.mail("bob");
      expect(archived.map((record) => [record.message.message, record.archived, record.message.read_flag])).toEqual([
        ["a", true, true],
        ["b", true, false],
      ]);
      expect(await failureOf(store.archive("bob", { ids: [a!.id] }, false))).toMatchObject({ code: "not_found" });
      await store.append(mail("alice", "bob", "a new life"));
      expect(await drain(store, "bob")).toEqual(["a new life"]);
    });

    test("archiving by rule moves what it picks (a dry run moves nothing); purging the archive deletes what it picks", async () => {
      const { store } = await fresh("archive-pick");
      await sendAll(
        store,
        ["old 1", "old 2", "keep"].map((body) => mail("alice", "role:dev", body)),
      );
      const old = (message: Message) => message.message.startsWith("old");
      const picked: string[] = [];
      const dry = await store.archive("role:dev", { pick: (message) => old(message) && picked.push(message.message) > 0 }, true);
      expect({ archived: dry.archived, picked }).toEqual({ archived: 2, picked: ["old 1", "old 2"] });
      expect(await store.archives()).toEqual([]);
      expect(await store.archive("role:dev", { pick: old }, false)).toMatchObject({ removed: false });
      expect(await store.archives()).toEqual(["role:dev"]);
      expect(await drain(store, "role:dev")).toEqual(["keep"]);

      const first = (message: Message) => message.message === "old 1";
      expect(bodies(await store.purgeArchive("role:dev", first, true))).toEqual(["old 1"]);
      expect(await store.mail("role:dev", { live: false, archived: true })).toHaveLength(2);
      expect(bodies(await store.purgeArchive("role:dev", first, false))).toEqual(["old 1"]);
      expect(bodies((await store.mail("role:dev", { live: false, archived: true })).map((record) => record.message))).toEqual(["old 2"]);
      expect(bodies(await store.purgeArchive("role:dev", () => true, false))).toEqual(["old 2"]);
      expect(await store.archives()).toEqual([]);
      expect(await store.purgeArchive("nobody", () => true, false)).toEqual([]);
    });
  });

  describe("what a sender sent", () => {
    test("every copy, oldest first, with its receipt, archived ones included; long bodies whole when asked", async () => {
      const { store } = await fresh("sent");
      const long = "x".repeat(5000);
      const [toBob, toCarol, longOne] = await sendAll(store, [
        mail("alice", "bob", "to bob"),
        mail("alice", "carol", "to carol"),
        mail("alice", "bob", long),
      ]);
      await store.append(mail("dave", "bob", "not alice's"));
      await store.take("carol", () => {});
      await store.archive("bob", { ids: [toBob!.id] }, false);
      const sent = await store.sentBy("alice", true);
      expect(sent.map((record) => [record.message.id, record.message.read_flag, record.archived])).toEqual([
        [toBob!.id, false, true],
        [toCarol!.id, true, false],
        [longOne!.id, false, false],
      ]);
      expect(typeof sent[1]!.message.read_at).toBe("string");
      expect(sent[2]!.message.message).toBe(long);
      const cut = await store.sentBy("alice", false);
      expect(long.startsWith(cut[2]!.message.message)).toBe(true);
      expect(await store.sentBy("nobody")).toEqual([]);
      await store.purgeArchive("bob", () => true, false);
      expect((await store.sentBy("alice")).map((record) => record.message.id)).toEqual([toCarol!.id, longOne!.id]);
    });

    test("copies in role queues are listed too, and by when they were sent, not in the order they were stored", async () => {
      const { store } = await fresh("sent-order");
      const [first, second, third] = [
        mail("alice", "bob", "first"),
        mail("alice", "role:triage", "second"),
        mail("alice", "carol", "third"),
      ];
      // Stored mailbox by mailbox, as a migration stores them.
      await sendAll(store, [third!, first!, second!]);
      expect(bodies((await store.sentBy("alice")).map((record) => record.message))).toEqual(["first", "second", "third"]);
      // Newest first, in batches: what sentBy lists, the other way round.
      const newest: string[] = [];
      for await (const batch of store.sentNewestFirst("alice")) for (const record of batch) newest.push(record.message.message);
      expect(newest).toEqual(["third", "second", "first"]);
      for await (const batch of store.sentNewestFirst("nobody")) expect(batch).toEqual([]);
    });
  });

  describe("a store whose mail moved", () => {
    const note = (state: "moving" | "moved") => ({
      state,
      to: "the new store",
      use: "export AGENTMAIL_URL=redis://new",
      at: "2026-01-01T00:00:00Z",
    });

    test("refuses sends and takes from every handle, saying where the mail went and how to point there; cleared, it is live again", async () => {
      const { store, again } = await fresh("moved");
      await store.append(mail("alice", "bob", "before the move"));
      expect(await store.moved()).toBeNull();
      await store.markMoved(note("moved"));
      const other = await again();
      expect(await other.moved()).toEqual(note("moved"));
      for (const refused of [other.append(mail("alice", "bob", "after")), other.take("bob", () => {})]) {
        const error = await failureOf(refused);
        expect(error.code).toBe("moved");
        expect(error.message).toContain("moved to the new store");
        expect(error.message).toEndWith("point agentmail there: export AGENTMAIL_URL=redis://new");
      }
      await store.markMoved(null);
      expect(await (await again()).moved()).toBeNull();
      expect(await drain(await again(), "bob")).toEqual(["before the move"]);
    });

    test("marking it moving returns only once a receive under way has marked its message read", async () => {
      const { store, again } = await fresh("moving");
      await store.append(mail("alice", "bob", "being shown"));
      const events: string[] = [];
      let release!: () => void;
      const shown = new Promise<void>((done) => (release = done));
      let showing!: () => void;
      const started = new Promise<void>((done) => (showing = done));
      const taking = store.take("bob", async () => {
        showing();
        await shown;
        events.push("shown");
      });
      await started;
      const marking = (await again()).markMoved(note("moving")).then(() => events.push("marked"));
      setTimeout(release, 200);
      await Promise.all([taking, marking]);
      expect(events).toEqual(["shown", "marked"]);
      await store.markMoved(null);
      const copy = await (await again()).mail("bob");
      expect(copy.map((record) => record.message.read_flag)).toEqual([true]);
    });
  });

  describe("mail a rename moves (agentmail name)", () => {
    /** What `agentmail name` does with the unread mail of the old name: a moved copy, then the source marked read. */
    async function move(store: Store, from: string, to: string): Promise<number> {
      let moved = 0;
      while (await store.take(from, (message) => store.append(movedCopy(message, from, to)))) moved++;
      return moved;
    }

    test("a round trip (bob, bob2, bob) leaves the mail unread under bob, delivered once, listed once", async () => {
      const { store } = await fresh("round-trip");
      const sent = await sendAll(
        store,
        ["m1", "m2", "m3"].map((body) => mail("alice", "bob", body)),
      );
      expect(await move(store, "bob", "bob2")).toBe(3);
      expect(await move(store, "bob2", "bob")).toBe(3);
      expect(await store.countUnread("bob")).toBe(3);
      expect(await store.countUnread("bob2")).toBe(0);
      expect(bodies(await store.unread("bob"))).toEqual(["m1", "m2", "m3"]);
      expect(await drain(store, "bob")).toEqual(["m1", "m2", "m3"]);
      expect(await drain(store, "bob2")).toEqual([]);
      // Readers show one record per id, the copy moved most, as read now.
      const records = await store.mail("bob");
      expect(records.map((record) => [record.message.id, record.message.read_flag, record.message.moves])).toEqual(
        sent.map((message) => [message.id, true, 2]),
      );
      expect((await store.find("bob", sent[0]!.id))?.message).toMatchObject({ moves: 2, moved_from: "bob2", read_flag: true });
      // What alice sent: each message once, where it is now.
      const listed = (await store.sentBy("alice")).map((record) => [record.message.id, record.message.to]);
      expect(listed).toEqual(sent.map((message) => [message.id, "bob"]));
    });

    test("flipping between two names many times delivers each message once, under the last name", async () => {
      const { store } = await fresh("flips");
      const sent = await sendAll(
        store,
        ["a", "b"].map((body) => mail("alice", "x", body)),
      );
      let at = "x";
      for (let flip = 0; flip < 7; flip++) {
        const next = at === "x" ? "y" : "x";
        await move(store, at, next);
        at = next;
      }
      expect(at).toBe("y");
      expect(await drain(store, "x")).toEqual([]);
      expect(await drain(store, "y")).toEqual(["a", "b"]);
      expect((await store.sentBy("alice")).map((record) => [record.message.id, record.message.to])).toEqual(
        sent.map((message) => [message.id, "y"]),
      );
    });

    test("a move cut short after the copy and run again stores the copy once, received or not", async () => {
      const { store } = await fresh("rerun");
      const [first, second] = await sendAll(store, [mail("alice", "bob", "one"), mail("alice", "bob", "two")]);
      // Killed after appending the copy of "one", before marking the source read.
      await store.append(movedCopy(first!, "bob", "bob2"));
      expect(await move(store, "bob", "bob2")).toBe(2);
      expect(await drain(store, "bob2")).toEqual(["one", "two"]);
      // Cut short again, after the new name already received the copy: run again, it is not stored again.
      const third = mail("alice", "bob", "three");
      await store.append(third);
      await store.append(movedCopy(third, "bob", "bob2"));
      expect(await drain(store, "bob2")).toEqual(["three"]);
      expect(await move(store, "bob", "bob2")).toBe(1);
      expect(await drain(store, "bob2")).toEqual([]);
      expect(await drain(store, "bob")).toEqual([]);
      expect(second).toBeDefined();
    });

    test("a move cut short, then moves back and forth: the message is unread in one place at a time, delivered once", async () => {
      const { store } = await fresh("cut-back");
      const [only] = await sendAll(store, [mail("alice", "bob", "only")]);
      // Killed after the copy, before the mark: unread under both names.
      await store.append(movedCopy(only!, "bob", "bob2"));
      expect(await move(store, "bob2", "bob")).toBe(1);
      // The copy that came back supersedes the line it came from: one unread message, not two.
      expect(await store.countUnread("bob")).toBe(1);
      expect(bodies(await store.unread("bob"))).toEqual(["only"]);
      expect(await move(store, "bob", "bob2")).toBe(1);
      expect(await store.countUnread("bob")).toBe(0);
      expect(await drain(store, "bob")).toEqual([]);
      expect(await drain(store, "bob2")).toEqual(["only"]);
      expect((await store.sentBy("alice")).map((record) => [record.message.to, record.message.read_flag])).toEqual([["bob2", true]]);
    });

    test("a move cut short whose copy was received first: the message is not delivered again under the old name", async () => {
      const { store } = await fresh("cut-received");
      const [only] = await sendAll(store, [mail("alice", "bob", "only")]);
      await store.append(movedCopy(only!, "bob", "bob2"));
      const shown: string[] = [];
      const received = await receiveMail(store, "bob2", (message) => void shown.push(message.message), { onSkip: () => {} });
      expect(received?.id).toBe(only!.id);
      expect(await store.countUnread("bob")).toBe(0);
      expect(await move(store, "bob2", "bob")).toBe(0);
      expect(await drain(store, "bob")).toEqual([]);
      expect(shown).toEqual(["only"]);
    });

    test("archiving a mailbox keeps a copy that came back unread, and archives it by id as one record", async () => {
      const { store } = await fresh("archive-moved");
      const [kept, other] = await sendAll(store, [mail("alice", "bob", "came back"), mail("alice", "bob", "other")]);
      await drain(store, "bob");
      // Read under bob, archived; then a copy of "came back" comes around again, unread.
      await store.archive("bob", { ids: [kept!.id] }, false);
      await store.append(movedCopy({ ...kept!, to: "bob2" }, "bob2", "bob"));
      await store.archive("bob", { ids: [other!.id] }, false);
      expect(bodies(await store.unread("bob"))).toEqual(["came back"]);
      expect(await store.find("bob", kept!.id)).toMatchObject({ archived: false, message: { read_flag: false, moves: 1 } });
      expect(await store.archive("bob", { ids: [kept!.id] }, false)).toEqual({ archived: 1, removed: true });
      expect((await store.mail("bob")).map((record) => [record.message.message, record.archived, record.message.moves ?? 0])).toEqual([
        ["came back", true, 1],
        ["other", true, 0],
      ]);
    });
    test("archiving read mail leaves a message whose copy came back unread where it is, with its read line", async () => {
      const { store } = await fresh("archive-round-trip");
      await sendAll(store, [mail("alice", "bob", "first"), mail("alice", "bob", "second")]);
      expect(await store.take("bob", () => {})).toMatchObject({ message: "first" });
      // The unread mail moves to bob2 and back: "second" is unread under bob again, beside its line read by the move.
      expect(await move(store, "bob", "bob2")).toBe(1);
      expect(await move(store, "bob2", "bob")).toBe(1);
      // A message is decided by its record, the copy moved most: "second" is unread, so no line of it goes.
      const read = (message: Message) => message.read_flag === true;
      expect(await store.archive("bob", { pick: read }, false)).toEqual({ archived: 1, removed: false });
      expect(bodies(await store.unread("bob"))).toEqual(["second"]);
      expect(await drain(store, "bob")).toEqual(["second"]);
      const records = async () =>
        (await store.mail("bob")).map((record) => [record.message.message, record.archived, record.message.moves ?? 0]);
      expect(await records()).toEqual([
        ["second", false, 2],
        ["first", true, 0],
      ]);
      // Read now, it goes as one record, the copy moved most, and its read line with it.
      expect(await store.archive("bob", { pick: read }, false)).toEqual({ archived: 1, removed: true });
      expect(await records()).toEqual([
        ["first", true, 0],
        ["second", true, 2],
      ]);
      expect(await drain(store, "bob")).toEqual([]);
    });

    test("archiving a copy that superseded an unread line (a move cut short, then moved back) takes that line along", async () => {
      const { store } = await fresh("archive-superseded");
      const [only] = await sendAll(store, [mail("alice", "bob", "only")]);
      // Killed after the copy, before the mark: unread under both names; moved back, the copy supersedes the line.
      await store.append(movedCopy(only!, "bob", "bob2"));
      expect(await move(store, "bob2", "bob")).toBe(1);
      expect(await drain(store, "bob")).toEqual(["only"]);
      expect(await store.archive("bob", { pick: (message) => message.read_flag === true }, false)).toEqual({ archived: 1, removed: true });
      // The line it superseded is not left behind to be delivered again.
      expect(await store.countUnread("bob")).toBe(0);
      expect(await drain(store, "bob")).toEqual([]);
      expect((await store.mail("bob")).map((record) => [record.message.message, record.archived, record.message.moves ?? 0])).toEqual([
        ["only", true, 2],
      ]);
    });
  });

  describe("waiting", () => {
    // The contract's "wakes within 50 ms" is a latency (bench/hosts.ts measures it); what is checked here is that the
    // send itself wakes a wait: each falls back to a look only after an hour, so only a wake ends it within the bound.
    test("a watch is woken by a send from another handle to a watched mailbox, and by a membership change", async () => {
      const { store, again } = await fresh("watch");
      const other = await again();
      const watch = await store.watch(["bob", "role:dev"]);
      const bySend = watch.changed(NO_FALLBACK_MS);
      await other.append(mail("alice", "role:dev", "wake up"));
      await woken("a watch of bob and role:dev, after another handle's send to role:dev", bySend);
      expect(await store.countUnread("role:dev")).toBe(1);
      const byMembership = watch.changed(NO_FALLBACK_MS);
      await other.updateMemberships("groups", (lists) => lists.set("team", ["bob"]));
      await woken("a watch of bob and role:dev, after another handle changed the groups", byMembership);
      expect((await store.memberships("groups")).get("team")).toEqual(["bob"]);
      watch.close();
      watch.close();
    });

    test("a watch on every mailbox is woken by a send to anyone; closing a watch ends a pending wait", async () => {
      const { store, again } = await fresh("watch-all");
      const other = await again();
      const everything = await store.watch(null);
      const bySend = everything.changed(NO_FALLBACK_MS);
      await other.append(mail("alice", "zed", "anyone"));
      await woken("a watch of every mailbox, after another handle's send to zed", bySend);
      const pending = everything.changed(NO_FALLBACK_MS);
      everything.close();
      await woken("a pending wait, after its watch was closed", pending);
      expect(await store.countUnread("zed")).toBe(1);
    });
  });

  describe("groups and roles", () => {
    test("lists change atomically: concurrent changes from two handles all land; a change that throws changes nothing", async () => {
      const { store, again } = await fresh("memberships");
      const other = await again();
      expect(await store.memberships("roles")).toEqual(new Map());
      const joins = Array.from({ length: 8 }, (_, i) =>
        (i % 2 ? store : other).updateMemberships("roles", (lists) => {
          lists.set("dev", [...(lists.get("dev") ?? []), `agent-${i}`]);
          return i;
        }),
      );
      expect((await Promise.all(joins)).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect([...(await store.memberships("roles")).get("dev")!].sort()).toEqual(Array.from({ length: 8 }, (_, i) => `agent-${i}`));
      const refusal = new AgentmailError("conflict", "no");
      await expect(
        store.updateMemberships("roles", (lists) => {
          lists.delete("dev");
          throw refusal;
        }),
      ).rejects.toBe(refusal);
      expect((await store.memberships("roles")).get("dev")).toHaveLength(8);
      await store.updateMemberships("roles", (lists) => lists.set("dev", []));
      expect(await store.memberships("roles")).toEqual(new Map());
      expect(await store.memberships("groups")).toEqual(new Map());
      await store.updateMemberships("groups", (lists) => lists.set("__proto__", ["x"]));
      expect([...(await other.memberships("groups")).keys()]).toEqual(["__proto__"]);
    });
  });

  describe("the registry", () => {
    test("a status keeps its since while unchanged, and its pin while the same pane writes", async () => {
      const { store } = await fresh("status");
      expect(await store.status("bob")).toBeNull();
      const pin = { window: "@3", server: "/tmp/tmux-1/default,42", host: "box" };
      const t = (s: number) => new Date(BASE + s * 1000);
      const pinned = await store.writeStatus({ name: "bob", status: "work", pane: "%1", at: t(1), pin });
      expect(pinned).toMatchObject({ name: "bob", status: "work", pane: "%1", since: t(1).toISOString(), ...pin });
      expect(pinned.named_at).toBe(t(1).toISOString());
      const same = await store.writeStatus({ name: "bob", status: "work", pane: "%1", at: t(2) });
      expect(same).toMatchObject({ since: t(1).toISOString(), updated_at: t(2).toISOString(), window: "@3", named_at: t(1).toISOString() });
      const changed = await store.writeStatus({ name: "bob", status: "ready", pane: "%2", at: t(3) });
      expect(changed).toMatchObject({ status: "ready", since: t(3).toISOString(), pane: "%2" });
      expect(changed.window).toBeUndefined();
      expect(changed.named_at).toBeUndefined();
      expect(await store.status("bob")).toMatchObject({ name: "bob", status: "ready", pane: "%2" });
      await store.writeStatus({ name: "alice", status: "offline", pane: "%5", at: t(4) });
      expect(byName(await store.statuses()).map((entry) => [entry.name, entry.status])).toEqual([
        ["alice", "offline"],
        ["bob", "ready"],
      ]);
      await store.removeStatus("alice");
      await store.removeStatus("alice");
      expect((await store.statuses()).map((entry) => entry.name)).toEqual(["bob"]);
    });

    test("a name registered from another tmux server is refused until the caller found its pane gone", async () => {
      const { store } = await fresh("servers");
      const a = { server: "/tmp/tmux-1/default,100", host: "box" };
      const b = { server: "/tmp/tmux-1/other,200", host: "box" };
      // Seen first from host h1 (a Redis store records the host of each command): only the tmux server differs below.
      for (const name of ["bob", "carol", "dave"])
        expect(await store.touch({ name, host: "h1", pane: "%1" }, 300_000)).toEqual({ accepted: true });
      const registered = await store.writeStatus({ name: "bob", status: "ready", pane: "%1", at: new Date(), place: a });
      expect(registered).toMatchObject({ pane: "%1", tmux_server: a.server, tmux_host: "box" });
      expect(await store.status("bob")).toMatchObject({ tmux_server: a.server, tmux_host: "box" });
      // The same pane of the same server writing again keeps where it lives.
      expect(await store.writeStatus({ name: "bob", status: "work", pane: "%1" })).toMatchObject({ tmux_server: a.server });
      expect(await store.touch({ name: "bob", host: "h1", pane: "%1", tmux: a }, 300_000)).toEqual({ accepted: true });
      const refused = await store.touch({ name: "bob", host: "h1", pane: "%1", tmux: b }, 300_000);
      expect(refused).toMatchObject({ accepted: false, liveness: true, holder: { name: "bob", pane: "%1", tmux_server: a.server } });
      expect(await store.touch({ name: "bob", host: "h1", pane: "%1", tmux: b }, 300_000, true)).toEqual({ accepted: true });
      // On another machine, a registration that ran lately holds the name; offline, none does.
      await store.writeStatus({
        name: "carol",
        status: "ready",
        pane: "%1",
        at: new Date(),
        place: { server: a.server, host: "elsewhere" },
      });
      const far = await store.touch({ name: "carol", host: "h1", pane: "%2", tmux: b }, 300_000);
      expect(far).toMatchObject({ accepted: false, holder: { name: "carol" } });
      expect("liveness" in far).toBe(false);
      await store.writeStatus({ name: "dave", status: "offline", pane: "%1", at: new Date(), place: a });
      expect(await store.touch({ name: "dave", host: "h1", pane: "%2", tmux: b }, 300_000)).toEqual({ accepted: true });
    });

    test("other namespaces: those with registered agents where places share a server, sorted, never this one", async () => {
      const here = factory.freshPlace("namespaces-here");
      const there = factory.freshPlace("namespaces-there");
      const mailOnly = factory.freshPlace("namespaces-mail-only");
      const store = await open(here);
      await store.writeStatus({ name: "lead", status: "ready", pane: "%1" });
      await (await open(there)).writeStatus({ name: "scout", status: "ready", pane: "%1" });
      await (await open(mailOnly)).append(mail("alice", "bob", "no agent registered here"));
      const listed = await store.otherNamespaces();
      expect(listed).toEqual([...listed].sort());
      expect(listed).not.toContain(here);
      expect(listed).not.toContain(mailOnly);
      if (factory.namespaces) expect(listed).toContain(there);
      else expect(listed).toEqual([]);
    });

    test("an agent running commands under its own name is accepted", async () => {
      const { store } = await fresh("touch");
      expect(await store.touch({ name: "bob", host: "h1", pane: "%1" }, 300_000)).toEqual({ accepted: true });
      expect(await store.touch({ name: "bob", host: "h1", pane: "%1" }, 300_000)).toEqual({ accepted: true });
    });
  });

  describe("hostile names", () => {
    test("names with slashes, dots, colons, braces and non-ASCII are mailboxes of their own", async () => {
      const { store } = await fresh("names");
      const names = ["../etc", "a/b", "a%2Fb", ".hidden", "x}:mail:y", "ü名", "__proto__", "role%3Adev"];
      for (const name of names) await store.append(mail("alice", name, `for ${name}`));
      expect(await store.mailboxes()).toEqual([...names].sort((a, b) => (a < b ? -1 : 1)));
      expect(await store.roleQueues()).toEqual([]);
      for (const name of names) expect(await drain(store, name)).toEqual([`for ${name}`]);
      await expect(store.append(mail("alice", "", "nobody"))).rejects.toThrow(AgentmailError);
    });
  });

  test("closing a store twice is harmless", async () => {
    const { store } = await fresh("close");
    await store.countUnread("bob");
    store.close();
    store.close();
  });
}
