/**
 * The sent index and its reader, in process: what `sent` lists, newest first and a batch at a time, against the
 * rules spelled out once more here the slow way (every file read whole), over mailboxes made to hold every kind of
 * line the index must tell apart; and the index's checks of itself.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { appendFileSync, closeSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { sentInBatches } from "../../../../src/actions/follow.ts";
import { parseMessage, type Message } from "../../../../src/mail/message.ts";
import { withoutMovedSources } from "../../../../src/mail/moves.ts";
import { byCreation, newestFirst } from "../../../../src/mail/order.ts";
import { archivePath } from "../../../../src/store/file/archive.ts";
import { FileStore } from "../../../../src/store/file/file-store.ts";
import { mailboxPath } from "../../../../src/store/local/layout.ts";
import { agentsWithMail } from "../../../../src/store/file/mail-view.ts";
import { ensureRoot } from "../../../../src/store/paths.ts";
import { recordsIn } from "../../../../src/store/file/records.ts";
import { idNumber } from "../../../../src/store/file/line-fields.ts";
import { sentFiles } from "../../../../src/store/file/sent-files.ts";
import { sentIndexPath } from "../../../../src/store/file/sent-index.ts";
import { closeAll, OpenFiles } from "../../../../src/store/file/sent-open-files.ts";
import { isoTime } from "../../../../src/store/file/sent-scan.ts";
import { newestFirstIn, sentBy, sentNewestFirst } from "../../../../src/store/file/sent-reader.ts";
import type { MailRecord } from "../../../../src/store/store.ts";
import { tempRepo } from "../../../support/repo.ts";

let repo: ReturnType<typeof tempRepo>;
let root: string;

beforeEach(() => {
  repo = tempRepo();
  root = ensureRoot(repo.mailDir);
});
afterEach(() => repo.remove());

/** A generator of numbers from a seed, so a failure can be run again. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 0x1_0000_0000;
  };
}

/**
 * What `sent` lists, the slow way: every file read whole, and of the sender's own lines, one record per id (the
 * line moved most, else the first, where the first was: records.ts's rule), live before archived, a message both
 * live and archived once, as live, and copies moved on left out; newest first. (Another sender's line with the same
 * id, a forgery, does not hide the sender's: the index never looks at other senders' lines.)
 */
function expected(sender: string): MailRecord[] {
  const own = (path: string) => {
    if (!existsSync(path)) return [];
    const lines = readFileSync(path, "utf8").split("\n").slice(0, -1);
    const mine = lines.filter((line) => parseMessage(line)?.from === sender);
    return recordsIn(new TextEncoder().encode(mine.map((line) => line + "\n").join(""))).map((record) => record.message);
  };
  const live: MailRecord[] = [];
  const archived: MailRecord[] = [];
  for (const agent of agentsWithMail(root)) {
    const liveIds = new Set<string>();
    for (const message of own(mailboxPath(root, agent))) {
      liveIds.add(message.id);
      live.push({ message, archived: false });
    }
    for (const message of own(archivePath(root, agent))) if (!liveIds.has(message.id)) archived.push({ message, archived: true });
  }
  return newestFirst(byCreation(withoutMovedSources([...live, ...archived])));
}

const shown = (records: MailRecord[]) => records.map(({ message, archived }) => [message.id, message.to, archived, message.message]);

function listed(sender: string, whole = true): MailRecord[] {
  const all: MailRecord[] = [];
  for (const batch of sentNewestFirst(root, sender, whole)) all.push(...batch);
  return all;
}

const T0 = Date.parse("2026-01-01T00:00:00.000Z");

function append(path: string, line: string): void {
  mkdirSync(dirname(path), { recursive: true });
  appendFileSync(path, line + "\n");
}

/**
 * Lines of every kind in bob's and carol's mailboxes and archives: alice's and others', equal and unordered times,
 * ids agentmail makes and others, escapes, spaces, non-ASCII text, lines that are no message, a message both live
 * and archived, and copies moved from one mailbox to the other.
 */
