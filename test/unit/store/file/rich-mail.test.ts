/**
 * The store behind rich mail, in process: the read-time journal, archive moves and their crash recovery, purge,
 * the sent index and its checks, marking one message read, urgent-first delivery, and the actions on top.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { appendFileSync, closeSync, existsSync, openSync, readFileSync, statSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { archive } from "../../../../src/actions/archive.ts";
import { sent } from "../../../../src/actions/follow.ts";
import { inbox, peek, readOne, search, searchPattern, thread } from "../../../../src/actions/mailbox-view.ts";
import { AgentmailError, type ErrorCode } from "../../../../src/mail/errors.ts";
import { isUrgent } from "../../../../src/mail/fields.ts";
import { createMessage, serializeMessage, type Message } from "../../../../src/mail/message.ts";
import { archiveMessages, archivePath, listArchives, purgeArchive } from "../../../../src/store/file/archive.ts";
import { agentMail, agentsWithMail, findMail } from "../../../../src/store/file/mail-view.ts";
import { byCreation } from "../../../../src/mail/order.ts";
import { FileStore } from "../../../../src/store/file/file-store.ts";
import { cursorPathOf } from "../../../../src/store/file/cursor.ts";
import { newMailboxPathOf, pendingMovePathOf } from "../../../../src/store/file/pending-move.ts";
import { appendMessage, takeOldestUnread } from "../../../../src/store/file/mailbox.ts";
import { mailboxPath } from "../../../../src/store/local/layout.ts";
import { markRead } from "../../../../src/store/file/mark-read.ts";
import { ensureRoot } from "../../../../src/store/paths.ts";
import {
  appendReadTime,
  readsPathOf,
  readTimes,
  readTimesOf,
  removeReadTimes,
  withReadTime,
} from "../../../../src/store/file/read-times.ts";
import { idNumber } from "../../../../src/store/file/line-fields.ts";
import { hashOf, idsIn, readRecordFile, recordsIn } from "../../../../src/store/file/records.ts";
import { sentIndexPath } from "../../../../src/store/file/sent-index.ts";
import { sentBy } from "../../../../src/store/file/sent-reader.ts";
import { writeOldReadLines } from "../../../support/big-mailbox.ts";
import { tempRepo } from "../../../support/repo.ts";

/** Three ids, as agentmail makes them, whose idNumbers differ and share a 32-bit hash (records.ts, hashOf). */
function sharingAHash(): [string, string, string] {
  const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  const text = (number: number) => {
    let id = "";
    for (let rest = number - 1, i = 0; i < 8; i++, rest = Math.floor(rest / 62)) id = digits[rest % 62] + id;
    return id;
  };
  const low = 0x00bc614e;
  const ids = [1000, 2000, 3000].map((high) => {
    // The low half that gives this high half the hash the first one has.
    const matching = (low ^ hashOf(1000 * 2 ** 32) ^ hashOf(high * 2 ** 32)) >>> 0;
    return text(high * 2 ** 32 + matching);
  });
  expect(new Set(ids.map((id) => hashOf(idNumber(id)))).size).toBe(1);
  return ids as [string, string, string];
}

let repo: ReturnType<typeof tempRepo>;
let root: string;
beforeEach(() => {
  repo = tempRepo();
  root = ensureRoot(repo.mailDir);
});
afterEach(() => repo.remove());

let serial = 0;
const T0 = Date.parse("2026-01-01T00:00:00.000Z");
/** A message with a deterministic id and creation time (each one a second after the last). */
function mail(from: string, to: string, body: string, fields: object = {}): Message {
  const n = serial++;
  return { ...createMessage(from, to, body, new Date(T0 + n * 1000), fields), id: `M${String(n).padStart(7, "0")}` };
}
async function deliver(...messages: Message[]): Promise<Message[]> {
  for (const message of messages) await appendMessage(root, message);
  return messages;
}
const ids = (messages: { id: string }[]) => messages.map((message) => message.id);
const take = (agent: string) => takeOldestUnread(root, agent, () => {});

function expectError(run: () => unknown, code: ErrorCode): string {
  try {
    run();
  } catch (error) {
    expect((error as AgentmailError).code).toBe(code);
    return (error as Error).message;
  }
  throw new Error("expected an error");
}
async function expectRejects(run: () => Promise<unknown>, code: ErrorCode): Promise<string> {
  try {
    await run();
  } catch (error) {
    expect((error as AgentmailError).code).toBe(code);
    return (error as Error).message;
  }
  throw new Error("expected an error");
}

