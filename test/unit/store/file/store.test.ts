import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import {
  appendFileSync,
  closeSync,
  lutimesSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  openSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { AgentmailError } from "../../../../src/mail/errors.ts";
import { createMessage, idText, scanLine, serializeMessage } from "../../../../src/mail/message.ts";
import { HOSTNAME, procHostname } from "../../../../src/store/durable/process-identity.ts";
import { tableAdd } from "../../../../src/store/file/id-index.ts";
import { IdMap } from "../../../../src/store/file/id-map.ts";
import { lockReport, removeStaleLock, withLock } from "../../../../src/store/durable/lock.ts";
import { archiveMessages, archivePath } from "../../../../src/store/file/archive.ts";
import { appendMessage, countUnread, takeOldestUnread } from "../../../../src/store/file/mailbox.ts";
import { lockPathOf, mailboxPath } from "../../../../src/store/local/layout.ts";
import { ensureRoot, findRepository, mailRoot } from "../../../../src/store/paths.ts";
import { isPresent } from "../../../support/e2e.ts";
import { smallDiskForEachTest } from "../../../support/full-disk.ts";
import { tempRepo } from "../../../support/repo.ts";

let repo: ReturnType<typeof tempRepo>;
let root: string;
const skipped: string[] = [];
/** The store's SkipReporter (store.ts): where a file store's skipped line is is "byte N"; recorded as "N:reason". */
const onSkip = (_path: string, where: string, reason: string) => skipped.push(`${where.replace(/^byte /, "")}:${reason}`);

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
    // Both must be real git dirs (test/unit/store/location.test.ts has the refusals).
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
  test("appends one process makes to one mailbox at once are written together, in the order made, each once", async () => {
    const messages = Array.from({ length: 60 }, (_, n) => createMessage("alice", n % 3 === 0 ? "carol" : "bob", `burst ${n}`));
    await Promise.all(messages.map((message) => appendMessage(root, message)));
    const ids = (name: string) =>
      readFileSync(mailboxPath(root, name), "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line).id);
    expect(ids("bob")).toEqual(messages.filter((message) => message.to === "bob").map((message) => message.id));
    expect(ids("carol")).toEqual(messages.filter((message) => message.to === "carol").map((message) => message.id));
  });

  test("after an append that could not get the lock, the next one is not left waiting", async () => {
    const { currentProcess } = await import("../../../../src/store/durable/process-identity.ts");
    const me = currentProcess();
    const lock = lockPathOf(mailboxPath(root, "bob"));
    const probe = join(root, "probe.lock");
    const tag = await withLock(probe, () => readlinkSync(probe).split(":")[3]!);
    symlinkSync(`am1:${me.pid}:${me.start}:${tag}:aaaaaaaaaaaa`, lock);
    const saved = process.env.AGENTMAIL_LOCK_TIMEOUT;
    process.env.AGENTMAIL_LOCK_TIMEOUT = "0.05";
    try {
      await expect(appendMessage(root, createMessage("alice", "bob", "refused"))).rejects.toThrow(/locked|pid/);
    } finally {
      if (saved === undefined) delete process.env.AGENTMAIL_LOCK_TIMEOUT;
      else process.env.AGENTMAIL_LOCK_TIMEOUT = saved;
    }
    rmSync(lock);
    const next = createMessage("alice", "bob", "after");
    await appendMessage(root, next);
    expect(JSON.parse(readFileSync(mailboxPath(root, "bob"), "utf8")).id).toBe(next.id);
  });

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
    const lines = readFileSync(path, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
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
    const header = readFileSync(cursorPath, "utf8").split("\n")[0]!.trim().split(" ");
    expect(header[0]).toBe("c3");
    expect(Number(header[1])).toBe(statSync(mailboxPath(root, "bob")).ino);
    expect(Number(header[3])).toBeGreaterThan(0);
    writeFileSync(cursorPath, `${header[1]} 3\n`);
    expect((await takeOldestUnread(root, "bob", onSkip))?.message).toBe("m3");
    writeFileSync(cursorPath, "garbage");
    expect((await takeOldestUnread(root, "bob", onSkip))?.message).toBe("m4");
    writeFileSync(cursorPath, ["c3", Number(header[1]) + 1, ...header.slice(2)].join(" ").padEnd(127) + "\n");
    expect(await takeOldestUnread(root, "bob", onSkip)).toBeNull();
  });

  test("a cursor whose last line changed under it is not trusted: the mailbox is scanned again", async () => {
    const path = mailboxPath(root, "bob");
    const first = createMessage("a", "bob", "one");
    await appendMessage(root, first);
    await appendMessage(root, createMessage("a", "bob", "two"));
    expect((await takeOldestUnread(root, "bob", onSkip))?.id).toBe(first.id);
    // Marked unread again by hand: the line the cursor stands after is not the same bytes any more.
    writeFileSync(path, readFileSync(path, "utf8").replace('"read_flag":true ', '"read_flag":false'));
    expect((await takeOldestUnread(root, "bob", onSkip))?.id).toBe(first.id);
  });

  test("an empty receive moves the cursor past read history, so the next one does not rescan it", async () => {
    const path = mailboxPath(root, "bob");
    const read = (body: string) => ({ ...createMessage("a", "bob", body), read_flag: true });
    writeFileSync(path, serializeMessage(read("old 1")) + serializeMessage(read("old 2")) + serializeMessage(read("old 3")), {
      mode: 0o600,
    });
    expect(await takeOldestUnread(root, "bob", onSkip)).toBeNull();
    const header = readFileSync(`${path}.cursor`, "utf8").split("\n")[0]!.trim().split(" ");
    expect(Number(header[3])).toBe(statSync(path).size);
    const before = statSync(`${path}.cursor`).mtimeMs;
    await Bun.sleep(5);
    expect(await takeOldestUnread(root, "bob", onSkip)).toBeNull();
    expect(statSync(`${path}.cursor`).mtimeMs).toBe(before);
  });

  test("the message is marked read only after show has returned", async () => {
    const message = createMessage("a", "bob", "shown first");
    await appendMessage(root, message);
    const seenDuringShow: boolean[] = [];
    const taken = await takeOldestUnread(root, "bob", onSkip, async () => {
      await Bun.sleep(1);
      seenDuringShow.push(JSON.parse(readFileSync(mailboxPath(root, "bob"), "utf8")).read_flag);
    });
    expect(taken?.id).toBe(message.id);
    expect(seenDuringShow).toEqual([false]);
    expect(JSON.parse(readFileSync(mailboxPath(root, "bob"), "utf8")).read_flag).toBe(true);
  });

  test("a show that fails leaves the message unread, and the next take delivers it", async () => {
    const message = createMessage("a", "bob", "again");
    await appendMessage(root, message);
    await appendMessage(root, createMessage("a", "bob", "later"));
    const failing = () => {
      throw new Error("stdout went away");
    };
    await expect(takeOldestUnread(root, "bob", onSkip, failing)).rejects.toThrow(/stdout went away/);
    expect((await takeOldestUnread(root, "bob", onSkip))?.id).toBe(message.id);
  });

  test("concurrent receivers whose output takes a while never get one message twice", async () => {
    const sent: string[] = [];
    for (let i = 0; i < 12; i++) {
      const message = createMessage("a", "bob", `m${i}`);
      sent.push(message.id);
      await appendMessage(root, message);
    }
    const slowShow = () => Bun.sleep(Math.random() * 3);
    const got: string[] = [];
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        for (
          let message = await takeOldestUnread(root, "bob", onSkip, slowShow);
          message;
          message = await takeOldestUnread(root, "bob", onSkip, slowShow)
        ) {
          got.push(message.id);
        }
      }),
    );
    expect(got.sort()).toEqual([...sent].sort());
  });

  test("a receive blocked in its output holds off other receivers, never senders", async () => {
    await appendMessage(root, createMessage("a", "bob", "blocked"));
    let unblock = () => {};
    const blocked = new Promise<void>((done) => (unblock = done));
    let showing = () => {};
    const isShowing = new Promise<void>((done) => (showing = done));
    const first = takeOldestUnread(root, "bob", onSkip, () => {
      showing();
      return blocked;
    });
    await isShowing;
    await appendMessage(root, createMessage("a", "bob", "sent meanwhile"));
    process.env.AGENTMAIL_LOCK_TIMEOUT = "0.1";
    try {
      await expect(takeOldestUnread(root, "bob", onSkip)).rejects.toThrow(new RegExp(`pid ${process.pid}`));
    } finally {
      delete process.env.AGENTMAIL_LOCK_TIMEOUT;
    }
    unblock();
    expect((await first)?.message).toBe("blocked");
    expect((await takeOldestUnread(root, "bob", onSkip))?.message).toBe("sent meanwhile");
  });

  test("the first line with an id wins: a later line with that id is skipped with a warning, even long after", async () => {
    const path = mailboxPath(root, "bob");
    const original = createMessage("a", "bob", "original");
    writeFileSync(path, serializeMessage(original) + serializeMessage({ ...original, message: "same id, unread too" }), { mode: 0o600 });
    expect((await takeOldestUnread(root, "bob", onSkip))?.message).toBe("original");
    expect(await takeOldestUnread(root, "bob", onSkip)).toBeNull();
    expect(skipped).toEqual([
      `${serializeMessage(original).length}:its id "${original.id}" was already used by an earlier line, and the first line with an id wins`,
    ]);
    // Many messages later, with the cursor far past the original, the id is still known.
    for (let i = 0; i < 5; i++) await appendMessage(root, createMessage("a", "bob", `m${i}`));
    for (let i = 0; i < 5; i++) expect((await takeOldestUnread(root, "bob", onSkip))?.message).toBe(`m${i}`);
    appendFileSync(path, serializeMessage({ ...original, message: "replayed" }));
    expect(countUnread(root, "bob")).toBe(1);
    expect(await takeOldestUnread(root, "bob", onSkip)).toBeNull();
    expect(skipped.length).toBe(2);
    expect(countUnread(root, "bob")).toBe(0);
  });

  test("the id set grows past its first size and still knows every id", async () => {
    const path = mailboxPath(root, "bob");
    const read = () => ({ ...createMessage("a", "bob", "old"), read_flag: true });
    const first = read();
    writeFileSync(path, [first, ...Array.from({ length: 1_500 }, read)].map(serializeMessage).join(""), { mode: 0o600 });
    expect(await takeOldestUnread(root, "bob", onSkip)).toBeNull();
    // 3,000 more passed from a valid cursor: more than the set holds, so it is rebuilt larger at the end of the file.
    appendFileSync(path, Array.from({ length: 3_000 }, read).map(serializeMessage).join(""));
    expect(await takeOldestUnread(root, "bob", onSkip)).toBeNull();
    const header = readFileSync(`${path}.cursor`, "utf8").split("\n")[0]!.trim().split(" ");
    expect(Number(header[6])).toBeGreaterThanOrEqual(8_192);
    expect(Number(header[7])).toBe(4_501);
    appendFileSync(path, serializeMessage({ ...first, read_flag: false, message: "replayed" }));
    expect(await takeOldestUnread(root, "bob", onSkip)).toBeNull();
    expect(skipped).toEqual([expect.stringMatching(/already used by an earlier line/)]);
  });

  test("the id set's 'maybe' is checked against the history: an id it holds that no line has is still delivered", async () => {
    const path = mailboxPath(root, "bob");
    await appendMessage(root, createMessage("a", "bob", "first"));
    expect((await takeOldestUnread(root, "bob", onSkip))?.message).toBe("first");
    const next = createMessage("a", "bob", "next");
    // Put the next message's id into the set, as a fingerprint collision would.
    const header = readFileSync(`${path}.cursor`, "utf8").split("\n")[0]!.trim().split(" ");
    const fd = openSync(`${path}.cursor`, "r+");
    try {
      expect(
        tableAdd({ fd, at: Number(header[5]), slots: Number(header[6]) }, Number(header[7]), [Buffer.from(JSON.stringify(next.id))]),
      ).toBe(2);
    } finally {
      closeSync(fd);
    }
    await appendMessage(root, next);
    expect((await takeOldestUnread(root, "bob", onSkip))?.message).toBe("next");
    expect(skipped).toEqual([]);
  });

  test("lines with a key given twice are not messages: reported, never delivered, never counted", async () => {
    const path = mailboxPath(root, "bob");
    const lines = [
      '{"id":"AAAAAAAA","from":"c","to":"bob","message":"m","read_flag":true,"read_flag":false}',
      '{"id":"BBBBBBBB","from":"c","to":"bob","message":"m","read_flag":false,"read_flag":true}',
      '{"id":"CCCCCCCC","from":"c","to":"bob","message":"m","message":"n","read_flag":false}',
      '{"id":"DDDDDDDD","id":"EEEEEEEE","from":"c","to":"bob","message":"m","read_flag":false}',
    ];
    writeFileSync(path, lines.join("\n") + "\n", { mode: 0o600 });
    expect(countUnread(root, "bob")).toBe(0);
    expect(await takeOldestUnread(root, "bob", onSkip)).toBeNull();
    expect(skipped.map((entry) => entry.replace(/^\d+:/, ""))).toEqual([
      'it has the key "read_flag" more than once, so it is not a message',
      'it has the key "read_flag" more than once, so it is not a message',
      'it has the key "message" more than once, so it is not a message',
      'it has the key "id" more than once, so it is not a message',
    ]);
  });

  test("archiving the first line of a repeated id takes the repeat out too, so it never becomes the first", async () => {
    const path = mailboxPath(root, "bob");
    const old = { ...createMessage("a", "bob", "old", new Date(Date.now() - 10 * 3_600_000)), read_flag: true };
    writeFileSync(path, serializeMessage(old) + serializeMessage({ ...old, read_flag: false, message: "repeat" }), { mode: 0o600 });
    const { archived } = await archiveMessages(root, "bob", { pick: (message) => message.read_flag === true }, false);
    expect(archived).toBe(1);
    expect(readFileSync(archivePath(root, "bob"), "utf8")).not.toContain("repeat");
    expect(await takeOldestUnread(root, "bob", onSkip)).toBeNull();
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
    expect(isPresent(lockFile())).toBe(false);
  });

  test("calls of one process wait in line: a line longer than the timeout is served whole, in order", async () => {
    // 40 turns of 30 ms each take 1.2 s, well past the 1 s timeout; no single turn comes near it, even when a loaded
    // machine stretches a 30 ms sleep many times over.
    const served: number[] = [];
    const outcomes = await Promise.allSettled(
      Array.from({ length: 40 }, (_, index) =>
        withLock(
          lockFile(),
          async () => {
            await Bun.sleep(30);
            served.push(index);
          },
          { timeoutMs: 1_000 },
        ),
      ),
    );
    expect(outcomes.filter((outcome) => outcome.status === "rejected").map((outcome) => String(outcome.reason))).toEqual([]);
    expect(served).toEqual(Array.from({ length: 40 }, (_, index) => index));
    expect(isPresent(lockFile())).toBe(false);
  });

  test("a call of this process that holds the lock too long: those in line give up saying so, worded per interface", async () => {
    let release!: () => void;
    const hanging = withLock(lockFile(), () => new Promise<void>((done) => (release = done)));
    const waiting = Array.from({ length: 3 }, () => withLock(lockFile(), () => "ran", { timeoutMs: 50 }).catch((error) => error));
    const errors = (await Promise.all(waiting)) as AgentmailError[];
    for (const error of errors) {
      expect(error.code).toBe("locked");
      expect(error.message).toContain(`is held by another call of this process (pid ${process.pid}`);
      expect(error.message).toEndWith("retry once that call has finished");
      expect(error.wordedFor("mcp")).toEndWith("call the tool again once your other call has returned");
    }
    release();
    await hanging;
    // Once it lets go, the lock is free for the next call.
    expect(await withLock(lockFile(), () => "ran", { timeoutMs: 50 })).toBe("ran");
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

  test("a live holder is never broken, however old its lock: a waiter gives up with locked, naming its pid", async () => {
    writeFileSync(lockFile(), JSON.stringify({ pid: process.pid, host: hostname(), start: null, token: "t", time: "" }));
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(lockFile(), old, old);
    const error = await withLock(lockFile(), () => "ran", { timeoutMs: 50 }).catch((thrown) => thrown);
    expect(error).toBeInstanceOf(AgentmailError);
    expect((error as AgentmailError).code).toBe("locked");
    expect((error as Error).message).toContain(`is held by pid ${process.pid} on ${hostname()} (held 3600.`);
    expect((error as Error).message).toContain("never broken");
    expect(isPresent(lockFile())).toBe(true);
  });

  test("a holder on another host is never broken, however old: only a person (or its own host) removes it", async () => {
    writeFileSync(lockFile(), JSON.stringify({ pid: 1, host: "elsewhere", start: null, token: "t", time: "" }));
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(lockFile(), old, old);
    await expect(withLock(lockFile(), () => "ran", { timeoutMs: 30 })).rejects.toThrow(/elsewhere.*remove the lock file/);
    expect(lockReport(lockFile())?.stale).toBe(false);
  });

  test("a leftover .break file from a killed breaker does not block forever", async () => {
    const dead = Bun.spawnSync(["true"]).pid;
    writeFileSync(lockFile(), JSON.stringify({ pid: dead, host: hostname(), start: null, token: "t", time: "" }));
    writeFileSync(`${lockFile()}.break`, "");
    const old = new Date(Date.now() - 10_000);
    utimesSync(`${lockFile()}.break`, old, old);
    expect(await withLock(lockFile(), () => "ran")).toBe("ran");
  });

  test("a lock is one symlink naming its holder, made whole in one step", async () => {
    let seen = "";
    await withLock(lockFile(), () => {
      seen = readlinkSync(lockFile());
    });
    expect(seen).toMatch(new RegExp(`^am1:${process.pid}:\\d+:[0-9a-f]{8}:[0-9a-f]{12}$`));
    expect(isPresent(lockFile())).toBe(false);
  });

  test("a symlink planted at the lock path is never followed: it names no holder, so it is broken once 2 s old", async () => {
    const target = join(repo.dir, "target");
    writeFileSync(target, "keep");
    symlinkSync(target, lockFile());
    await expect(withLock(lockFile(), () => "ran", { timeoutMs: 30 })).rejects.toThrow(/names no holder/);
    const old = new Date(Date.now() - 5_000);
    lutimesSync(lockFile(), old, old);
    expect(await withLock(lockFile(), () => "ran")).toBe("ran");
    expect(readFileSync(target, "utf8")).toBe("keep");
  });

  test("a FIFO or a directory at the lock path is refused, never waited on", async () => {
    mkfifoSync(lockFile());
    await expect(withLock(lockFile(), () => "ran")).rejects.toThrow(/FIFO/);
    rmSync(lockFile());
    mkdirSync(lockFile());
    await expect(withLock(lockFile(), () => "ran")).rejects.toThrow(/directory/);
  });

  test("a live holder on this host is never broken by age; a dead one is, at once", async () => {
    const { currentProcess } = await import("../../../../src/store/durable/process-identity.ts");
    const me = currentProcess();
    const ownTag = await ownHostTag();
    symlinkSync(`am1:${me.pid}:${me.start}:${ownTag}:aaaaaaaaaaaa`, lockFile());
    const old = new Date(Date.now() - 3_600_000);
    lutimesSync(lockFile(), old, old);
    await expect(withLock(lockFile(), () => "ran", { timeoutMs: 50 })).rejects.toThrow(new RegExp(`pid ${me.pid}`));
    expect(removeStaleLock(lockFile())).toBe(false);
    rmSync(lockFile());
    const dead = Bun.spawnSync(["true"]).pid;
    symlinkSync(`am1:${dead}:1:${ownTag}:bbbbbbbbbbbb`, lockFile());
    expect(await withLock(lockFile(), () => "ran")).toBe("ran");
  });

  test("a stopped holder is alive: never broken, and the error says it is stopped", async () => {
    const sleeper = Bun.spawn(["sleep", "30"]);
    try {
      process.kill(sleeper.pid, "SIGSTOP");
      const { currentProcess } = await import("../../../../src/store/durable/process-identity.ts");
      const start = readFileSync(`/proc/${sleeper.pid}/stat`, "utf8").split(") ")[1]!.split(" ")[19];
      expect(currentProcess().start).not.toBeNull();
      symlinkSync(`am1:${sleeper.pid}:${start}:${await ownHostTag()}:dddddddddddd`, lockFile());
      const old = new Date(Date.now() - 31_000);
      lutimesSync(lockFile(), old, old);
      await expect(withLock(lockFile(), () => "ran", { timeoutMs: 50 })).rejects.toThrow(/stopped \(SIGSTOP/);
    } finally {
      sleeper.kill(9);
    }
  });

  test("a lock from another host, or another pid namespace of this one, is never broken from here", async () => {
    symlinkSync("am1:1:1:00000000:cccccccccccc", lockFile());
    const old = new Date(Date.now() - 3_600_000);
    lutimesSync(lockFile(), old, old);
    await expect(withLock(lockFile(), () => "ran", { timeoutMs: 30 })).rejects.toThrow(/another host or container.*remove the lock file/);
    rmSync(lockFile());
    // Written by an earlier agentmail of this host, whose tag named the host alone: judged as this host's.
    const legacy = hostTagOf(hostname());
    const dead = Bun.spawnSync(["true"]).pid;
    symlinkSync(`am1:${dead}:1:${legacy}:eeeeeeeeeeee`, lockFile());
    expect(await withLock(lockFile(), () => "ran")).toBe("ran");
  });

  /** The FNV-1a tag of a host name, as locks written before the pid namespace was part of the tag carry it. */
  function hostTagOf(host: string): string {
    let hash = 0x811c9dc5;
    for (let i = 0; i < host.length; i++) hash = Math.imul(hash ^ host.charCodeAt(i), 0x01000193);
    return (hash >>> 0).toString(16).padStart(8, "0");
  }

  /** This host's tag, as this process writes it into the locks it takes. */
  async function ownHostTag(): Promise<string> {
    const probe = join(root, "probe.lock");
    return withLock(probe, () => readlinkSync(probe).split(":")[3]!);
  }

  test("the mailbox lock lives beside the mailbox", () => {
    expect(lockPathOf(mailboxPath(root, "bob"))).toBe(join(root, "bob.jsonl.lock"));
    appendFileSync(join(root, "x"), "");
  });
});

describe("id map", () => {
  test("holds a number per id, agentmail's ids compactly and any other id too, through growth", () => {
    const map = new IdMap();
    const id = (n: number) => `Id${n.toString(36).padStart(6, "0")}`;
    for (let n = 0; n < 10_000; n++) expect(map.put(id(n), n)).toBeUndefined();
    expect(map.put(id(42), -1)).toBe(42);
    for (const other of ["short", "has space", "ünïcode1", "Id00000a-long", ""]) expect(map.put(other, 7)).toBeUndefined();
    expect(map.put("short", 8)).toBe(7);
    expect([map.get(id(0)), map.get(id(42)), map.get(id(9_999)), map.get(id(10_000))]).toEqual([0, -1, 9_999, undefined]);
    expect([map.get("short"), map.get(""), map.get("ünïcode1"), map.get("nothing")]).toEqual([8, 7, 7, undefined]);
    // Ids that differ only in case are different ids.
    map.put("abcdefgh", 1);
    expect([map.get("abcdefgh"), map.get("ABCDEFGH")]).toEqual([1, undefined]);
  });
});

describe("a full disk", () => {
  const disk = smallDiskForEachTest();

  test("an append that fails part way is taken back: the mailbox is byte for byte as it was, no lock is left", async () => {
    const first = createMessage("a", "bob", "fits");
    await appendMessage(disk.store, first);
    const before = readFileSync(mailboxPath(disk.store, "bob"));
    disk.fill();
    const error = await appendMessage(disk.store, createMessage("a", "bob", "x".repeat(20_000))).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(AgentmailError);
    expect((error as AgentmailError).message).toMatch(
      /^no space left on device for .*bob\.jsonl; the message was not sent and the mailbox is as it was; free space/,
    );
    expect(readFileSync(mailboxPath(disk.store, "bob")).equals(before)).toBe(true);
    expect(readdirSync(disk.store)).toEqual(["bob.jsonl"]);
  });

  test("appends written together that do not fit are taken back together: each fails, the mailbox is as it was", async () => {
    await appendMessage(disk.store, createMessage("a", "bob", "fits"));
    const before = readFileSync(mailboxPath(disk.store, "bob"));
    disk.fill();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 5 }, (_, n) => appendMessage(disk.store, createMessage("a", "bob", `${n}`.repeat(20_000)))),
    );
    expect(outcomes.map((outcome) => outcome.status)).toEqual(Array(5).fill("rejected"));
    expect(readFileSync(mailboxPath(disk.store, "bob")).equals(before)).toBe(true);
  });

  test("an append that fails after a torn line takes back the newline it added too", async () => {
    const path = mailboxPath(disk.store, "bob");
    writeFileSync(path, serializeMessage(createMessage("a", "bob", "whole")) + '{"id":"torn', { mode: 0o600 });
    const before = readFileSync(path);
    disk.fill();
    await expect(appendMessage(disk.store, createMessage("a", "bob", "y".repeat(20_000)))).rejects.toThrow(/no space left/);
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  test("an append that cannot create the mailbox leaves nothing behind", async () => {
    disk.fill();
    await expect(appendMessage(disk.store, createMessage("a", "carol", "z".repeat(20_000)))).rejects.toThrow(/no space left/);
    expect(readdirSync(disk.store)).toEqual([]);
  });

  test("locks, receive and the read mark need no free space", async () => {
    const message = createMessage("a", "bob", "on a full disk");
    await appendMessage(disk.store, message);
    disk.fill();
    expect(await withLock(join(disk.store, "x.lock"), () => "held")).toBe("held");
    expect((await takeOldestUnread(disk.store, "bob", onSkip))?.id).toBe(message.id);
    expect(JSON.parse(readFileSync(mailboxPath(disk.store, "bob"), "utf8")).read_flag).toBe(true);
    expect(await takeOldestUnread(disk.store, "bob", onSkip)).toBeNull();
    expect(readdirSync(disk.store).filter((file) => file.includes(".lock") || file.includes(".rlock"))).toEqual([]);
  });
});

