/**
 * `agentmail migrate`, between two file stores (the Redis side is the same code through the same Store interface;
 * the two-host end-to-end tests run it against a real redis-server): everything is copied once, read state, read
 * times and archives kept, a run killed midway is finished by the next one without a duplicate, a dry run changes
 * nothing; and `moveMail` (what the command runs) leaves the source saying where its mail went, refusing every
 * command, unless asked to keep it; its suggested clean-up deletes the mail and nothing else.
 *
 * For a Redis run, `storePair` is the hook: give it a target opened with openStore({ cwd, env: { AGENTMAIL_URL } }).
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { migrate, migrateMail, moveMail } from "../../../src/actions/migrate.ts";
import { migrationText } from "../../../src/commands/migrate.ts";
import { createMessage, type Message } from "../../../src/mail/message.ts";
import { FileStore } from "../../../src/store/file/file-store.ts";
import { openStore } from "../../../src/store/open.ts";
import { mailRoot } from "../../../src/store/paths.ts";
import type { Store } from "../../../src/store/store.ts";
import { runInProcess } from "../../support/in-process.ts";
import { failureOf } from "../../support/store-contract.ts";
import { tempRepo } from "../../support/repo.ts";

let from: ReturnType<typeof tempRepo>;
let to: ReturnType<typeof tempRepo>;
let source: Store;
let target: Store;

/** The two stores a migration runs between. */
function storePair(): { source: Store; target: Store } {
  return { source: new FileStore(from.mailDir), target: new FileStore(to.mailDir) };
}

beforeEach(() => {
  from = tempRepo();
  to = tempRepo();
  ({ source, target } = storePair());
});
afterEach(() => {
  from.remove();
  to.remove();
});

const at = (iso: string) => new Date(iso);

/** A store with unread, read and archived mail, a role queue, a group, a role and two statuses. */
async function fill(store: Store): Promise<Record<string, Message>> {
  const m = {
    first: createMessage("alice", "bob", "read long ago", at("2026-01-01T00:00:00Z")),
    second: createMessage("alice", "bob", "read, kept live", at("2026-01-02T00:00:00Z")),
    third: createMessage("carol", "bob", "still unread", at("2026-01-03T00:00:00Z")),
    role: createMessage("alice", "role:triage", "for whoever triages", at("2026-01-04T00:00:00Z")),
    gone: createMessage("bob", "dave", "dave's only mail, archived", at("2026-01-05T00:00:00Z")),
  };
  for (const message of Object.values(m)) await store.append(message);
  await store.markRead("bob", m.first.id, at("2026-01-06T00:00:00Z"));
  await store.markRead("bob", m.second.id, at("2026-01-07T00:00:00Z"));
  await store.archive("bob", { ids: [m.first.id] }, false);
  await store.archive("dave", { ids: [m.gone.id] }, false);
  await store.updateMemberships("groups", (lists) => lists.set("team", ["bob", "carol"]));
  await store.updateMemberships("roles", (lists) => lists.set("triage", ["bob"]));
  await store.writeStatus({ name: "bob", status: "work", pane: "%1", at: at("2026-01-08T00:00:00Z") });
  await store.writeStatus({
    name: "carol",
    status: "ready",
    pane: "%2",
    at: at("2026-01-09T00:00:00Z"),
    pin: { window: "@2", server: "/tmp/tmux,1", host: "h" },
  });
  return m;
}

/** Every mailbox's records as a reader sees them: id, archived, read flag and read time. */
async function snapshot(store: Store): Promise<Record<string, string[]>> {
  const names = [...new Set([...(await store.mailboxes()), ...(await store.archives())])];
  for (const role of await store.roleQueues()) names.push(`role:${role}`);
  const view: Record<string, string[]> = {};
  for (const name of names.sort()) {
    view[name] = (await store.mail(name)).map(
      ({ message, archived }) => `${message.id} ${archived ? "archived" : "live"} ${message.read_flag} ${message.read_at ?? "-"}`,
    );
  }
  return view;
}