describe("read times", () => {
  test("a receive journals when it marked the message read, and readers merge it as read_at", async () => {
    const [first] = await deliver(mail("alice", "bob", "one"));
    const taken = await take("bob");
    expect([taken?.id, taken?.read_flag, String(taken?.read_at)]).toEqual([first!.id, true, expect.stringMatching(/^\d{4}-\d\d-\d\dT/)]);
    const journal = readFileSync(readsPathOf(mailboxPath(root, "bob")), "utf8");
    expect(journal).toBe(`${first!.id} ${taken!.read_at}\n`);
    // The mailbox line itself is only marked in place: same length, no read_at in it.
    expect(readFileSync(mailboxPath(root, "bob"), "utf8")).toBe(serializeMessage(first!).replace('"read_flag":false', '"read_flag":true '));
    expect(agentMail(root, "bob")[0]!.message.read_at).toBe(taken!.read_at);
  });

  test("the last line for an id wins; torn lines are ignored; a time counts only for a read record", () => {
    const path = mailboxPath(root, "bob");
    appendReadTime(path, "Aaaaaaaa", new Date(T0));
    appendReadTime(path, "Aaaaaaaa", new Date(T0 + 1000));
    appendFileSync(readsPathOf(path), "garbage\nBbbbbbbb 2026-01-0");
    const times = readTimes(path);
    expect([...times]).toEqual([["Aaaaaaaa", "2026-01-01T00:00:01.000Z"]]);
    const unread = { ...createMessage("a", "bob", "x"), id: "Aaaaaaaa" };
    expect(withReadTime(unread, times)).toBe(unread);
    expect(withReadTime({ ...unread, read_flag: true }, times).read_at).toBe("2026-01-01T00:00:01.000Z");
    expect(withReadTime({ ...unread, read_flag: true, read_at: "own" }, times).read_at).toBe("own");
    // Only the times asked for, read a chunk at a time: a journal past one chunk, lines of other ids passed over.
    const others = Array.from({ length: 150_000 }, (_, i) => `O${String(i).padStart(7, "0")} 2026-01-01T00:00:02.000Z\n`).join("");
    appendFileSync(readsPathOf(path), `\n${others}Aaaaaaaa 2026-01-01T00:00:03.000Z\nCcccccc 2026-01-01T00:00:04.000Z\n`);
    expect(Object.fromEntries(readTimesOf(path, ["Aaaaaaaa", "O0000007", "Bbbbbbbb", "Ccccccc", "Nowhere1"]))).toEqual({
      Aaaaaaaa: "2026-01-01T00:00:03.000Z",
      O0000007: "2026-01-01T00:00:02.000Z",
    });
    expect(readTimesOf(path, []).size).toBe(0);
    removeReadTimes(path);
    expect(readTimes(path).size).toBe(0);
    expect(readTimesOf(path, ["Aaaaaaaa"]).size).toBe(0);
  });

  test("a journal that cannot be written costs only the time, never the mark", async () => {
    await deliver(mail("alice", "bob", "one"));
    const journal = readsPathOf(mailboxPath(root, "bob"));
    Bun.spawnSync(["mkdir", journal]);
    const taken = await take("bob");
    expect(taken?.read_flag).toBe(true);
    // The receive itself shows when it read the message; the journal keeps nothing, so later views show no time.
    expect(readTimes(mailboxPath(root, "bob")).size).toBe(0);
    expect(findMail(root, "bob", taken!.id)?.message.read_at).toBeUndefined();
  });
});

describe("records", () => {
  test("first line per id wins, garbage and an unterminated tail are skipped, a needle filters", () => {
    const a = mail("alice", "bob", "needle here");
    const b = mail("carol", "bob", "other");
    const bytes = Buffer.from(
      serializeMessage(a) + "garbage\n" + serializeMessage(b) + serializeMessage({ ...a, message: "dup" }) + '{"id":"torn',
    );
    expect(recordsIn(bytes).map((record) => record.message.message)).toEqual(["needle here", "other"]);
    expect(recordsIn(bytes, Buffer.from("needle")).map((record) => record.message.id)).toEqual([a.id]);
    expect(recordsIn(bytes, Buffer.from('"alice"')).map((record) => record.message.message)).toEqual(["needle here"]);
    expect([...idsIn(bytes)]).toEqual([a.id, b.id]);
    expect(readRecordFile(join(root, "missing.jsonl")).records).toEqual([]);
  });

  test("mail is ordered by creation; records without a time keep their place", () => {
    const late = { message: mail("a", "b", "late"), archived: false };
    const early = { message: { ...mail("a", "b", "early"), created_at: new Date(T0 - 1000).toISOString() }, archived: false };
    const untimed = { message: { ...mail("a", "b", "untimed"), created_at: "never" }, archived: false };
    expect(byCreation([late, early, untimed]).map((record) => record.message.message)).toEqual(["untimed", "early", "late"]);
  });
});

/** What a receive of `id` does to the files, done here synchronously: its time journaled, then its flag marked in place. */
function receiveBehindTheMovesBack(path: string, id: string, at: Date): void {
  appendReadTime(path, id, at);
  const text = readFileSync(path, "latin1");
  const line = text.indexOf(`"id":"${id}"`);
  const flag = text.indexOf('"read_flag":false', line) + '"read_flag":'.length;
  const fd = openSync(path, "r+");
  try {
    writeSync(fd, "true ", flag);
  } finally {
    closeSync(fd);
  }
}

