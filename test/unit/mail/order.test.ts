/**
 * A hook delivers urgent mail first, and on each turn it passes every unread line after the oldest: lines that cannot
 * be urgent are passed without being scanned (urgentFirst names the text an urgent line holds). Whatever spelling
 * another program used, an urgent message is still found, and the first line with an id still wins.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { urgentFirst } from "../../../src/mail/order.ts";
import { takeOldestUnread } from "../../../src/store/file/mailbox.ts";
import { mailboxPath } from "../../../src/store/local/layout.ts";

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "agentmail-preference-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** Lines as another program wrote them, byte for byte. */
const write = (...lines: string[]) => appendFileSync(mailboxPath(root, "bob"), lines.map((line) => line + "\n").join(""));
const line = (id: string, body: string, extra = "") =>
  `{"id": "${id}", "from": "alice", "to": "bob", "message": "${body}", "read_flag": false${extra}, "created_at": "2026-01-01T00:00:00Z"}`;
const hookTake = async () => (await takeOldestUnread(root, "bob", () => {}, undefined, urgentFirst))?.id ?? null;

describe("urgentFirst", () => {
  test("finds an urgent message whose priority is written with \\u escapes, past lines Python escaped for é", async () => {
    write(
      line("Normal01", "caf\\u00e9 one"),
      line("Normal02", "caf\\u00e9 two"),
      line("Urgent01", "the build is red", ', "priority": "\\u0075rg\\u0065nt"'),
      line("Urgent02", "the build is red again", ', "priority": "URGENT"'),
    );
    expect(await hookTake()).toBe("Urgent01");
    expect(await hookTake()).toBe("Normal01");
  });

  test("finds an urgent message whose escape has upper-case hex digits", async () => {
    write(line("Normal01", "first"), line("Urgent01", "red", ', "priority": "urge\\u006Et"'));
    expect(await hookTake()).toBe("Urgent01");
  });

  test("a body that says urgent is not urgent: order is kept", async () => {
    write(line("Normal01", "first"), line("Normal02", "this is urgent, says the body"), line("Normal03", "third"));
    expect([await hookTake(), await hookTake(), await hookTake(), await hookTake()]).toEqual(["Normal01", "Normal02", "Normal03", null]);
  });

  test("an urgent line that repeats an earlier line's id is not delivered: the first line with an id wins", async () => {
    write(line("Normal01", "first"), line("Shared01", "the first with this id"), line("Shared01", "a copy", ', "priority": "urgent"'));
    expect(await hookTake()).toBe("Normal01");
    expect(await hookTake()).toBe("Shared01");
    expect(await hookTake()).toBeNull();
  });

  test("with no urgent spelling anywhere after the oldest, the oldest comes first", async () => {
    write(line("Normal01", "first"), line("Normal02", "second \\u00e9"));
    expect(await hookTake()).toBe("Normal01");
  });
});