function writeMixedStore(seed: number, count: number): void {
  const next = random(seed);
  const pick = <T>(choices: readonly T[]): T => choices[Math.floor(next() * choices.length)]!;
  for (let i = 0; i < count; i++) {
    const to = pick(["bob", "carol"]);
    const archived = next() < 0.3;
    const path = archived ? archivePath(root, to) : mailboxPath(root, to);
    const id = next() < 0.9 ? `S${i.toString(36).padStart(7, "0")}` : `odd-id-${i}`;
    const from = next() < 0.8 ? "alice" : pick(["bob", "mallory", "alicia"]);
    const time = T0 + Math.floor(next() * count * 0.3) * 1000;
    // Times read from their digits and times left to Date.parse, which must agree on the order.
    const odd = [
      "not a time",
      "2026-01-31T00:00:00.000Z",
      "0050-01-01T00:00:00.000Z",
      "2026-02-30T00:00:00.000Z",
      "2026-01-01T24:00:00.000Z",
      "2026-01-01",
    ];
    const created = next() < 0.05 ? pick(odd) : new Date(time).toISOString();
    const body = pick(["plain", 'with "quotes"', "non-ASCII: é ü 日本", "line\nbreak", "{braces}", "x".repeat(1500)]);
    const record: Record<string, unknown> = { id, from, to, message: `${body} ${i}`, read_flag: next() < 0.5, created_at: created };
    if (next() < 0.05) record.subject = "from";
    // A nested object may hold a `from` of its own; a line may hold it there only, which is no message.
    if (next() < 0.03) record.meta = { from: "alice", id: "Nested01" };
    if (next() < 0.01) delete record.from;
    let line = JSON.stringify(record);
    if (next() < 0.05) line = line.replace('"from":', '"from" : ').replace('"id":', '"id" :');
    append(path, line);
    if (next() < 0.03) append(path, "{torn line");
    if (next() < 0.03) append(path, JSON.stringify({ ...record, message: "a later line with that id: no record" }));
    // A crash mid-archive leaves a message in both.
    if (archived && next() < 0.1) append(mailboxPath(root, to), JSON.stringify(record));
    // A rename moved the unread copy: it is listed once, where it went.
    if (!archived && next() < 0.05) {
      const other = to === "bob" ? "carol" : "bob";
      append(mailboxPath(root, other), JSON.stringify({ ...record, to: other, read_flag: false, moves: 1, moved_from: to }));
    }
  }
}

