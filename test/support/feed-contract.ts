/**
 * The feed contract (store.ts, MailFeed), for every engine: what `watch` and `web` build the room from. The first
 * look reports the whole store; each later look reports only what changed since, whoever changed it (another handle
 * stands for another process).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createMessage, type Message } from "../../src/mail/message.ts";
import type { MailChange, MailFeed, Store } from "../../src/store/store.ts";
import type { StoreFactory } from "./store-contract.ts";
import { NO_FALLBACK_MS, woken } from "./wait.ts";

const BASE = Date.parse("2026-01-01T00:00:00.000Z");
let clock = 0;
const mail = (from: string, to: string, body: string): Message => createMessage(from, to, body, new Date(BASE + ++clock * 1000));

/** A change as a reader compares it: the message's id, body and read state, not every field. */
function brief(change: MailChange): unknown {
  if (change.kind !== "stored") return change;
  const { message, archived } = change.record;
  return { kind: "stored", mailbox: change.mailbox, body: message.message, read: message.read_flag, archived };
}

export function feedContract(factory: StoreFactory): void {
  const opened: { close(): void }[] = [];
  afterAll(() => {
    for (const each of opened) each.close();
  });
  async function fresh(label: string): Promise<{ store: Store; other: Store }> {
    const place = factory.freshPlace(label);
    const store = await factory.open(place);
    const other = await factory.open(place);
    opened.push(store, other);
    return { store, other };
  }
  async function follow(store: Store): Promise<MailFeed> {
    const feed = await store.feed();
    opened.push(feed);
    return feed;
  }

  describe("the feed", () => {
    test("the first look reports every record, live and archived, with its read state; a look with no change reports nothing", async () => {
      const { store } = await fresh("feed-first");
      const first = mail("alice", "bob", "one");
      const second = mail("carol", "bob", "two");
      const queued = mail("alice", "role:dev", "for a dev");
      for (const message of [first, second, queued, mail("bob", "alice", "old")]) await store.append(message);
      await store.markRead("bob", first.id);
      await store.archive("alice", { pick: () => true }, false);
      const feed = await follow(store);
      const changes = (await feed.changes()).map(brief);
      expect(changes).toHaveLength(4);
      expect(changes).toEqual(
        expect.arrayContaining([
          { kind: "stored", mailbox: "bob", body: "one", read: true, archived: false },
          { kind: "stored", mailbox: "bob", body: "two", read: false, archived: false },
          { kind: "stored", mailbox: "role:dev", body: "for a dev", read: false, archived: false },
          { kind: "stored", mailbox: "alice", body: "old", read: false, archived: true },
        ]),
      );
      expect(await feed.changes()).toEqual([]);
    });

    test("later looks report only what another handle stored and read since", async () => {
      const { store, other } = await fresh("feed-more");
      await other.append(mail("alice", "bob", "before"));
      const feed = await follow(store);
      await feed.changes();
      const later = mail("alice", "bob", "later");
      await other.append(later);
      expect((await feed.changes()).map(brief)).toEqual([{ kind: "stored", mailbox: "bob", body: "later", read: false, archived: false }]);
      await other.take("bob", () => {});
      const read = await feed.changes();
      expect(read).toHaveLength(1);
      expect(read[0]).toMatchObject({ kind: "read", mailbox: "bob" });
      expect(typeof (read[0] as { read_at: unknown }).read_at).toBe("string");
      await other.markRead("bob", later.id);
      expect(await feed.changes()).toEqual([{ kind: "read", mailbox: "bob", id: later.id, read_at: expect.any(String) }]);
      expect(await feed.changes()).toEqual([]);
    });

    test("a mailbox rewritten by archiving comes again whole after a reset; purged records are gone from it", async () => {
      const { store, other } = await fresh("feed-reset");
      const kept = mail("alice", "bob", "kept");
      const moved = mail("alice", "bob", "moved");
      await other.append(kept);
      await other.append(moved);
      const feed = await follow(store);
      await feed.changes();
      await other.archive("bob", { ids: [moved.id] }, false);
      expect((await feed.changes()).map(brief)).toEqual([
        { kind: "reset", mailbox: "bob" },
        { kind: "stored", mailbox: "bob", body: "kept", read: false, archived: false },
        { kind: "stored", mailbox: "bob", body: "moved", read: false, archived: true },
      ]);
      await other.purgeArchive("bob", () => true, false);
      expect((await feed.changes()).map(brief)).toEqual([
        { kind: "reset", mailbox: "bob" },
        { kind: "stored", mailbox: "bob", body: "kept", read: false, archived: false },
      ]);
    });

    test("the feed is woken by a send from another handle (not by the look it falls back to an hour later)", async () => {
      const { store, other } = await fresh("feed-wake");
      const feed = await follow(store);
      await feed.changes();
      const bySend = feed.changed(NO_FALLBACK_MS);
      await other.append(mail("alice", "zed", "wake"));
      await woken("the feed, after another handle's send to zed", bySend);
      expect((await feed.changes()).map(brief)).toEqual([{ kind: "stored", mailbox: "zed", body: "wake", read: false, archived: false }]);
    });

    test("hostile mailbox names are followed like any other", async () => {
      const { store, other } = await fresh("feed-names");
      const feed = await follow(store);
      await feed.changes();
      for (const name of ["a/b", "..", "{x}", "名前"]) await other.append(mail("alice", name, `to ${name}`));
      const changes = (await feed.changes()).map(brief);
      expect(changes.map((change) => (change as { mailbox: string }).mailbox).sort()).toEqual(["..", "a/b", "{x}", "名前"].sort());
    });
  });
}
