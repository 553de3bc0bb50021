import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, mkdirSync, readFileSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { AgentmailError } from "../../src/core/errors.ts";
import { createMessage, serializeMessage } from "../../src/core/message.ts";
import { HOSTNAME, procHostname } from "../../src/store/host.ts";
import { withLock } from "../../src/store/lock.ts";
import { appendMessage, lockPathOf, mailboxPath, restoreUnread, takeOldestUnread } from "../../src/store/mailbox.ts";
import { ensureRoot, findRepository, mailRoot } from "../../src/store/paths.ts";
import { tempRepo } from "../support/repo.ts";

let repo: ReturnType<typeof tempRepo>;
let root: string;
const skipped: string[] = [];
const onSkip = (_path: string, offset: number, reason: string) => skipped.push(`${offset}:${reason}`);

beforeEach(() => {
  repo = tempRepo();
  root = ensureRoot(repo.mailDir);
  skipped.length = 0;
});
afterEach(() => repo.remove());

function git(args: string[], cwd: string): void {
  const result = Bun.spawnSync(["git", "-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd });
  if (result.exitCode !== 0) throw new Error(result.stderr.toString());
}

describe("paths", () => {
  test("the main checkout, a subdirectory and a linked worktree share one store", () => {
    git(["commit", "-q", "--allow-empty", "-m", "init"], repo.dir);
    const worktree = `${repo.dir}-wt`;
    git(["worktree", "add", "-q", worktree], repo.dir);
    mkdirSync(join(worktree, "deep", "er"), { recursive: true });
    const expected = join(repo.dir, ".git", "mail");
    expect(mailRoot(repo.dir, {})).toBe(expected);
    expect(mailRoot(join(worktree, "deep", "er"), {})).toBe(expected);
    expect(findRepository(worktree, {})?.workTree).toBe(worktree);
    Bun.spawnSync(["rm", "-rf", worktree]);
  });

  test("AGENTMAIL_DIR, GIT_DIR and GIT_COMMON_DIR are honoured", () => {
    expect(mailRoot("/", { AGENTMAIL_DIR: join(repo.dir, "x") })).toBe(join(repo.dir, "x"));
    expect(mailRoot("/", { GIT_DIR: join(repo.dir, ".git") })).toBe(join(repo.dir, ".git", "mail"));
    // Both must be real git dirs (test/unit/store-location.test.ts has the refusals).
    expect(mailRoot("/", { GIT_DIR: join(repo.dir, ".git"), GIT_COMMON_DIR: join(repo.dir, ".git") })).toBe(join(repo.dir, ".git", "mail"));
  });

  test("outside a repository the error names AGENTMAIL_DIR", () => {
    expect(() => mailRoot("/", {})).toThrow(/AGENTMAIL_DIR/);
  });

  test("the root is created 0700 and must be a directory", () => {
    expect(statSync(root).mode & 0o777).toBe(0o700);
    const file = join(repo.dir, "plain");
    writeFileSync(file, "");
    expect(() => ensureRoot(file)).toThrow(AgentmailError);
  });
});

describe("mailbox", () => {
  test("append then take delivers oldest first, exactly once, and marks read in place", async () => {
    const first = createMessage("alice", "bob", "one");
    const second = createMessage("carol", "bob", "two");
    await appendMessage(root, first);
    await appendMessage(root, second);
    const path = mailboxPath(root, "bob");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const sizeBefore = statSync(path).size;
    expect((await takeOldestUnread(root, "bob", onSkip))?.id).toBe(first.id);
    expect(statSync(path).size).toBe(sizeBefore);
    expect((await takeOldestUnread(root, "bob", onSkip))?.id).toBe(second.id);
    expect(await takeOldestUnread(root, "bob", onSkip)).toBeNull();
    const lines = readFileSync(path, "utf8").trim().split("\n").map((line) => JSON.parse(line));
    expect(lines.map((line) => line.read_flag)).toEqual([true, true]);
  });

  test("no mailbox means no mail", async () => {
    expect(await takeOldestUnread(root, "nobody", onSkip)).toBeNull();
  });

  test("a torn last line is terminated before the next append, and readers skip it", async () => {
    const path = mailboxPath(root, "bob");
    writeFileSync(path, '{"id":"torn', { mode: 0o600 });
    const message = createMessage("alice", "bob", "after the tear");
    await appendMessage(root, message);
    expect(readFileSync(path, "utf8")).toBe(`{"id":"torn\n${serializeMessage(message)}`);
    expect((await takeOldestUnread(root, "bob", onSkip))?.id).toBe(message.id);
    expect(skipped).toEqual(["0:it is not a message (unparseable, or missing id, from, message or read_flag)"]);
  });

  test("malformed lines are skipped with a report and never deleted", async () => {
    const path = mailboxPath(root, "bob");
    const good = createMessage("alice", "bob", "good");
    writeFileSync(path, `garbage\n{"id":"x","from":"a","message":"no flag"}\n${serializeMessage(good)}`, { mode: 0o600 });
    expect((await takeOldestUnread(root, "bob", onSkip))?.id).toBe(good.id);
    expect(skipped.map((entry) => entry.split(":")[0])).toEqual(["0", "8"]);
    expect(readFileSync(path, "utf8")).toStartWith("garbage\n");
  });

  test("the cursor skips the read history and survives being wrong", async () => {
    for (let i = 0; i < 5; i++) await appendMessage(root, createMessage("a", "bob", `m${i}`));
    for (let i = 0; i < 3; i++) await takeOldestUnread(root, "bob", onSkip);
    const cursorPath = `${mailboxPath(root, "bob")}.cursor`;
    const [ino, offset] = readFileSync(cursorPath, "utf8").trim().split(" ").map(Number);
    expect(ino).toBe(statSync(mailboxPath(root, "bob")).ino);
    expect(offset).toBeGreaterThan(0);
    writeFileSync(cursorPath, `${ino} 3\n`);
    expect((await takeOldestUnread(root, "bob", onSkip))?.message).toBe("m3");
    writeFileSync(cursorPath, "garbage");
    expect((await takeOldestUnread(root, "bob", onSkip))?.message).toBe("m4");
    writeFileSync(cursorPath, `${ino! + 1} 0\n`);
    expect(await takeOldestUnread(root, "bob", onSkip)).toBeNull();
  });

  test("an empty receive moves the cursor past read history, so the next one does not rescan it", async () => {
    const path = mailboxPath(root, "bob");
    const read = { ...createMessage("a", "bob", "old"), read_flag: true };
    writeFileSync(path, serializeMessage(read).repeat(3), { mode: 0o600 });
    expect(await takeOldestUnread(root, "bob", onSkip)).toBeNull();
    const cursor = readFileSync(`${path}.cursor`, "utf8").trim().split(" ");
    expect(cursor.slice(2)).toEqual([String(statSync(path).size), read.id]);
    const before = statSync(`${path}.cursor`).mtimeMs;
    await Bun.sleep(5);
    expect(await takeOldestUnread(root, "bob", onSkip)).toBeNull();
    expect(statSync(`${path}.cursor`).mtimeMs).toBe(before);
  });

  test("restoreUnread gives a message back", async () => {
    const message = createMessage("a", "bob", "again");
    await appendMessage(root, message);
    await appendMessage(root, createMessage("a", "bob", "later"));
    await takeOldestUnread(root, "bob", onSkip);
    await restoreUnread(root, "bob", message.id);
    expect((await takeOldestUnread(root, "bob", onSkip))?.id).toBe(message.id);
  });

  test("symlinks, FIFOs and directories at a mailbox path are refused, never followed", async () => {
    const outside = join(repo.dir, "outside.txt");
    writeFileSync(outside, "keep");
    symlinkSync(outside, mailboxPath(root, "link"));
    await expect(appendMessage(root, createMessage("a", "link", "x"))).rejects.toThrow(/symlink/);
    expect(readFileSync(outside, "utf8")).toBe("keep");
    mkfifoSync(mailboxPath(root, "fifo"));
    await expect(takeOldestUnread(root, "fifo", onSkip)).rejects.toThrow(/FIFO/);
    await expect(appendMessage(root, createMessage("a", "fifo", "x"))).rejects.toThrow(/FIFO/);
    mkdirSync(mailboxPath(root, "dir"));
    await expect(appendMessage(root, createMessage("a", "dir", "x"))).rejects.toThrow(/directory/);
  });
});

function mkfifoSync(path: string): void {
  const result = Bun.spawnSync(["mkfifo", path]);
  if (result.exitCode !== 0) throw new Error("mkfifo failed");
}

describe("host name", () => {
  test("is read from /proc where there is one, and agrees with node:os", () => {
    expect(HOSTNAME).toBe(hostname());
    expect(procHostname("/nonexistent/hostname")).toBeNull();
  });
});

describe("lock", () => {
  const lockFile = () => join(root, "test.lock");

  test("serializes critical sections", async () => {
    let inside = 0;
    let overlap = false;
    await Promise.all(
      Array.from({ length: 20 }, () =>
        withLock(lockFile(), async () => {
          inside++;
          if (inside > 1) overlap = true;
          await Bun.sleep(1);
          inside--;
        }),
      ),
    );
    expect(overlap).toBe(false);
    expect(existsSync(lockFile())).toBe(false);
  });

  test("a lock of a dead pid is broken", async () => {
    const dead = Bun.spawnSync(["true"]).pid;
    writeFileSync(lockFile(), JSON.stringify({ pid: dead, host: hostname(), start: null, token: "t", time: "" }));
    expect(await withLock(lockFile(), () => "ran")).toBe("ran");
  });

  test("an empty lock is broken once it is older than 2 s", async () => {
    writeFileSync(lockFile(), "");
    const old = new Date(Date.now() - 5_000);
    utimesSync(lockFile(), old, old);
    expect(await withLock(lockFile(), () => "ran")).toBe("ran");
  });

  test("any lock older than 30 s is broken", async () => {
    writeFileSync(lockFile(), JSON.stringify({ pid: process.pid, host: hostname(), start: null, token: "t", time: "" }));
    const old = new Date(Date.now() - 60_000);
    utimesSync(lockFile(), old, old);
    expect(await withLock(lockFile(), () => "ran")).toBe("ran");
  });

  test("a live holder makes a waiter give up with the holder's pid", async () => {
    writeFileSync(lockFile(), JSON.stringify({ pid: process.pid, host: hostname(), start: null, token: "t", time: "" }));
    await expect(withLock(lockFile(), () => "ran", { timeoutMs: 50 })).rejects.toThrow(new RegExp(`pid ${process.pid}`));
  });

  test("a holder on another host is trusted until the lock is old", async () => {
    writeFileSync(lockFile(), JSON.stringify({ pid: 1, host: "elsewhere", start: null, token: "t", time: "" }));
    await expect(withLock(lockFile(), () => "ran", { timeoutMs: 30 })).rejects.toThrow(/elsewhere/);
  });

  test("a leftover .break file from a killed breaker does not block forever", async () => {
    const dead = Bun.spawnSync(["true"]).pid;
    writeFileSync(lockFile(), JSON.stringify({ pid: dead, host: hostname(), start: null, token: "t", time: "" }));
    writeFileSync(`${lockFile()}.break`, "");
    const old = new Date(Date.now() - 10_000);
    utimesSync(`${lockFile()}.break`, old, old);
    expect(await withLock(lockFile(), () => "ran")).toBe("ran");
  });

  test("a symlink at the lock path is refused", async () => {
    symlinkSync(join(repo.dir, "target"), lockFile());
    await expect(withLock(lockFile(), () => "ran")).rejects.toThrow(/symlink/);
  });

  test("the mailbox lock lives beside the mailbox", () => {
    expect(lockPathOf(mailboxPath(root, "bob"))).toBe(join(root, "bob.jsonl.lock"));
    appendFileSync(join(root, "x"), "");
  });
});