describe("archive", () => {
  test("moves read mail with its read time folded in, keeps the rest byte for byte, drops the journal and makes a new cursor", async () => {
    const [first, second, third] = await deliver(
      mail("alice", "bob", "one"),
      mail("alice", "bob", "two", { subject: "S", extra: { kept: 1 } }),
      mail("alice", "bob", "three"),
    );
    await take("bob");
    await take("bob");
    const path = mailboxPath(root, "bob");
    expect(existsSync(cursorPathOf(path))).toBe(true);
    const times = readTimes(path);
    const result = await archiveMessages(root, "bob", { ids: [second!.id] }, false);
    expect(result.archived).toBe(1);
    const archived = readRecordFile(archivePath(root, "bob")).records.map((record) => record.message);
    expect(archived).toEqual([{ ...second!, read_flag: true, read_at: times.get(second!.id)! }]);
    expect(Object.keys(archived[0]!)).toEqual(["id", "from", "to", "message", "read_flag", "created_at", "subject", "extra", "read_at"]);
    // The read message that stays carries its read time now; the unread one is untouched.
    const live = readFileSync(path, "utf8").split("\n");
    expect(JSON.parse(live[0]!)).toEqual({ ...first!, read_flag: true, read_at: times.get(first!.id)! });
    expect(live[1]).toBe(serializeMessage(third!).trimEnd());
    // The new mailbox's cursor is just after its read line: the next receive starts at the unread one.
    const cursor = readFileSync(cursorPathOf(path), "utf8").slice(0, 128).trim().split(" ");
    expect([Number(cursor[1]), Number(cursor[3])]).toEqual([statSync(path).ino, live[0]!.length + 1]);
    expect(existsSync(readsPathOf(path))).toBe(false);
    expect(listArchives(root)).toEqual(["bob"]);
    expect(agentsWithMail(root)).toEqual(["bob"]);
    expect((await take("bob"))?.id).toBe(third!.id);
  });

  test("an id that is not live archives nothing and names the next step", async () => {
    const [first] = await deliver(mail("alice", "bob", "one"));
    const before = readFileSync(mailboxPath(root, "bob"), "utf8");
    const message = await expectRejects(() => archiveMessages(root, "bob", { ids: [first!.id, "Nope0000"] }, false), "not_found");
    expect(message).toContain("Nope0000");
    expect(message).toContain("agentmail inbox --all");
    expect(readFileSync(mailboxPath(root, "bob"), "utf8")).toBe(before);
    expect(existsSync(archivePath(root, "bob"))).toBe(false);
    await expectRejects(() => archiveMessages(root, "nobody", { ids: ["Nope0000"] }, false), "not_found");
  });

  test("a send and a read made while a move reads its snapshot are kept: nothing dropped, nothing shown twice", async () => {
    const [unread1, moving, folded, unread2] = await deliver(
      mail("alice", "bob", "u1"),
      mail("alice", "bob", "moves"),
      mail("alice", "bob", "read, stays"),
      mail("alice", "bob", "u2"),
    );
    await markRead(root, "bob", moving!.id, new Date(T0));
    await markRead(root, "bob", folded!.id, new Date(T0 + 1_000));
    const path = mailboxPath(root, "bob");
    const late = mail("carol", "bob", "sent during the move");
    const readAt = new Date(T0 + 5_000);
    // The rule is asked about each line as the snapshot is read: when it gets to the last one, u1 has been read as
    // unread and already copied into the new mailbox; then a send and a receive of u1 happen, as another process
    // would do them.
    const pick = (message: Message) => {
      if (message.id === unread2!.id) {
        appendFileSync(path, serializeMessage(late));
        receiveBehindTheMovesBack(path, unread1!.id, readAt);
      }
      return message.id === moving!.id;
    };
    expect(await archiveMessages(root, "bob", { pick }, false)).toEqual({ archived: 1, removed: false });
    expect(readRecordFile(archivePath(root, "bob")).records.map((record) => record.message)).toEqual([
      { ...moving!, read_flag: true, read_at: new Date(T0).toISOString() },
    ]);
    const live = readRecordFile(path).records.map((record) => record.message);
    expect(live.map((message) => [message.message, message.read_flag, message.read_at])).toEqual([
      ["u1", true, undefined],
      ["read, stays", true, new Date(T0 + 1_000).toISOString()],
      ["u2", false, undefined],
      ["sent during the move", false, undefined],
    ]);
    // The mark's time is still known: the journal keeps it for the record that carries none.
    expect(findMail(root, "bob", unread1!.id)?.message.read_at).toBe(readAt.toISOString());
    expect(readTimes(path)).toEqual(new Map([[unread1!.id, readAt.toISOString()]]));
    expect(ids([(await take("bob"))!, (await take("bob"))!])).toEqual([unread2!.id, late.id]);
    expect(await take("bob")).toBeNull();
  });

  test("a message archived unread, and read while the move reads its snapshot, is archived read", async () => {
    const [first, read, last] = await deliver(mail("alice", "bob", "one"), mail("alice", "bob", "two"), mail("alice", "bob", "three"));
    await markRead(root, "bob", read!.id, new Date(T0));
    const path = mailboxPath(root, "bob");
    // Like `archive <id>` of an unread message, with a receive of it once it has been copied into the archive.
    const pick = (message: Message) => {
      if (message.id === last!.id) receiveBehindTheMovesBack(path, first!.id, new Date(T0 + 1_000));
      return message.id !== last!.id;
    };
    expect((await archiveMessages(root, "bob", { pick }, false)).archived).toBe(2);
    expect(readRecordFile(archivePath(root, "bob")).records.map((record) => [record.message.id, record.message.read_flag])).toEqual([
      [first!.id, true],
      [read!.id, true],
    ]);
    expect((await take("bob"))?.id).toBe(last!.id);
  });

  test("a copy a rename brings back while a move reads its snapshot is kept, though the line it came from moved", async () => {
    const [first, second] = await deliver(mail("alice", "bob", "one"), mail("alice", "bob", "two"));
    const path = mailboxPath(root, "bob");
    // bob was renamed bob2 while "one" was unread (its line here marked read by the move), and is being renamed back:
    // the copy comes back as new unread mail (moves 2) just as the move reaches the last line of its snapshot.
    await markRead(root, "bob", first!.id, new Date(T0));
    const back: Message = { ...first!, moves: 2, moved_from: "bob2" };
    const pick = (message: Message) => {
      if (message.id === second!.id) appendFileSync(path, serializeMessage(back));
      return message.read_flag === true;
    };
    expect(await archiveMessages(root, "bob", { pick }, false)).toEqual({ archived: 1, removed: false });
    expect(readRecordFile(archivePath(root, "bob")).records.map((record) => [record.message.id, record.message.moves ?? 0])).toEqual([
      [first!.id, 0],
    ]);
    expect((await take("bob"))?.id).toBe(second!.id);
    expect(await take("bob")).toMatchObject({ id: first!.id, moves: 2 });
    expect(await take("bob")).toBeNull();
  });

  test("a move killed before its rename shows each message once, and the next pass undoes it before anything else", async () => {
    const [earlier, first, second] = await deliver(
      mail("alice", "bob", "earlier"),
      mail("alice", "bob", "one"),
      mail("alice", "bob", "two"),
    );
    await archiveMessages(root, "bob", { ids: [earlier!.id] }, false);
    const archive = archivePath(root, "bob");
    const before = readFileSync(archive, "utf8");
    const path = mailboxPath(root, "bob");
    // What a move killed after appending to the archive leaves: its record, the archive grown, a new mailbox half written.
    writeFileSync(newMailboxPathOf(path), serializeMessage(second!));
    writeFileSync(pendingMovePathOf(path), JSON.stringify({ archiveIno: statSync(archive).ino, archiveSize: before.length }));
    appendFileSync(archive, serializeMessage(first!));
    // Readers show it once, as live.
    expect(ids(agentMail(root, "bob").map((record) => record.message))).toEqual([first!.id, second!.id, earlier!.id]);
    expect(findMail(root, "bob", first!.id)?.archived).toBe(false);
    // The next pass of any kind (a purge too) first puts the archive back as it was, then does its own work.
    expect(await purgeArchive(root, "bob", () => false, false)).toEqual([]);
    expect(readFileSync(archive, "utf8")).toBe(before);
    expect(existsSync(newMailboxPathOf(path))).toBe(false);
    expect(existsSync(pendingMovePathOf(path))).toBe(false);
    expect((await archiveMessages(root, "bob", { ids: [first!.id] }, false)).archived).toBe(1);
    expect(ids(readRecordFile(archive).records.map((record) => record.message))).toEqual([earlier!.id, first!.id]);
    expect(ids(readRecordFile(path).records.map((record) => record.message))).toEqual([second!.id]);
    // Killed before it wrote its record: only the new mailbox is left, and removed.
    writeFileSync(newMailboxPathOf(path), "");
    await archiveMessages(root, "bob", { pick: () => false }, false);
    expect(existsSync(newMailboxPathOf(path))).toBe(false);
  });

  test("a move killed after its rename is finished by the next pass: nothing is undone", async () => {
    const [first, second] = await deliver(mail("alice", "bob", "one"), mail("alice", "bob", "two"));
    const path = mailboxPath(root, "bob");
    await archiveMessages(root, "bob", { ids: [first!.id] }, false);
    // As if the move had been killed between its rename and removing its record (which says there was no archive).
    const archive = archivePath(root, "bob");
    writeFileSync(pendingMovePathOf(path), JSON.stringify({ archiveIno: null, archiveSize: 0 }));
    expect(await archiveMessages(root, "bob", { pick: () => false }, false)).toEqual({ archived: 0, removed: false });
    expect(existsSync(pendingMovePathOf(path))).toBe(false);
    expect(ids(readRecordFile(archive).records.map((record) => record.message))).toEqual([first!.id]);
    expect(ids(readRecordFile(path).records.map((record) => record.message))).toEqual([second!.id]);
  });

  test("a moved id's later duplicate goes with it, garbage and a torn tail stay, an archive's torn tail is terminated", async () => {
    const [first] = await deliver(mail("alice", "bob", "one"));
    const path = mailboxPath(root, "bob");
    appendFileSync(path, "garbage\n" + serializeMessage(first!) + '{"torn');
    Bun.spawnSync(["mkdir", "-p", join(root, ".archive")]);
    writeFileSync(archivePath(root, "bob"), '{"half');
    await archiveMessages(root, "bob", { ids: [first!.id] }, false);
    expect(readFileSync(path, "utf8")).toBe('garbage\n{"torn');
    expect(readFileSync(archivePath(root, "bob"), "utf8")).toBe('{"half\n' + serializeMessage(first!));
  });

  test("a dry run changes nothing; an empty mailbox is removed", async () => {
    const [first] = await deliver(mail("alice", "bob", "one"));
    await take("bob");
    const before = readFileSync(mailboxPath(root, "bob"), "utf8");
    const picked: string[] = [];
    const pick = (message: Message) => message.read_flag === true && picked.push(message.id) > 0;
    expect(await archiveMessages(root, "bob", { pick }, true)).toEqual({ archived: 1, removed: true });
    expect(picked).toEqual([first!.id]);
    expect(readFileSync(mailboxPath(root, "bob"), "utf8")).toBe(before);
    writeFileSync(mailboxPath(root, "carol"), "");
    expect(await archiveMessages(root, "carol", { pick: () => true }, false)).toEqual({ archived: 0, removed: true });
    expect(existsSync(mailboxPath(root, "carol"))).toBe(false);
    expect(await archiveMessages(root, "nobody", { pick: () => true }, false)).toEqual({ archived: 0, removed: false });
  });

  test("purge deletes archived mail it is told to, and removes an archive left empty", async () => {
    const [old, recent] = await deliver(mail("alice", "bob", "old"), mail("alice", "bob", "recent"));
    await archiveMessages(root, "bob", { ids: [old!.id, recent!.id] }, false);
    appendFileSync(archivePath(root, "bob"), "garbage\n");
    const isOld = (message: Message) => message.id === old!.id;
    expect(ids(await purgeArchive(root, "bob", isOld, true))).toEqual([old!.id]);
    expect(readRecordFile(archivePath(root, "bob")).records).toHaveLength(2);
    expect(ids(await purgeArchive(root, "bob", isOld, false))).toEqual([old!.id]);
    expect(readFileSync(archivePath(root, "bob"), "utf8")).toBe(serializeMessage(recent!) + "garbage\n");
    expect(await purgeArchive(root, "bob", isOld, false)).toEqual([]);
    writeFileSync(archivePath(root, "bob"), serializeMessage(recent!));
    await purgeArchive(root, "bob", () => true, false);
    expect(existsSync(archivePath(root, "bob"))).toBe(false);
    expect(await purgeArchive(root, "bob", () => true, false)).toEqual([]);
  });
});

