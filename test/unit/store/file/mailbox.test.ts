/**
 * countUnread judges most lines from their parse instead of a byte scan (surelyNoRepeatedKey). It must count exactly
 * what the scan of every line counted: checked here against that count, on mailboxes of random lines with keys
 * given twice (also nested, also escaped), escaped colons, read lines, repeated ids, garbage and a torn last line.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { idBytes, parseMessage, scanLine, surelyNoRepeatedKey, unreadMessagesIn } from "../../../../src/mail/message.ts";
import { PassedIds } from "../../../../src/store/file/id-index.ts";
import { countUnread } from "../../../../src/store/file/mailbox.ts";
import { mailboxPath } from "../../../../src/store/local/layout.ts";

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "agentmail-count-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const decoder = new TextDecoder();

/** The count as it was: a quick scan of every line, then every key checked and the line parsed. */
function scannedCount(bytes: Uint8Array): number {
  const passed = new PassedIds();
  let unread = 0;
  for (let start = 0; start < bytes.length; ) {
    const end = bytes.indexOf(0x0a, start);
    if (end === -1) break;
    const scan = scanLine(bytes, start, end);
    const id = idBytes(bytes, scan);
    const deliverable = () =>
      !scanLine(bytes, start, end, true).duplicateKey && parseMessage(decoder.decode(bytes.subarray(start, end))) !== null;
    if (scan.flag?.read === false && id !== null && !passed.has(id) && deliverable()) unread++;
    passed.add(id);
    start = end + 1;
  }
  return unread;
}

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const IDS = ["AAAA0001", "AAAA0002", "AAAA0003", "AAAA0004"];
const KEYS = ["id", "from", "to", "message", "read_flag", "created_at", "subject", "tags", "meta"];
const TEXTS = ["hi", "a:b", "caf\\u00e9", "x\\u003ay", "time 10:30", "", "\\\\", 'quote \\"x\\"', "u003a"];

function randomLine(next: () => number, garbage = 0.08): string {
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  if (next() < garbage) return pick(["garbage", "{", '{"id":"AAAA0001","read_flag":false', "[]", "null"]);
  const members: string[] = [
    `"id":"${pick(IDS)}"`,
    `"from":"${pick(TEXTS)}"`,
    `"message":"${pick(TEXTS)}"`,
    `"read_flag":${next() < 0.75 ? "false" : "true"}`,
  ];
  if (next() < 0.5) members.push(`"to":"bob"`);
  if (next() < 0.3) members.push(`"meta":{"${pick(KEYS)}":"${pick(TEXTS)}","${pick(KEYS)}":1}`);
  if (next() < 0.2) members.push(`"tags":["${pick(TEXTS)}","x:y"]`);
  if (next() < 0.15) members.push(`"${pick(KEYS)}":"${pick(TEXTS)}"`);
  if (next() < 0.05) members.push(`"\\u0069d":"${pick(IDS)}"`);
  if (next() < 0.05) members.push(`"fr\\u006fm":"x"`);
  if (next() < 0.1) members.splice(0, 1);
  for (let i = members.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [members[i], members[j]] = [members[j]!, members[i]!];
  }
  return `{${members.join(pick([",", ", "]))}}`;
}