describe("sent, newest first, from the index", () => {
  test("lists what the rules list, in the order they give, cold, warm and after more mail", () => {
    writeMixedStore(7, 3000);
    expect(shown(listed("alice"))).toEqual(shown(expected("alice")));
    expect(existsSync(sentIndexPath(root, "alice"))).toBe(true);
    expect(shown(listed("alice"))).toEqual(shown(expected("alice")));
    writeMixedStore(8, 500);
    expect(shown(listed("alice"))).toEqual(shown(expected("alice")));
    expect(shown(listed("mallory"))).toEqual(shown(expected("mallory")));
    expect(listed("nobody")).toEqual([]);
  });

  for (const seed of [21, 99, 1234]) {
    test(`the same with other mail (seed ${seed})`, () => {
      writeMixedStore(seed, 1500);
      expect(shown(listed("alice"))).toEqual(shown(expected("alice")));
      writeMixedStore(seed + 1, 300);
      expect(shown(listed("alice"))).toEqual(shown(expected("alice")));
    });
  }

  test("sentBy gives the same records in the order of the files; bodies over 1,000 characters cut unless whole", () => {
    writeMixedStore(9, 400);
    expect(shown(newestFirst(byCreation(sentBy(root, "alice"))))).toEqual(shown(expected("alice")));
    const cut = listed("alice", false);
    expect(Math.max(...cut.map((record) => record.message.message.length))).toBe(1000);
    expect(Math.max(...listed("alice").map((record) => record.message.message.length))).toBeGreaterThan(1000);
  });

  test("a long history comes in batches, newest first", () => {
    const lines: string[] = [];
    for (let i = 0; i < 5000; i++) {
      const created = new Date(T0 + i * 1000).toISOString();
      lines.push(
        JSON.stringify({
          id: `B${String(i).padStart(7, "0")}`,
          from: "alice",
          to: "bob",
          message: `${i}`,
          read_flag: true,
          created_at: created,
        }),
      );
    }
    writeFileSync(mailboxPath(root, "bob"), lines.join("\n") + "\n");
    const batches = [...sentNewestFirst(root, "alice", true)];
    expect(batches.length).toBeGreaterThan(1);
    const order = batches.flat().map((record) => Number(record.message.message));
    expect(order).toEqual(Array.from({ length: 5000 }, (_, i) => 4999 - i));
  });

  test("a line that no longer holds what the index says is passed over, and the index made again next time", () => {
    const records = [1, 2, 3].map((n) => ({
      id: `Line000${n}`,
      from: "alice",
      to: "bob",
      message: "m",
      read_flag: false,
      created_at: new Date(T0 + n).toISOString(),
    }));
    const path = mailboxPath(root, "bob");
    writeFileSync(path, records.map((record) => JSON.stringify(record) + "\n").join(""));
    expect(listed("alice").map((record) => record.message.id)).toEqual(["Line0003", "Line0002", "Line0001"]);
    // Same inode, same length, the last line as it was: only the middle line is another message now.
    const text = readFileSync(path, "utf8").replace("Line0002", "Else0002");
    writeFileSync(path, text);
    expect(listed("alice").map((record) => record.message.id)).toEqual(["Line0003", "Line0001"]);
    expect(existsSync(sentIndexPath(root, "alice"))).toBe(false);
    expect(listed("alice").map((record) => record.message.id)).toEqual(["Line0003", "Else0002", "Line0001"]);
  });

  test("an index of another version, another sender or cut short is read as none", () => {
    writeMixedStore(11, 200);
    const want = shown(expected("alice"));
    listed("alice");
    const index = readFileSync(sentIndexPath(root, "alice"));
    writeFileSync(sentIndexPath(root, "alice"), index.subarray(0, index.length - 8));
    expect(shown(listed("alice"))).toEqual(want);
    writeFileSync(sentIndexPath(root, "alice"), Buffer.concat([index, Buffer.alloc(8)]));
    expect(shown(listed("alice"))).toEqual(want);
    writeFileSync(
      sentIndexPath(root, "alice"),
      readFileSync(sentIndexPath(root, "alice"), "latin1").replace('"version":4', '"version":3'),
      "latin1",
    );
    expect(shown(listed("alice"))).toEqual(want);
    writeFileSync(
      sentIndexPath(root, "alice"),
      readFileSync(sentIndexPath(root, "alice"), "latin1").replace('"sender":"alice"', '"sender":"alicx"'),
      "latin1",
    );
    expect(shown(listed("alice"))).toEqual(want);
    // An index of version 3 (JSON) is replaced.
    writeFileSync(join(root, ".sent", "alice.json"), "{}");
    writeMixedStore(12, 10);
    listed("alice");
    expect(existsSync(join(root, ".sent", "alice.json"))).toBe(false);
  });

  test("many mailboxes: each read through its own window; read times from the journal", () => {
    for (let i = 0; i < 40; i++) {
      const to = `agent${i}`;
      for (let j = 0; j < 20; j++) {
        const record = {
          id: `A${String(i * 100 + j).padStart(7, "0")}`,
          from: "alice",
          to,
          message: "y".repeat(20_000),
          read_flag: true,
          created_at: new Date(T0 + j * 40_000 + i).toISOString(),
        };
        append(mailboxPath(root, to), JSON.stringify(record));
      }
    }
    appendFileSync(`${mailboxPath(root, "agent3")}.reads`, "A0000305 2026-02-02T00:00:00.000Z\n");
    const all = listed("alice");
    expect(shown(all)).toEqual(shown(expected("alice")));
    expect(all.find((record) => record.message.id === "A0000305")?.message.read_at).toBe("2026-02-02T00:00:00.000Z");
  });

  test("more files than are kept open: the others are opened again as they are read, and one replaced meanwhile is passed over", () => {
    const write = (path: string, i: number) => {
      const lines: string[] = [];
      for (let j = 0; j < 12; j++) {
        const created = new Date(T0 + j * 1000 + i).toISOString();
        lines.push(
          JSON.stringify({
            id: `F${String(i * 100 + j).padStart(7, "0")}`,
            from: "alice",
            to: `m${i}`,
            message: `${j}`,
            read_flag: true,
            created_at: created,
          }),
        );
      }
      writeFileSync(path, lines.join("\n") + "\n");
    };
    for (let i = 0; i < 200; i++) write(mailboxPath(root, `m${i}`), i);
    const files = sentFiles(root, "alice");
    expect(files.filter((file) => file.fd === -1)).toHaveLength(200 - 128);
    // Every mailbox replaced (a new file renamed over it, as archive and cleanup do) once the index was read: those
    // kept open are read as scanned, the others are not the files scanned any more.
    for (let i = 0; i < 200; i++) {
      write(`${mailboxPath(root, `m${i}`)}.new`, i);
      renameSync(`${mailboxPath(root, `m${i}`)}.new`, mailboxPath(root, `m${i}`));
    }
    const all = [...newestFirstIn(root, "alice", files, true)].flat();
    expect(all).toHaveLength(128 * 12);
    expect(existsSync(sentIndexPath(root, "alice"))).toBe(false);
    expect(shown(listed("alice"))).toEqual(shown(expected("alice")));
    expect(listed("alice")).toHaveLength(2400);
  });

  test("files opened again: at most 64 at a time, the oldest closed first; a replaced one is not looked for twice", () => {
    for (let i = 0; i < 70; i++)
      append(
        mailboxPath(root, `m${i}`),
        JSON.stringify({
          id: `G${String(i).padStart(7, "0")}`,
          from: "alice",
          to: `m${i}`,
          message: "g",
          read_flag: true,
          created_at: new Date(T0).toISOString(),
        }),
      );
    const files = sentFiles(root, "alice");
    for (const file of files) {
      closeSync(file.fd);
      file.fd = -1;
    }
    const handles = new OpenFiles();
    for (const file of files) expect(handles.fd(file)).toBeGreaterThan(-1);
    expect(files.filter((file) => file.fd !== -1)).toHaveLength(64);
    expect(files[0]!.fd).toBe(-1);
    rmSync(files[0]!.path);
    expect(handles.fd(files[0]!)).toBe(-1);
    append(files[0]!.path, "{}");
    expect(handles.fd(files[0]!)).toBe(-1);
    closeAll(files);
    expect(files.every((file) => file.fd === -1)).toBe(true);
  });

  test("a time read from its digits is the time Date.parse reads, as byCreation orders by it", () => {
    const next = random(5);
    const texts = ["2024-02-29T23:59:59.999Z", "2100-03-01T00:00:00.000Z", "0099-12-31T00:00:00.000Z", "2026-13-01T00:00:00.000Z"];
    for (let i = 0; i < 5000; i++)
      texts.push(new Date(Date.UTC(100 + Math.floor(next() * 9900), 0, 1) + Math.floor(next() * 366 * 86_400_000)).toISOString());
    for (const text of texts) {
      const bytes = Buffer.from(`"${text}"`);
      const parsed = Date.parse(text);
      expect([text, isoTime(bytes, 1, bytes.length - 1)]).toEqual([text, Number.isFinite(parsed) ? parsed : 0]);
    }
  });

  test("ids agentmail makes are numbers exactly; any other, a negative hash", () => {
    expect(idNumber("00000000")).toBe(1);
    expect(idNumber("zzzzzzzz")).toBe(62 ** 8);
    expect(idNumber("odd-id-1")).toBeLessThan(0);
    expect(idNumber("odd-id-1")).toBe(idNumber("odd-id-1"));
  });
});