describe("marking one message read", () => {
  test("in place, journaled, once; null for a read, missing or absent message", async () => {
    const [first, second] = await deliver(mail("alice", "bob", "one"), mail("alice", "bob", `mentions "${"M"}"`));
    const size = statSync(mailboxPath(root, "bob")).size;
    const time = await markRead(root, "bob", second!.id, new Date(T0));
    expect(time).toBe(new Date(T0).toISOString());
    expect(statSync(mailboxPath(root, "bob")).size).toBe(size);
    expect(await markRead(root, "bob", second!.id)).toBeNull();
    expect(await markRead(root, "bob", "Nope0000")).toBeNull();
    expect(await markRead(root, "nobody", first!.id)).toBeNull();
    // The oldest unread is still the first: marking a later one never moves it past the first.
    expect((await take("bob"))?.id).toBe(first!.id);
  });
});

describe("urgent first, for hooks", () => {
  test("the oldest urgent message comes before older ones; then the rest in order; the cursor never skips one", async () => {
    const [normal1, urgent1, normal2, urgent2] = await deliver(
      mail("alice", "bob", "n1"),
      mail("alice", "bob", "u1", { priority: "urgent" }),
      mail("alice", "bob", "n2"),
      mail("alice", "bob", "u2", { priority: "urgent" }),
    );
    const order: string[] = [];
    for (let i = 0; i < 5; i++) {
      const message = await takeOldestUnread(root, "bob", () => {}, undefined, isUrgent);
      if (message) order.push(message.id);
    }
    expect(order).toEqual([urgent1!.id, urgent2!.id, normal1!.id, normal2!.id]);
    // Plain receive after an urgent one was taken out of order still finds the older normal one.
    const [late] = await deliver(mail("alice", "bob", "late"), mail("alice", "bob", "u3", { priority: "urgent" }));
    expect((await takeOldestUnread(root, "bob", () => {}, undefined, isUrgent))?.message).toBe("u3");
    expect((await take("bob"))?.id).toBe(late!.id);
  });
});

