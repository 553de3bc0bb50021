/**
 * What is particular to the file store behind the Store interface: where it keeps things (role queues in `.roles/`,
 * statuses in `.agents/`), that a store which does not exist yet reads as empty and is created only by writes, that
 * an id already in a mailbox (or passed by its cursor) is not appended again, how skipped lines are reported, that
 * its watch is woken by the send itself (not by the look it falls back to), that `touch` keeps no presence, and that
 * openStore picks it unless AGENTMAIL_URL is set. The engine-neutral contract (delivery, archive, memberships…) is
 * the Store contract suite's.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createMessage, type Message } from "../../../../src/mail/message.ts";
import { FileStore } from "../../../../src/store/file/file-store.ts";
import { closeStores } from "../../../../src/store/kept-stores.ts";
import { openStore } from "../../../../src/store/open.ts";
import { tempRepo } from "../../../support/repo.ts";
import { NO_FALLBACK_MS, woken } from "../../../support/wait.ts";

let repo: ReturnType<typeof tempRepo>;
let store: FileStore;
beforeEach(() => {
  repo = tempRepo();
  store = new FileStore(repo.mailDir);
});
afterEach(() => repo.remove());

const lines = (path: string) => readFileSync(path, "utf8").trim().split("\n");

describe("a store that does not exist yet", () => {
  test("reads as empty and is not created by a read", async () => {
    expect(await store.take("bob", () => {})).toBeNull();
    expect(await store.countUnread("bob")).toBe(0);
    expect(await store.unread("bob")).toEqual([]);
    expect(await store.mail("bob")).toEqual([]);
    expect(await store.find("bob", "Abcd1234")).toBeNull();
    expect(await store.markRead("bob", "Abcd1234")).toBeNull();
    expect(await store.sentBy("alice")).toEqual([]);
    expect(await store.mailboxes()).toEqual([]);
    expect(await store.roleQueues()).toEqual([]);
    expect(await store.archives()).toEqual([]);
    expect(await store.purgeArchive("bob", () => true, false)).toEqual([]);
    expect(await store.archive("bob", { pick: () => true }, false)).toEqual({ archived: 0, removed: false });
    expect(await store.status("bob")).toBeNull();
    expect(await store.statuses()).toEqual([]);
    expect((await store.memberships("groups")).size).toBe(0);
    expect(existsSync(repo.mailDir)).toBe(false);
  });

  test("archiving an id it does not hold fails as for an empty mailbox, naming the id", async () => {
    const error = await store.archive("bob", { ids: ["Nope0000"] }, false).catch((thrown) => thrown);
    expect(error.code).toBe("not_found");
    expect(error.message).toContain("no message Nope0000 in your mailbox");
  });

  test("the first write creates it", async () => {
    await store.append(createMessage("alice", "bob", "hi"));
    expect(existsSync(join(repo.mailDir, "bob.jsonl"))).toBe(true);
    expect(await store.mailboxes()).toEqual(["bob"]);
  });
});

describe("where things are kept", () => {
  test("a role's queue is the mailbox role:<role> in .roles/, apart from a window named like the role", async () => {
    await store.append(createMessage("alice", "role:triage", "for the role"));
    await store.append(createMessage("alice", "triage", "for the window"));
    expect(readdirSync(join(repo.mailDir, ".roles"))).toContain("role%3Atriage.jsonl");
    expect(await store.roleQueues()).toEqual(["triage"]);
    expect(await store.mailboxes()).toEqual(["triage"]);
    expect((await store.take("role:triage", () => {}))?.message).toBe("for the role");
    expect(await store.countUnread("triage")).toBe(1);
  });

  test("archives of agents and of role queues are listed, each under its mailbox's name", async () => {
    const read = { ...createMessage("alice", "bob", "old"), read_flag: true };
    await store.append(read);
    await store.append({ ...createMessage("alice", "role:triage", "old too"), read_flag: true });
    await store.archive("bob", { pick: () => true }, false);
    await store.archive("role:triage", { pick: () => true }, false);
    expect(await store.archives()).toEqual(["bob", "role:triage"]);
    expect((await store.find("bob", read.id))?.archived).toBe(true);
  });

  test("a status is a file in .agents/; the registry reports its last update as last seen", async () => {
    const now = new Date("2026-01-02T03:04:05Z");
    const written = await store.writeStatus({ name: "bob", status: "work", pane: "%7", at: now });
    expect(written).toMatchObject({ name: "bob", status: "work", pane: "%7", last_seen: now.toISOString() });
    expect(readdirSync(join(repo.mailDir, ".agents"))).toEqual(["bob.json"]);
    expect(await store.status("bob")).toEqual(written);
    expect(await store.statuses()).toEqual([written]);
    await store.removeStatus("bob");
    expect(await store.status("bob")).toBeNull();
  });
});

describe("append", () => {
  test("an id the mailbox already holds is not written again, unread or read past its cursor", async () => {
    const first = createMessage("alice", "bob", "once");
    await store.append(first);
    await store.append({ ...first });
    expect(lines(join(repo.mailDir, "bob.jsonl"))).toHaveLength(1);
    // Taken: the cursor moves past it, and its id is asked of the cursor's id set.
    expect((await store.take("bob", () => {}))?.id).toBe(first.id);
    await store.append({ ...first, read_flag: false });
    expect(lines(join(repo.mailDir, "bob.jsonl"))).toHaveLength(1);
    expect(await store.countUnread("bob")).toBe(0);
  });

  test("a send's fresh id is appended without the look for it; were it repeated, the id is still delivered once", async () => {
    const first = createMessage("alice", "bob", "once");
    await store.append(first, { freshId: true });
    await store.append({ ...first }, { freshId: true });
    expect(lines(join(repo.mailDir, "bob.jsonl"))).toHaveLength(2);
    expect(await store.countUnread("bob")).toBe(1);
    expect((await store.take("bob", () => {}))?.id).toBe(first.id);
    expect(await store.take("bob", () => {})).toBeNull();
  });

  test("a message appended read is stored read (migration)", async () => {
    const read: Message = { ...createMessage("alice", "bob", "history"), read_flag: true };
    await store.append(read);
    expect(await store.countUnread("bob")).toBe(0);
    expect((await store.mail("bob"))[0]?.message.read_flag).toBe(true);
  });
});

describe("take", () => {
  test("a line that is not a message is reported with the mailbox's path and its byte offset, and passed over", async () => {
    await store.append(createMessage("alice", "bob", "before"));
    const path = join(repo.mailDir, "bob.jsonl");
    const offset = readFileSync(path).length;
    appendFileSync(path, "not json\n");
    const after = createMessage("alice", "bob", "after");
    await store.append(after);
    await store.take("bob", () => {});
    const skipped: string[] = [];
    const taken = await store.take("bob", () => {}, { onSkip: (mailbox, where, reason) => skipped.push(`${mailbox} ${where} ${reason}`) });
    expect(taken?.id).toBe(after.id);
    expect(skipped).toEqual([`${path} byte ${offset} it is not a message (unparseable, or missing id, from, message or read_flag)`]);
  });

  test("with prefer, the oldest preferred message comes first", async () => {
    await store.append(createMessage("alice", "bob", "plain"));
    await store.append(createMessage("alice", "bob", "urgent", new Date(), { priority: "urgent" }));
    const taken = await store.take("bob", () => {}, { prefer: (message) => message.priority === "urgent" });
    expect(taken?.message).toBe("urgent");
    expect((await store.unread("bob")).map((message) => message.message)).toEqual(["plain"]);
  });
});

describe("markRead", () => {
  test("returns the id when it marked the message, null when it was read already", async () => {
    const message = createMessage("alice", "bob", "hi");
    await store.append(message);
    expect(await store.markRead("bob", message.id)).toBe(message.id);
    expect(await store.markRead("bob", message.id)).toBeNull();
  });
});

describe("watch", () => {
  // Each wait falls back to a look only after an hour: only the watcher's wake can end it within woken's bound.
  test("a send to a watched mailbox wakes its watch, and so does a send to a watched role's queue", async () => {
    const watch = await store.watch(["bob", "role:triage"]);
    try {
      const forTheRole = watch.changed(NO_FALLBACK_MS);
      await store.append(createMessage("alice", "role:triage", "for the role"));
      await woken("the watch of bob and role:triage, after a send to the role", forTheRole);
      const forBob = watch.changed(NO_FALLBACK_MS);
      await store.append(createMessage("alice", "bob", "for bob"));
      await woken("the watch of bob and role:triage, after a send to bob", forBob);
    } finally {
      watch.close();
    }
  });

  test("the mailman's watch (every mailbox) wakes on a send to anyone; close ends a pending wait", async () => {
    const watch = await store.watch(null);
    const woke = watch.changed(NO_FALLBACK_MS);
    await store.append(createMessage("alice", "carol", "hi"));
    await woken("the watch of every mailbox, after a send to carol", woke);
    const pending = watch.changed(NO_FALLBACK_MS);
    watch.close();
    watch.close();
    await woken("a pending wait, after its watch was closed", pending);
  });
});

describe("presence and opening", () => {
  test("touch keeps no presence and accepts any name", async () => {
    expect(await store.touch({ name: "bob", host: "elsewhere", pane: "%1" }, 60_000)).toEqual({ accepted: true });
    expect(existsSync(repo.mailDir)).toBe(false);
    store.close();
    store.close();
  });

  test("openStore gives the file store of the repository unless AGENTMAIL_URL is set", async () => {
    const opened = await openStore({ cwd: repo.dir, env: {} });
    expect(opened.sharedAcrossHosts).toBe(false);
    expect(opened.description).toBe(`file ${repo.mailDir}`);
    expect(opened.location).toBe(repo.mailDir);
    const redis = await openStore({ cwd: repo.dir, env: { AGENTMAIL_URL: "redis://127.0.0.1:1" } }).catch((thrown) => thrown);
    // Without the Redis engine built in (the placeholder), or with a server that cannot be reached: never the file store.
    expect(redis.sharedAcrossHosts).not.toBe(false);
    await closeStores();
  });
});
