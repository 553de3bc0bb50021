/**
 * The first receive of a long mailbox with no cursor (store/file/cold-cursor.ts): the read lines at its start are passed in
 * a streaming scan that writes the cursor, and the receive goes on from there. What a user checks: the same message
 * is delivered as by a receive that read the mailbox whole, a repeated id after the history is still not delivered
 * again (whatever the shape of its first line), a line that is no message is still reported, and later receives go
 * on from the cursor.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { cursorPathOf } from "../../../../src/store/file/cursor.ts";
import { mailboxPath } from "../../../../src/store/local/layout.ts";
import { takeOldestUnread } from "../../../../src/store/file/mailbox.ts";
import { ensureRoot } from "../../../../src/store/paths.ts";
import { writeOldReadLines } from "../../../support/big-mailbox.ts";
import { tempRepo } from "../../../support/repo.ts";

let repo: ReturnType<typeof tempRepo>;
let root: string;
let path: string;
let skipped: string[];
const onSkip = (_path: string, where: string, reason: string) => void skipped.push(`${where}: ${reason}`);

beforeEach(() => {
  repo = tempRepo();
  root = ensureRoot(repo.mailDir);
  path = mailboxPath(root, "bob");
  skipped = [];
});
afterEach(() => repo.remove());

const line = (record: Record<string, unknown>) => JSON.stringify(record) + "\n";
const message = (id: string, read: boolean, extra: Record<string, unknown> = {}) =>
  line({ id, from: "alice", to: "bob", message: `message ${id}`, read_flag: read, created_at: "2026-01-01T00:00:00.000Z", ...extra });

/** A history of 8,000 read lines (1.5 MB: past the size a cold scan starts at), then `tail`. */
function longMailbox(head: string, tail: string): void {
  writeFileSync(path, head, { mode: 0o600 });
  writeOldReadLines(path, "bob", 8_000);
  appendFileSync(path, tail);
}

const take = () => takeOldestUnread(root, "bob", onSkip);

describe("the first receive of a long mailbox with no cursor", () => {
  test("delivers the oldest unread message, leaves a cursor, and the next receives go on from it", async () => {
    longMailbox("", message("Unread01", false) + message("Unread02", false));
    expect((await take())?.id).toBe("Unread01");
    expect(existsSync(cursorPathOf(path))).toBe(true);
    expect((await take())?.id).toBe("Unread02");
    expect(await take()).toBeNull();
    expect(skipped).toEqual([]);
  });

  test("an id of the history, in any shape, is not delivered again by a later unread line", async () => {
    const head =
      message("Plain001", true) +
      // Python's json.dumps: spaces after colons, keys sorted.
      '{"created_at": "2026-01-01T00:00:00.000Z", "from": "alice", "id": "Spaced01", "message": "m", "read_flag": true, "to": "bob"}\n' +
      message("Escaped1", true, { message: 'a "quoted" body\\nwith escapes' }) +
      '{"id":"\\u0045scaped2","from":"alice","to":"bob","message":"m","read_flag":true,"created_at":"2026-01-01T00:00:00.000Z"}\n' +
      message("Moved001", true, { moves: 1, moved_from: "robert" }) +
      message("WithFals", true, { needs_response: false });
    const repeats = ["Plain001", "Spaced01", "Escaped1", "Escaped2", "WithFals"].map((id) => message(id, false)).join("");
    // The moved copy's key is its id and its moves: an unread line of the same id moved as often is a repeat too.
    longMailbox(head, repeats + message("Moved001", false, { moves: 1, moved_from: "robert" }) + message("Fresh001", false));
    expect((await take())?.id).toBe("Fresh001");
    expect(skipped).toHaveLength(6);
    for (const reason of skipped) expect(reason).toContain("was already used by an earlier line");
  });

  test("a line that is no message, deep in the history, is still reported, and what follows it still delivered", async () => {
    writeOldReadLines(path, "bob", 8_000);
    appendFileSync(path, '{"id":"Broken01","read_flag":true\n' + message("Unread01", false));
    writeOldReadLines(path, "bob", 100);
    appendFileSync(path, message("Unread02", false));
    expect((await take())?.id).toBe("Unread01");
    expect(skipped).toEqual([]);
    expect((await take())?.id).toBe("Unread02");
    const garbage = '{"not":"a message"}\n';
    const another = `${repo.mailDir}/carol.jsonl`;
    writeOldReadLines(another, "carol", 8_000);
    appendFileSync(another, garbage + message("Unread03", false).replace('"to":"bob"', '"to":"carol"'));
    expect((await takeOldestUnread(root, "carol", onSkip))?.id).toBe("Unread03");
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toContain("it is not a message");
  });

  test("a mailbox of read lines only: nothing delivered, and the cursor ends at its last line", async () => {
    longMailbox("", "");
    expect(await take()).toBeNull();
    const header = readFileSync(cursorPathOf(path), "utf8").slice(0, 128).trim().split(" ");
    expect(Number(header[3])).toBe(readFileSync(path).length);
    appendFileSync(path, message("Later001", false));
    expect((await take())?.id).toBe("Later001");
  });

  test("a torn last line (a send killed mid-append) is left for its send, not passed", async () => {
    longMailbox("", '{"id":"Torn0001","from":"alice","to":"bob","message":"cut sh');
    expect(await take()).toBeNull();
    const header = readFileSync(cursorPathOf(path), "utf8").slice(0, 128).trim().split(" ");
    expect(Number(header[3])).toBe(readFileSync(path).lastIndexOf(10) + 1);
  });
});
