/**
 * The cursor's header is parsed without a regular expression (its first use costs a receive start-up time): it must
 * accept exactly the headers agentmail writes and refuse every other text, so a damaged cursor is never used.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMessage } from "../../../../src/mail/message.ts";
import { cursorPathOf } from "../../../../src/store/file/cursor.ts";
import { appendMessage, cursorProblemOf, takeOldestUnread } from "../../../../src/store/file/mailbox.ts";
import { mailboxPath } from "../../../../src/store/local/layout.ts";

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "agentmail-cursor-header-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

async function cursorWritten(): Promise<{ path: string; header: string; rest: Buffer }> {
  await appendMessage(root, createMessage("alice", "bob", "one"));
  await appendMessage(root, createMessage("alice", "bob", "two"));
  await takeOldestUnread(root, "bob", () => {});
  const path = cursorPathOf(mailboxPath(root, "bob"));
  const bytes = readFileSync(path);
  return { path, header: bytes.subarray(0, 128).toString("latin1"), rest: bytes.subarray(128) };
}

describe("the cursor header", () => {
  test("the header receive writes is used, and the next receive starts from it", async () => {
    const { header } = await cursorWritten();
    expect(header).toMatch(/^c3 \d+ \d+ \d+ [0-9a-f]{8} \d+ \d+ \d+ *\n$/);
    expect(cursorProblemOf(root, "bob")).toBeNull();
    expect((await takeOldestUnread(root, "bob", () => {}))?.message).toBe("two");
  });

  test("any other header is not a cursor agentmail wrote", async () => {
    const { path, header, rest } = await cursorWritten();
    const fields = header.trimEnd().split(" ");
    const variants = [
      ["c4", ...fields.slice(1)],
      fields.slice(0, 7),
      [...fields, "9"],
      fields.map((field, at) => (at === 4 ? "ABCDEF12" : field)),
      fields.map((field, at) => (at === 4 ? field.slice(1) : field)),
      fields.map((field, at) => (at === 2 ? `-${field}` : field)),
      fields.map((field, at) => (at === 3 ? `${field}x` : field)),
      fields.map((field, at) => (at === 5 ? "" : field)),
    ];
    for (const variant of variants) {
      writeFileSync(path, Buffer.concat([Buffer.from(variant.join(" ").padEnd(127) + "\n", "latin1"), rest]));
      expect({ variant, problem: cursorProblemOf(root, "bob") }).toEqual({ variant, problem: "it is not a cursor agentmail wrote" });
    }
    writeFileSync(path, Buffer.concat([Buffer.from(header.slice(0, 127), "latin1"), Buffer.from(" "), rest]));
    expect(cursorProblemOf(root, "bob")).toBe("it is not a cursor agentmail wrote");
  });
});