describe("the sent index", () => {
  test("lists what a sender sent, live and archived, with receipts; kept in .sent and reused", async () => {
    const [toBob, , toCarol] = await deliver(
      mail("alice", "bob", "to bob"),
      mail("carol", "bob", "not mine"),
      mail("alice", "carol", "to carol"),
    );
    await take("bob");
    const first = sentBy(root, "alice");
    expect(first.map((record) => [record.message.id, record.message.read_flag, record.archived])).toEqual([
      [toBob!.id, true, false],
      [toCarol!.id, false, false],
    ]);
    expect(first[0]!.message.read_at).toEqual(expect.any(String));
    const index = readFileSync(sentIndexPath(root, "alice"), "latin1");
    expect([index.includes('"key":"bob.jsonl"'), index.includes('"key":"carol.jsonl"')]).toEqual([true, true]);
    // New mail is found in the tail; archived mail is found in the archive; a rewrite (new inode) is read again.
    const [again] = await deliver(mail("alice", "bob", "again"));
    expect(ids(sentBy(root, "alice").map((record) => record.message))).toEqual([toBob!.id, again!.id, toCarol!.id]);
    await archiveMessages(root, "bob", { ids: [toBob!.id] }, false);
    const after = sentBy(root, "alice");
    expect(after.map((record) => [record.message.id, record.archived])).toEqual([
      [again!.id, false],
      [toCarol!.id, false],
      [toBob!.id, true],
    ]);
    expect(after.find((record) => record.archived)?.message.read_at).toEqual(expect.any(String));
    expect(sentBy(root, "alice")).toEqual(after);
  });

  test("a damaged index, a file rewritten in place or truncated, is read again from the start", async () => {
    const [one, two] = await deliver(mail("alice", "bob", "one"), mail("alice", "bob", "two"));
    const expected = [one!.id, two!.id];
    expect(ids(sentBy(root, "alice").map((record) => record.message))).toEqual(expected);
    writeFileSync(sentIndexPath(root, "alice"), "{not json");
    expect(ids(sentBy(root, "alice").map((record) => record.message))).toEqual(expected);
    // Same inode and size, other content: the listed spans no longer hold their ids.
    const path = mailboxPath(root, "bob");
    const swapped =
      serializeMessage({ ...two!, id: one!.id.replace("M", "N") }) + serializeMessage({ ...one!, id: two!.id.replace("M", "N") });
    writeFileSync(path, swapped);
    expect(ids(sentBy(root, "alice").map((record) => record.message)).sort()).toEqual(
      [two!.id.replace("M", "N"), one!.id.replace("M", "N")].sort(),
    );
    // Shorter than the index says.
    writeFileSync(path, serializeMessage(one!));
    expect(ids(sentBy(root, "alice").map((record) => record.message))).toEqual([one!.id]);
    // The last line looked at is no longer what it was (same length, other id), while the spans still hold.
    writeFileSync(path, serializeMessage(one!) + serializeMessage(mail("carol", "bob", "x")));
    sentBy(root, "alice");
    const replaced = serializeMessage(one!) + serializeMessage({ ...mail("carol", "bob", "x"), id: "Zzzzzzzz" });
    writeFileSync(path, replaced + serializeMessage(mail("alice", "bob", "y")));
    expect(sentBy(root, "alice").map((record) => record.message.message)).toEqual(["one", "y"]);
    writeFileSync(sentIndexPath(root, "alice"), JSON.stringify({ version: 0 }));
    expect(sentBy(root, "alice")).toHaveLength(2);
  });

  test("the index keeps no bodies; a list gets them cut to 1,000 characters, a caller that needs them whole whole", async () => {
    const long = "x".repeat(3000);
    const [message] = await deliver(mail("alice", "bob", long));
    expect(String(sentBy(root, "alice")[0]!.message.message)).toBe(long);
    expect(readFileSync(sentIndexPath(root, "alice"), "latin1")).not.toContain("xxxx");
    await take("bob");
    const listed = sentBy(root, "alice", false)[0]!.message;
    expect([listed.id, String(listed.message).length, listed.read_flag]).toEqual([message!.id, 1000, true]);
    expect(String(sentBy(root, "alice", true)[0]!.message.message)).toBe(long);
    await archiveMessages(root, "bob", { ids: [message!.id] }, false);
    expect(String(sentBy(root, "alice", false)[0]!.message.message)).toHaveLength(1000);
    expect(String(sentBy(root, "alice", true)[0]!.message.message)).toBe(long);
  });

  test("an index that cannot be written costs nothing but speed", async () => {
    await deliver(mail("alice", "bob", "one"));
    writeFileSync(join(root, ".sent"), "a file where the directory would be");
    expect(sentBy(root, "alice")).toHaveLength(1);
  });
});