describe("line scan", () => {
  const scan = (line: string, allKeys = false) => scanLine(new TextEncoder().encode(line), 0, Buffer.byteLength(line), allKeys);

  test("escaped keys are the keys they decode to", () => {
    const escaped = '{"read\\u005fflag":false,"\\u0069d":"A"}';
    const found = scan(escaped);
    expect(found.flag).toEqual({ offset: escaped.indexOf("false"), read: false });
    expect(idText(new TextEncoder().encode(escaped), found)).toBe('"A"');
    expect(scan('{"read_flag":true,"read\\u005fflag":false}')).toMatchObject({ flag: null, idStart: -1, duplicateKey: '"read_flag"' });
  });

  test("ids are named canonically, however they are escaped; an id that is not a string is none", () => {
    const id = (line: string) => idText(new TextEncoder().encode(line), scan(line));
    expect(id('{"id":"\\u0041B","read_flag":false}')).toBe('"AB"');
    expect(id('{"id":"\\u0041B","read_flag":false}')).toBe(id('{"id":"AB","read_flag":false}'));
    expect(id('{"id":"日本","read_flag":false}')).toBe('"日本"');
    expect(id('{"id":7,"read_flag":false}')).toBeNull();
    expect(id('{"id":"bad \\x","read_flag":false}')).toBeNull();
  });

  test("every key is checked only when asked", () => {
    expect(scan('{"a":1,"a":2,"read_flag":false}').duplicateKey).toBeNull();
    expect(scan('{"a":1,"a":2,"read_flag":false}', true).duplicateKey).toBe('"a"');
  });
});

describe("cleanup, one mailbox at a time", () => {
  test("a mailbox that cannot be cleaned is reported with what to do, and the others are cleaned", async () => {
    const old = { ...createMessage("a", "carol", "old", new Date(Date.now() - 10 * 3_600_000)), read_flag: true };
    writeFileSync(mailboxPath(root, "carol"), serializeMessage(old), { mode: 0o600 });
    mkfifoSync(mailboxPath(root, "a-fifo"));
    const { cleanup } = await import("../../../../src/actions/cleanup.ts");
    const report = await cleanup(
      { cwd: repo.dir, env: { AGENTMAIL_DIR: root } },
      { staleHours: 48, readHours: 2, purgeDays: null, dryRun: false },
    );
    expect(report.removed).toEqual(["carol"]);
    expect(report.failed).toEqual([
      { name: "a-fifo", code: "unsafe_path", message: expect.stringMatching(/a-fifo\.jsonl is a FIFO.*remove it$/) },
    ]);
  });
});