/** A target that fails its `after`th append, as a migration killed there would stop. */
function failingAfter(store: Store, after: number): Store {
  let appends = 0;
  return new Proxy(store, {
    get(object, key) {
      if (key === "append") {
        return async (message: Message) => {
          if (++appends > after) throw new Error("killed");
          return object.append(message);
        };
      }
      const value = Reflect.get(object, key);
      return typeof value === "function" ? value.bind(object) : value;
    },
  });
}

describe("migrateMail", () => {
  test("copies every mailbox, role queue and archive with read state and read times, the lists and the statuses", async () => {
    const m = await fill(source);
    const before = await snapshot(source);
    const report = await migrateMail(source, target, false);
    expect(report).toEqual({
      from: from.mailDir,
      to: to.mailDir,
      dry_run: false,
      mailboxes: 3,
      messages: 5,
      archived: 2,
      already: 0,
      groups: 1,
      roles: 1,
      statuses: 2,
      source_moved: false,
      remove_source: null,
    });
    expect(await snapshot(target)).toEqual(before);
    expect(await snapshot(source)).toEqual(before);
    expect((await target.take("bob", () => {}))?.id).toBe(m.third!.id);
    expect((await target.take("role:triage", () => {}))?.id).toBe(m.role!.id);
    expect(await target.memberships("groups")).toEqual(new Map([["team", ["bob", "carol"]]]));
    expect(await target.memberships("roles")).toEqual(new Map([["triage", ["bob"]]]));
    expect(await target.status("bob")).toMatchObject({ status: "work", pane: "%1", updated_at: "2026-01-08T00:00:00.000Z" });
    expect(await target.status("carol")).toMatchObject({ window: "@2", server: "/tmp/tmux,1", host: "h" });
  });

  test("a second run copies nothing and finds everything already there", async () => {
    await fill(source);
    await migrateMail(source, target, false);
    const copied = await snapshot(target);
    const again = await migrateMail(source, target, false);
    expect(again).toMatchObject({ mailboxes: 0, messages: 0, archived: 0, already: 5, groups: 0, roles: 0, statuses: 0 });
    expect(await snapshot(target)).toEqual(copied);
  });

  for (const after of [0, 1, 2, 3, 4]) {
    test(`a run killed after ${after} appends is finished by the next run, every message once`, async () => {
      await fill(source);
      const killed = await migrateMail(source, failingAfter(target, after), false).catch((error: Error) => error);
      expect(killed).toBeInstanceOf(Error);
      await migrateMail(source, target, false);
      expect(await snapshot(target)).toEqual(await snapshot(source));
      for (const file of readdirSync(to.mailDir).filter((name) => name.endsWith(".jsonl"))) {
        const ids = readFileSync(join(to.mailDir, file), "utf8")
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line).id);
        expect(new Set(ids).size).toBe(ids.length);
      }
    });
  }

  test("a message the target holds live but the source has archived is archived, not copied again", async () => {
    const message = createMessage("alice", "bob", "archived after an interrupted run");
    await source.append({ ...message, read_flag: true });
    await target.append({ ...message, read_flag: true });
    await source.archive("bob", { ids: [message.id] }, false);
    const report = await migrateMail(source, target, false);
    expect(report).toMatchObject({ messages: 0, already: 1 });
    expect((await target.find("bob", message.id))?.archived).toBe(true);
  });

  test("lists are merged: members the target lacks are added after its own; a newer status on the target is kept", async () => {
    await source.updateMemberships("groups", (lists) => lists.set("team", ["bob", "carol"]));
    await target.updateMemberships("groups", (lists) => lists.set("team", ["erin", "bob"]));
    await source.writeStatus({ name: "bob", status: "offline", pane: "%1", at: at("2026-01-01T00:00:00Z") });
    await target.writeStatus({ name: "bob", status: "ready", pane: "%9", at: at("2026-01-02T00:00:00Z") });
    const report = await migrateMail(source, target, false);
    expect(report).toMatchObject({ groups: 1, statuses: 0 });
    expect((await target.memberships("groups")).get("team")).toEqual(["erin", "bob", "carol"]);
    expect(await target.status("bob")).toMatchObject({ status: "ready", pane: "%9" });
  });

  test("a dry run counts what a real run copies and changes nothing", async () => {
    await fill(source);
    await target.updateMemberships("groups", (lists) => lists.set("team", ["bob"]));
    const dry = await migrateMail(source, target, true);
    expect(await snapshot(target)).toEqual({});
    expect((await target.memberships("groups")).get("team")).toEqual(["bob"]);
    expect(await target.statuses()).toEqual([]);
    const real = await migrateMail(source, target, false);
    expect({ ...dry, dry_run: false }).toEqual(real);
  });

  test("an empty source copies nothing", async () => {
    expect(await migrateMail(source, target, false)).toMatchObject({ mailboxes: 0, messages: 0, groups: 0, roles: 0, statuses: 0 });
  });
});

