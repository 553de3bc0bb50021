/**
 * Finding one message by id (`read`, `ack`, a wait's looks) reads the mailbox a chunk at a time. What a user checks:
 * a message far past the first chunk is found, the copy `agentmail name` moved most wins over an older line of the
 * same id, a live message wins over its archived copy, and an id in neither is null.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { appendFileSync, mkdirSync } from "node:fs";
import { archivePath } from "../../../../src/store/file/archive.ts";
import { mailboxPath } from "../../../../src/store/local/layout.ts";
import { findMail } from "../../../../src/store/file/mail-view.ts";
import { ensureRoot } from "../../../../src/store/paths.ts";
import { writeOldReadLines } from "../../../support/big-mailbox.ts";
import { tempRepo } from "../../../support/repo.ts";

let repo: ReturnType<typeof tempRepo>;
let root: string;

const line = (id: string, body: string, extra: Record<string, unknown> = {}) =>
  `${JSON.stringify({ id, from: "alice", to: "bob", message: body, read_flag: false, created_at: "2026-01-01T00:00:00.000Z", ...extra })}\n`;

beforeEach(() => {
  repo = tempRepo();
  root = ensureRoot(repo.mailDir);
});
afterEach(() => repo.remove());

test("a message past the first 4 MiB chunk is found, and the copy moved most wins over its older line", () => {
  const path = mailboxPath(root, "bob");
  appendFileSync(path, line("Far00001", "first spelling"));
  writeOldReadLines(path, "bob", 60_000);
  appendFileSync(path, line("Far00001", "moved back", { moves: 2 }) + line("Far00002", "the last one"));
  expect(findMail(root, "bob", "Far00001")?.message.message).toBe("moved back");
  expect(findMail(root, "bob", "Far00002")).toMatchObject({ archived: false, message: { message: "the last one" } });
  expect(findMail(root, "bob", "Nowhere1")).toBeNull();
});

test("a live message wins over its archived copy; an archived-only one is found as archived", () => {
  appendFileSync(mailboxPath(root, "bob"), line("Both0001", "live"));
  mkdirSync(archivePath(root, "bob").replace(/\/[^/]+$/, ""), { recursive: true });
  appendFileSync(archivePath(root, "bob"), line("Both0001", "archived") + line("Arch0001", "only archived"));
  expect(findMail(root, "bob", "Both0001")).toMatchObject({ archived: false, message: { message: "live" } });
  expect(findMail(root, "bob", "Arch0001")).toMatchObject({ archived: true, message: { message: "only archived" } });
});