describe("sentInBatches", () => {
  test("each copy with its delivery state, filtered, newest first", async () => {
    const mail = (id: string, to: string, read: boolean, n: number): Message => ({
      id,
      from: "alice",
      to,
      message: id,
      read_flag: read,
      created_at: new Date(T0 + n).toISOString(),
    });
    append(mailboxPath(root, "bob"), JSON.stringify(mail("Read0001", "bob", true, 1)));
    append(mailboxPath(root, "bob"), JSON.stringify(mail("Unread01", "bob", false, 2)));
    append(mailboxPath(root, "carol"), JSON.stringify(mail("Bounce01", "carol", false, 3)));
    append(
      join(root, "carol.jsonl.delivery"),
      JSON.stringify({ id: "Bounce01", event: "bounced", at: new Date(T0 + 4).toISOString(), reason: "no such window" }),
    );
    const store = new FileStore(root);
    const states = async (filter: "all" | "unread" | "undelivered") => {
      const found: [string, string][] = [];
      for await (const batch of sentInBatches(store, "alice", filter))
        for (const copy of batch) found.push([copy.id, copy.delivery!.state]);
      return found;
    };
    expect(await states("all")).toEqual([
      ["Bounce01", "bounced"],
      ["Unread01", "stored"],
      ["Read0001", "read"],
    ]);
    expect(await states("unread")).toEqual([["Unread01", "stored"]]);
    expect(await states("undelivered")).toEqual([["Bounce01", "bounced"]]);
  });
});