describe("actions on the store", () => {
  test("inbox: unread by default, --all, --archived, filters, oldest first; marks nothing", async () => {
    const [plain, urgent, task] = await deliver(
      mail("alice", "bob", "plain"),
      mail("carol", "bob", "urgent", { priority: "urgent", tags: ["ci"] }),
      mail("alice", "bob", "task", { type: "task" }),
    );
    await take("bob");
    const all = { all: true, archived: false, filter: {} };
    expect(ids(await inbox(new FileStore(root), "bob", { all: false, archived: false, filter: {} }))).toEqual([urgent!.id, task!.id]);
    expect(ids(await inbox(new FileStore(root), "bob", all))).toEqual([plain!.id, urgent!.id, task!.id]);
    expect(ids(await inbox(new FileStore(root), "bob", { ...all, filter: { from: "alice" } }))).toEqual([plain!.id, task!.id]);
    expect(ids(await inbox(new FileStore(root), "bob", { ...all, filter: { priority: "high" } }))).toEqual([urgent!.id]);
    expect(ids(await inbox(new FileStore(root), "bob", { ...all, filter: { tag: "ci", type: "message" } }))).toEqual([urgent!.id]);
    await archive(new FileStore(root), "bob", { read: true, olderThanHours: 0 });
    expect(ids(await inbox(new FileStore(root), "bob", { all: false, archived: true, filter: {} }))).toEqual([plain!.id]);
    expect(ids(await inbox(new FileStore(root), "bob", all))).toEqual([urgent!.id, task!.id]);
    expect(await inbox(new FileStore(join(root, "none")), "bob", all)).toEqual([]);
    expect((await peek(new FileStore(root), "bob"))?.id).toBe(urgent!.id);
    expect(await peek(new FileStore(root), "nobody")).toBeNull();
  });

  test("read: shows, then marks read with the time shown; archived mail is shown as it is; unknown ids name the next step", async () => {
    const [one] = await deliver(mail("alice", "bob", "one"));
    const shown: Message[] = [];
    const read = await readOne(new FileStore(root), "bob", one!.id, (message) => void shown.push(message));
    expect(shown).toEqual([read]);
    expect([read.read_flag, typeof read.read_at]).toEqual([true, "string"]);
    expect(readTimes(mailboxPath(root, "bob")).get(one!.id)).toBe(read.read_at as string);
    const again = await readOne(new FileStore(root), "bob", one!.id, () => {});
    expect([again.read_flag, again.read_at]).toEqual([true, read.read_at]);
    await archive(new FileStore(root), "bob", { ids: [one!.id] });
    expect((await readOne(new FileStore(root), "bob", one!.id, () => {})).read_at).toBe(read.read_at);
    expect(await expectRejects(() => readOne(new FileStore(root), "bob", "Nope0000", () => {}), "not_found")).toContain(
      "agentmail inbox --all",
    );
    // Nothing is marked when showing fails.
    const [two] = await deliver(mail("alice", "bob", "two"));
    await expectRejects(
      () =>
        readOne(new FileStore(root), "bob", two!.id, () => {
          throw new AgentmailError("io", "stdout gone");
        }),
      "io",
    );
    expect((await peek(new FileStore(root), "bob"))?.id).toBe(two!.id);
  });

  test("sent newest first, --unread; search over own and sent mail; thread across mailboxes and archives", async () => {
    const [question] = await deliver(mail("alice", "bob", "Is the build green?", { subject: "Build", type: "question" }));
    const answer = mail("bob", "alice", "No, the FLAKY test again", {
      subject: "Re: Build",
      type: "response",
      thread_id: question!.id,
      in_reply_to: question!.id,
    });
    const [, unrelated] = await deliver(answer, mail("carol", "alice", "lunch?"));
    const followUp = mail("alice", "bob", "retrying", { thread_id: question!.id, in_reply_to: answer.id });
    await deliver(followUp);
    await take("bob");
    expect(ids(await sent(new FileStore(root), "alice", "all"))).toEqual([followUp.id, question!.id]);
    expect(ids(await sent(new FileStore(root), "alice", "unread"))).toEqual([followUp.id]);
    expect(await sent(new FileStore(join(root, "none")), "alice", "all")).toEqual([]);
    expect(ids(await search(new FileStore(root), "alice", searchPattern("flaky", false)))).toEqual([answer.id]);
    expect(ids(await search(new FileStore(root), "alice", searchPattern("build", false)))).toEqual([question!.id, answer.id]);
    expect(ids(await search(new FileStore(root), "alice", searchPattern("^(lunch|retry)", true)))).toEqual([unrelated!.id, followUp.id]);
    expect(await search(new FileStore(join(root, "none")), "alice", /x/)).toEqual([]);
    // Plain text is matched literally, whatever it holds, and without regard to case.
    expect(ids(await search(new FileStore(root), "alice", searchPattern("THE FLAKY", false)))).toEqual([answer.id]);
    expect(await search(new FileStore(root), "alice", searchPattern("build?.*", false))).toEqual([]);
    expect(expectError(() => searchPattern("(", true), "usage")).toContain("without --regex");
    expect(expectError(() => searchPattern("", false), "usage")).toContain("empty");
    await archive(new FileStore(root), "bob", { ids: [question!.id] });
    expect(ids(await thread(new FileStore(root), followUp.id))).toEqual([question!.id, answer.id, followUp.id]);
    expect(ids(await thread(new FileStore(root), question!.id))).toEqual([question!.id, answer.id, followUp.id]);
    expect(ids(await thread(new FileStore(root), unrelated!.id))).toEqual([unrelated!.id]);
    expect(await expectRejects(() => thread(new FileStore(root), "Nope0000"), "not_found")).toContain("agentmail inbox --all");
    await expectRejects(() => thread(new FileStore(join(root, "none")), "Nope0000"), "not_found");
  });

  test("search and sent over a long mailbox, read a chunk at a time, keep the readers' rules", async () => {
    const path = mailboxPath(root, "bob");
    const line = (record: Record<string, unknown>) => JSON.stringify(record) + "\n";
    const base = { from: "alice", to: "bob", read_flag: true, created_at: "2026-01-02T00:00:00.000Z" };
    // Past 4 MiB, so the lines below fall in different chunks.
    writeOldReadLines(path, "bob", 12_000);
    appendFileSync(path, line({ ...base, id: "Innocent", message: "nothing to see" }));
    appendFileSync(path, line({ ...base, id: "Escaped1", message: 'a "needle" in quotes' }));
    appendFileSync(path, line({ ...base, id: "Moved001", message: "a needle, moved", moves: 1, moved_from: "robert" }));
    writeOldReadLines(path, "bob", 12_000);
    // A later line with an id already used is no record: not even when it holds what is searched for.
    appendFileSync(path, line({ ...base, id: "Innocent", message: "forged needle" }));
    appendFileSync(path, line({ ...base, id: "Moved001", message: "a needle, moved more", moves: 2, moved_from: "robert" }));
    appendFileSync(
      path,
      '{"created_at": "2026-01-03T00:00:00.000Z", "from" : "bob", "id": "FromBob1", "message": "needle from bob", "read_flag": true, "to": "bob"}\n',
    );
    for (const plain of [true, false]) {
      const found = await search(new FileStore(root), "bob", searchPattern("needle", false), plain);
      expect(found.map((message) => [message.id, message.message])).toEqual([
        ["Escaped1", 'a "needle" in quotes'],
        ["Moved001", "a needle, moved more"],
        ["FromBob1", "needle from bob"],
      ]);
    }
    expect(ids(await sent(new FileStore(root), "bob", "all"))).toEqual(["FromBob1"]);
    expect(await sent(new FileStore(root), "carol", "all")).toEqual([]);
  });

  test("search, inbox --all and thread over a long mailbox: every match once, in order, text a byte search cannot see found too", async () => {
    const path = mailboxPath(root, "bob");
    const base = { from: "alice", to: "bob", read_flag: true, created_at: "2020-01-01T00:00:00.000Z" };
    const line = (record: Record<string, unknown>) => JSON.stringify({ ...base, ...record }) + "\n";
    // Two blocks of 12,000 lines (past one 4 MiB chunk), one line in fifty from carol, in Thread01, holding "zebra".
    const marked = { every: 50, word: "zebra", fields: { from: "carol", thread_id: "Thread01" } };
    const markedIds = (prefix: string) => Array.from({ length: 240 }, (_, n) => `${prefix}${(n * 50).toString(36).padStart(5, "0")}`);
    writeOldReadLines(path, "bob", 12_000, marked);
    // Matched as text, not as bytes: a Kelvin sign that `k` matches, an accent in either case, an escaped letter.
    appendFileSync(path, line({ id: "Kelvin01", message: "the \u212Aelvin scale" }));
    appendFileSync(path, line({ id: "Accent01", message: "CAFÉ au lait" }));
    appendFileSync(path, line({ id: "Escape01", message: "x" }).replace('"x"', '"a z\\u0065bra in disguise"'));
    // Three ids that share a 32-bit hash (matchingRecords' second look), two of them matches: both listed, once.
    const [first, second, third] = sharingAHash();
    appendFileSync(path, line({ id: first, message: "a zebra sharing a hash" }) + line({ id: second, message: "plain hay" }));
    writeOldReadLines(path, "bob", 12_000, marked, "Two");
    appendFileSync(path, line({ id: third, message: "another zebra sharing it" }));
    const ids = (messages: Message[]) => messages.map((message) => message.id);
    const store = new FileStore(root);
    const zebras = [...markedIds("Big"), "Escape01", first, ...markedIds("Two"), third];
    expect(ids(await search(store, "bob", searchPattern("zebra", false), true))).toEqual(zebras);
    expect(ids(await search(store, "bob", searchPattern("z.bra", true)))).toEqual(zebras);
    expect(ids(await search(store, "bob", searchPattern("kelvin", false), true))).toEqual(["Kelvin01"]);
    expect(ids(await search(store, "bob", searchPattern("café", false), true))).toEqual(["Accent01"]);
    const fromCarol = [...markedIds("Big"), ...markedIds("Two")];
    expect(ids(await inbox(store, "bob", { all: true, archived: false, filter: { from: "carol" } }))).toEqual(fromCarol);
    expect(ids(await thread(store, "Two0001e"))).toEqual(fromCarol);
  });

  test("inbox over a long mailbox, read a chunk at a time: a copy moved more, megabytes later, supersedes the line it came from", async () => {
    const path = mailboxPath(root, "bob");
    const line = (record: Record<string, unknown>) => JSON.stringify(record) + "\n";
    const base = { from: "alice", to: "bob", read_flag: false, created_at: "2026-01-02T00:00:00.000Z" };
    // The copy moved more lands just past the first 4 MiB chunk: early in the next one, and far after the first.
    writeOldReadLines(path, "bob", 10_000);
    appendFileSync(path, line({ ...base, id: "Moved002", message: "was robert's", moves: 1, moved_from: "robert" }));
    appendFileSync(path, line({ ...base, id: "Stays001", message: "unread" }));
    writeOldReadLines(path, "bob", 12_700);
    appendFileSync(path, line({ ...base, id: "Moved002", message: "was robert's", moves: 2, moved_from: "robert" }));
    appendFileSync(path, line({ ...base, id: "Stays001", message: "a repeat" }));
    const unread = await inbox(new FileStore(root), "bob", { all: false, archived: false, filter: {} });
    expect(unread.map((message) => [message.id, message.message, message.moves])).toEqual([
      ["Stays001", "unread", undefined],
      ["Moved002", "was robert's", 2],
    ]);
  });

  test("archive: ids or read mail older than some hours; no ids is a usage error", async () => {
    const [old, fresh] = await deliver(mail("alice", "bob", "old"), { ...createMessage("alice", "bob", "fresh"), id: "Fresh001" });
    await take("bob");
    await take("bob");
    expect(await archive(new FileStore(root), "bob", { read: true, olderThanHours: 1 })).toEqual([old!.id]);
    expect(await archive(new FileStore(root), "bob", { ids: [fresh!.id] })).toEqual([fresh!.id]);
    await expectRejects(() => archive(new FileStore(root), "bob", { ids: [] }), "usage");
    await expectRejects(() => archive(new FileStore(join(root, "none")), "bob", { ids: ["Nope0000"] }), "not_found");
    expect(await archive(new FileStore(join(root, "none")), "bob", { read: true, olderThanHours: 0 })).toEqual([]);
  });
});