describe("migrate (the command)", () => {
  test("needs exactly one of --to and --from, with a URL", async () => {
    const place = { cwd: from.dir, env: {} };
    for (const request of [{}, { to: "redis://a", from: "redis://b" }]) {
      const error = await migrate(place, { ...request, dryRun: false }).catch((thrown) => thrown);
      expect(error.code).toBe("usage");
      expect(error.message).toContain("agentmail migrate --to URL | --from URL");
    }
    const empty = await migrate(place, { to: " ", dryRun: false }).catch((thrown) => thrown);
    expect(empty.message).toContain("the URL is empty");
    const cli = await runInProcess(["migrate", "--json"], { cwd: from.dir });
    expect(cli.code).toBe(1);
    expect(JSON.parse(cli.stdout).error.code).toBe("usage");
  });

  for (const after of [1_000, 1_500, 2_999]) {
    test(`a long mailbox, copied ${after} at a time in flight, killed after ${after} appends: finished once and in order`, async () => {
      const messages: Message[] = [];
      for (let n = 0; n < 3_000; n++) messages.push(createMessage("alice", "bob", `bulk ${n}`, new Date(Date.UTC(2026, 0, 1) + n * 1000)));
      mkdirSync(from.mailDir, { recursive: true });
      writeFileSync(join(from.mailDir, "bob.jsonl"), messages.map((message) => JSON.stringify(message) + "\n").join(""));
      const killed = await migrateMail(source, failingAfter(target, after), false).catch((error: Error) => error);
      expect(killed).toBeInstanceOf(Error);
      const report = await migrateMail(source, target, false);
      expect(report).toMatchObject({ messages: 3_000 - after, already: after });
      const ids = readFileSync(join(to.mailDir, "bob.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line).id);
      expect(ids).toEqual(messages.map((message) => message.id));
    });
  }

  test("the report says what was copied, what became of the source, and how to delete its mail only", () => {
    const report = { from: "/r/.git/mail", to: "redis://h:6379/0", dry_run: false, mailboxes: 1, messages: 2, archived: 1 };
    const counts = { already: 0, groups: 0, roles: 1, statuses: 3 };
    const moved = { source_moved: true, remove_source: "cd /r/.git/mail && rm -r -- .archive bob.jsonl" };
    expect(migrationText({ ...report, ...counts, ...moved })).toBe(
      "copied 2 messages in 1 mailbox (1 archived), 0 groups, 1 role, 3 statuses from /r/.git/mail to redis://h:6379/0; 0 already there\n" +
        "/r/.git/mail now refuses every command and says where its mail went\n" +
        "once every agent uses the new store, delete the old mail (only the mail): cd /r/.git/mail && rm -r -- .archive bob.jsonl\n",
    );
    expect(migrationText({ ...report, ...counts, ...moved }, 4_000).split("\n")[0]).toBe(
      "copied 2 messages in 1 mailbox (1 archived), 0 groups, 1 role, 3 statuses from /r/.git/mail to redis://h:6379/0 in 4.0 s " +
        "(1 messages/s); 0 already there",
    );
    const kept = migrationText({ ...report, ...counts, source_moved: false, remove_source: null });
    expect(kept).toContain("/r/.git/mail is left as it was (--keep-source)");
    expect(migrationText({ ...report, ...counts, dry_run: true, source_moved: false, remove_source: null })).toStartWith(
      "would copy 2 messages",
    );
  });
});

describe("moveMail: the source says where its mail went", () => {
  test("after a move every command against the source fails, naming the target and how to point there; the mail is delivered once", async () => {
    const m = await fill(source);
    const report = await moveMail(source, target, false, false);
    expect(report).toMatchObject({ messages: 5, source_moved: true });
    expect(await source.moved()).toMatchObject({ state: "moved", to: to.mailDir, use: target.pointer });
    const error = await failureOf(openStore({ cwd: from.dir, env: {} }));
    expect(error.code).toBe("moved");
    expect(error.message).toStartWith(`the mail of ${from.mailDir} moved to ${to.mailDir} (agentmail migrate, `);
    expect(error.message).toEndWith(`; point agentmail there: ${target.pointer}`);
    expect((await failureOf(source.take("bob", () => {}))).code).toBe("moved");
    expect((await failureOf(source.append(createMessage("alice", "bob", "late")))).code).toBe("moved");
    expect((await target.take("bob", () => {}))?.id).toBe(m.third!.id);
    expect(await target.take("bob", () => {})).toBeNull();
  });

  test("--keep-source leaves the source live; a dry run marks nothing", async () => {
    await fill(source);
    await moveMail(source, target, true, false);
    expect(await source.moved()).toBeNull();
    expect(await moveMail(source, target, false, true)).toMatchObject({ source_moved: false, remove_source: null });
    expect(await source.moved()).toBeNull();
    expect(mailRoot(from.dir, {})).toBe(from.mailDir);
  });

  test("running it again after it finished, or after it was stopped, completes it; a source moved elsewhere is refused", async () => {
    await fill(source);
    const killed = await moveMail(source, failingAfter(target, 2), false, false).catch((error: Error) => error);
    expect(killed).toBeInstanceOf(Error);
    expect(await source.moved()).toMatchObject({ state: "moving", to: to.mailDir });
    const moving = await failureOf(openStore({ cwd: from.dir, env: {} }));
    expect(moving.message).toContain(`is being moved to ${to.mailDir} by agentmail migrate`);
    await moveMail(source, target, false, false);
    expect(await snapshot(target)).toEqual(await snapshot(source));
    expect(await moveMail(source, target, false, false)).toMatchObject({ messages: 0, already: 5, source_moved: true });
    const third = tempRepo();
    try {
      const error = await failureOf(moveMail(source, new FileStore(third.mailDir), false, false));
      expect(error.code).toBe("moved");
      expect(error.message).toContain(`moved to ${to.mailDir}`);
    } finally {
      third.remove();
    }
  });

  test("mail moves back into the old store: its note is cleared, and what was read meanwhile is not shown again", async () => {
    const m = await fill(source);
    await moveMail(source, target, false, false);
    expect((await target.take("bob", () => {}))?.id).toBe(m.third!.id);
    await target.append(createMessage("carol", "bob", "sent while on the new store"));
    await moveMail(target, source, false, false);
    expect(await source.moved()).toBeNull();
    expect(await target.moved()).toMatchObject({ state: "moved", to: from.mailDir });
    const live = new FileStore(mailRoot(from.dir, {}));
    const shown: string[] = [];
    while (await live.take("bob", (message) => void shown.push(message.message)));
    expect(shown).toEqual(["sent while on the new store"]);
  });

  test("the clean-up it suggests deletes the mail only: the bridges, queued Roo messages, the mailman's files and the note stay", async () => {
    await fill(source);
    await source.take("bob", () => {});
    const kept = [".bridges/config.json", ".bridges/roo-queue/architect/0000000001_Ab3dE5gH.md", ".mailman/log", "notes.txt"];
    for (const path of kept) {
      mkdirSync(dirname(join(from.mailDir, path)), { recursive: true });
      writeFileSync(join(from.mailDir, path), "not mail\n");
    }
    const { remove_source: removal } = await moveMail(source, target, false, false);
    expect(removal).toStartWith(`cd ${from.mailDir} && rm -r -- `);
    const removed = Bun.spawnSync(["sh", "-c", removal!]);
    expect({ code: removed.exitCode, stderr: removed.stderr.toString() }).toEqual({ code: 0, stderr: "" });
    expect(readdirSync(from.mailDir).sort()).toEqual([".agentmail-store", ".bridges", ".mailman", ".moved", "notes.txt"]);
    for (const path of kept) expect(readFileSync(join(from.mailDir, path), "utf8")).toBe("not mail\n");
    expect((await failureOf(openStore({ cwd: from.dir, env: {} }))).code).toBe("moved");
  });
});