describe("countUnread counts what a scan of every line counts", () => {
  test("on 400 mailboxes of random lines", () => {
    const next = random(11);
    let counted = 0;
    for (let box = 0; box < 400; box++) {
      const lines = Array.from({ length: 1 + Math.floor(next() * 30) }, () => randomLine(next));
      const text = lines.join("\n") + (next() < 0.2 ? "\n" + randomLine(next) : "\n");
      writeFileSync(mailboxPath(root, "bob"), text);
      const expected = scannedCount(new TextEncoder().encode(text));
      counted += expected;
      expect({ box, text, count: countUnread(root, "bob") }).toEqual({ box, text, count: expected });
    }
    expect(counted).toBeGreaterThan(400);
  });

  test("on 400 mailboxes of lines that all parse, some of them counted over the whole text at once", () => {
    const next = random(23);
    let wholeText = 0;
    for (let box = 0; box < 400; box++) {
      const lines = Array.from({ length: 1 + Math.floor(next() * 6) }, () => randomLine(next, 0));
      const text = lines.join("\n") + "\n";
      writeFileSync(mailboxPath(root, "bob"), text);
      if (unreadMessagesIn(lines.join("\n")) !== null) wholeText++;
      const expected = scannedCount(new TextEncoder().encode(text));
      expect({ box, text, count: countUnread(root, "bob") }).toEqual({ box, text, count: expected });
    }
    expect(wholeText).toBeGreaterThan(25);
  });
});

describe("unreadMessagesIn", () => {
  const line = (id: string, read: boolean, extra = "") => `{"id":"${id}","from":"a","message":"m:1","read_flag":${read}${extra}}`;
  test("counts unread messages, an id once, its first line deciding", () => {
    expect(unreadMessagesIn([line("a", false), line("b", true), line("a", false), line("b", false), line("c", false)].join("\n"))).toBe(2);
  });

  test("leaves it to the line-by-line count when any line is not a message, repeats a key or escapes a colon", () => {
    expect(unreadMessagesIn([line("a", false), "garbage"].join("\n"))).toBeNull();
    expect(unreadMessagesIn([line("a", false), '{"id":"b","from":"a"}'].join("\n"))).toBeNull();
    expect(unreadMessagesIn([line("a", false), line("b", false, ',"read_flag":true')].join("\n"))).toBeNull();
    expect(unreadMessagesIn([line("a", false, ',"meta":{"x":1,"x":2}')].join("\n"))).toBeNull();
    expect(unreadMessagesIn([line("a", false, ',"subject":"\\u003a"')].join("\n"))).toBeNull();
  });
});

describe("surelyNoRepeatedKey", () => {
  const sure = (line: string) => surelyNoRepeatedKey(line, JSON.parse(line));
  test("is sure of lines without a repeated key, colons in strings and keys or not", () => {
    expect(sure('{"id":"a","message":"10:30 a:b","k:ey":1,"meta":{"x":"y:z"}}')).toBe(true);
    expect(sure('{"id": "a", "message": "caf\\u00e9"}')).toBe(true);
  });

  test("is never sure of a line that repeats a key at any depth, or holds an escaped colon", () => {
    expect(sure('{"id":"a","id":"b"}')).toBe(false);
    expect(sure('{"id":"a","meta":{"x":1,"x":2}}')).toBe(false);
    expect(sure('{"id":"a","from":"x","from":"\\u003a"}')).toBe(false);
    expect(sure('{"id":"a","message":"\\u003A"}')).toBe(false);
  });
});

describe("copies agentmail name moved", () => {
  test("an unread line a later, more moved copy of it supersedes is not counted, by the whole-text count or line by line", () => {
    const line = (id: string, read: boolean, moves?: number) =>
      JSON.stringify({
        id,
        from: "a",
        to: "bob",
        message: "m",
        read_flag: read,
        created_at: "t",
        ...(moves ? { moves, moved_from: "x" } : {}),
      });
    // AAAA0001 unread at 0 moves, and a copy that came back with 2; AAAA0002 read, then back unread with 2.
    const lines = [line("AAAA0001", false), line("AAAA0002", true), line("AAAA0001", false, 2), line("AAAA0002", false, 2)];
    expect(unreadMessagesIn(lines.join("\n"))).toBe(2);
    writeFileSync(mailboxPath(root, "bob"), lines.join("\n") + "\n");
    expect(countUnread(root, "bob")).toBe(2);
    // A garbage line makes the count judge line by line: the same answer.
    writeFileSync(mailboxPath(root, "bob"), ["garbage", ...lines].join("\n") + "\n");
    expect(countUnread(root, "bob")).toBe(2);
  });
});
