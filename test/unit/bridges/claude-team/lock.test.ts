/**
 * Claude Code's lock on a team file and the whole-file replace under it (src/bridges/claude-team/lock.ts), in
 * process on a scratch team directory: the stale rule both ways (a lock over 10 s old, or stamped more than 10 s
 * ahead, is taken; one a live holder stamped is waited for), a symlinked directory never written through, a lock
 * another writer broke while held, a replace that fails leaving nothing beside the file, and the fsyncs after the
 * lock that never follow a planted link. Waiting, refusing and a live Claude-style writer are files.test.ts.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmdirSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isStaleLock, lockDirOf, makeDurable, replaceTeamFile, STALE_MS, withTeamLock } from "../../../../src/bridges/claude-team/lock.ts";
import { rejectionOf } from "../../../support/rejection.ts";

let scratch: string;
let inboxes: string;
let inbox: string;
beforeEach(() => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-team-lock-")));
  inboxes = join(scratch, "team", "inboxes");
  mkdirSync(inboxes, { recursive: true });
  inbox = join(inboxes, "codex.json");
  writeFileSync(inbox, "[]");
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

/** A lock directory on `file` as another writer left it, its mtime `offsetMs` from now. */
function lockStamped(file: string, offsetMs: number): void {
  mkdirSync(lockDirOf(file));
  const at = new Date(Date.now() + offsetMs);
  utimesSync(lockDirOf(file), at, at);
}

describe("the stale rule", () => {
  test("a lock over 10 s old, or stamped more than 10 s ahead, is stale; one within 10 s either way is held", () => {
    const now = Date.parse("2026-05-01T10:00:00.000Z");
    expect(STALE_MS).toBe(10_000);
    expect([isStaleLock(now - 10_001, now), isStaleLock(now + 10_001, now), isStaleLock(now - 3_600_000, now)]).toEqual([true, true, true]);
    expect([isStaleLock(now - 10_000, now), isStaleLock(now + 10_000, now), isStaleLock(now + 1_000, now), isStaleLock(now, now)]).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });

  test("a lock stamped an hour ahead is taken at once, not waited for until then", async () => {
    lockStamped(inbox, 3_600_000);
    expect(await withTeamLock(inbox, () => "written", [])).toBe("written");
    expect(existsSync(lockDirOf(inbox))).toBe(false);
  });

  test("a lock a live holder stamped a second ahead (as Claude and agentmail do) is held: refused as locked", async () => {
    lockStamped(inbox, 1_000);
    const error = await rejectionOf(withTeamLock(inbox, () => "written", [5]));
    expect(error.code).toBe("locked");
    expect(existsSync(lockDirOf(inbox))).toBe(true);
  });

  test("the lock agentmail takes is stamped just past the next second, as Claude stamps its own: fresh to Claude's check", async () => {
    const before = Date.now();
    const stamped = await withTeamLock(inbox, () => statSync(lockDirOf(inbox)).mtimeMs);
    expect(stamped % 1000).toBe(5);
    expect(stamped).toBeGreaterThan(before);
    expect(isStaleLock(stamped, Date.now())).toBe(false);
  });
});

describe("the team's directories", () => {
  test("an inboxes/ that is a symlink is never written through: refused as unsafe, nothing made where it points", async () => {
    const elsewhere = join(scratch, "elsewhere");
    mkdirSync(elsewhere);
    rmSync(inboxes, { recursive: true });
    symlinkSync(elsewhere, inboxes);
    let ran = false;
    const error = await rejectionOf(
      withTeamLock(inbox, () => {
        ran = true;
      }),
    );
    expect(error.code).toBe("unsafe_path");
    expect(error.message).toBe(
      `${inboxes} is a symlink; agentmail never writes through one in a team directory (Claude Code makes it a plain directory): ` +
        "nothing was written; replace the link with a directory, or remove the bridge",
    );
    expect(ran).toBe(false);
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  test("a lock another writer broke while agentmail held it: the work's result stands, and nothing is left", async () => {
    const result = await withTeamLock(inbox, () => {
      // Another writer judged it stale and removed it (a holder stopped for longer than Claude's rule).
      rmdirSync(lockDirOf(inbox));
      return "done";
    });
    expect(result).toBe("done");
    expect(existsSync(lockDirOf(inbox))).toBe(false);
  });
});

describe("replacing a team file", () => {
  test("the new text replaces the file whole, and no temp file stays beside it", () => {
    replaceTeamFile(inbox, '[{"from":"alice"}]');
    expect(readFileSync(inbox, "utf8")).toBe('[{"from":"alice"}]');
    expect(readdirSync(inboxes)).toEqual(["codex.json"]);
  });

  test("a replace that cannot be renamed into place (a directory where the file was) fails, leaving no temp file", () => {
    rmSync(inbox);
    mkdirSync(join(inbox, "in-the-way"), { recursive: true });
    expect(() => replaceTeamFile(inbox, "[]")).toThrow();
    expect(readdirSync(inboxes)).toEqual(["codex.json"]);
    expect(readdirSync(inbox)).toEqual(["in-the-way"]);
  });

  test("making it durable after the lock: a file gone since (the team ended) is nothing to do; a planted link is refused, not followed", () => {
    makeDurable(inbox);
    rmSync(inbox);
    expect(() => makeDurable(inbox)).not.toThrow();
    writeFileSync(join(scratch, "target"), "[]");
    symlinkSync(join(scratch, "target"), inbox);
    expect(() => makeDurable(inbox)).toThrow(expect.objectContaining({ code: "ELOOP" }));
  });
});
