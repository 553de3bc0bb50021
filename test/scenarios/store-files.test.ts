/**
 * Where mail is kept and how the store survives a hostile or damaged file system: .git/mail in the main checkout,
 * the same store from subdirectories and linked worktrees, $AGENTMAIL_DIR, file modes, refused paths (symlink,
 * FIFO, directory at a mailbox), torn and malformed lines, and stale, empty, live and SIGKILLed lock holders.
 */
import { beforeAll, beforeEach, describe, expect, test } from "bun:test";
import {
  appendFileSync,
  closeSync,
  constants,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import {
  am,
  BINARY,
  deadPid,
  expectError,
  expectSent,
  HOOK_OPENING,
  modeOf,
  rawLines,
  readText,
  shown,
  isPresent,
  storedMessages,
  tree,
} from "../support/e2e.ts";
import { smallDiskForEachTest } from "../support/full-disk.ts";
import { serverWithFreshRepos } from "../support/fresh-repos.ts";
import { tempRepo } from "../support/repo.ts";
import { waitFor } from "../support/wait.ts";
import type { TmuxServer } from "../support/tmux-server.ts";

let server: TmuxServer;
let repo: ReturnType<typeof tempRepo>;
let scratch: string;
const env = (name: string, extra: Record<string, string> = {}) => ({ ...server.agent(name).env, ...extra });
const box = (name: string) => join(repo.mailDir, `${name}.jsonl`);

const world = serverWithFreshRepos("agentmail-store-", ["alice", "bob", "carol"]);
beforeAll(() => ({ server, scratch } = world));
beforeEach(() => ({ repo } = world));

const send = (from: string, args: string[], cwd = repo.dir, extra: Record<string, string> = {}) =>
  am(["send", ...args], { env: env(from, extra), cwd });
const receive = (who: string, args: string[] = [], cwd = repo.dir, extra: Record<string, string> = {}) =>
  am(["receive", ...args], { env: env(who, extra), cwd });

function git(args: string[], cwd: string): string {
  const result = Bun.spawnSync(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd });
  if (result.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr.toString()}`);
  return result.stdout.toString();
}

/** A message line as another agentmail (or a person) would have written it. */
function line(id: string, body: string, extra: Record<string, unknown> = {}): string {
  return (
    JSON.stringify({ id, from: "carol", to: "bob", message: body, read_flag: false, created_at: "2026-01-01T00:00:00.000Z", ...extra }) +
    "\n"
  );
}

function seed(name: string, content: string): string {
  mkdirSync(repo.mailDir, { recursive: true, mode: 0o700 });
  const path = box(name);
  writeFileSync(path, content, { mode: 0o600 });
  return path;
}

describe("store location", () => {
  test(".git/mail in the main checkout, root 0700, files 0600", async () => {
    const id = expectSent(await send("alice", ["bob", "hello"]));
    expect(statSync(repo.mailDir).isDirectory()).toBe(true);
    expect(modeOf(repo.mailDir)).toBe(0o700);
    expect(modeOf(box("bob"))).toBe(0o600);
    expect(storedMessages(box("bob"))[0]).toMatchObject({ id });
    await receive("bob");
    // Whatever else the tool keeps in the store (locks, cursors) is private too.
    for (const file of readdirSync(repo.mailDir)) {
      const stat = lstatSync(join(repo.mailDir, file));
      expect(stat.isFile()).toBe(true);
      expect(stat.mode & 0o777).toBe(0o600);
    }
    // Nothing was written into the work tree.
    expect(tree(repo.dir).filter((p) => !p.startsWith(".git/"))).toEqual([]);
  });

  test("modes hold under a permissive umask", async () => {
    const result = Bun.spawnSync(["bash", "-c", `umask 000 && "$B" send bob hello`], {
      env: { ...env("alice"), B: BINARY },
      cwd: repo.dir,
    });
    expect(result.exitCode).toBe(0);
    expect(modeOf(repo.mailDir)).toBe(0o700);
    expect(modeOf(box("bob"))).toBe(0o600);
  });

  test("a subdirectory uses the repository's store", async () => {
    const deep = join(repo.dir, "src", "deeper");
    mkdirSync(deep, { recursive: true });
    const id = expectSent(await send("alice", ["bob", "from deep"], deep));
    expect(storedMessages(box("bob"))[0]).toMatchObject({ id, message: "from deep" });
    expect(existsSync(join(deep, ".git"))).toBe(false);
    expect((await receive("bob", [], join(repo.dir, "src"))).stdout).toBe(shown("alice", id, "from deep"));
  });

  test("a linked worktree shares the main checkout's store", async () => {
    git(["commit", "-q", "--allow-empty", "-m", "init"], repo.dir);
    const wt = join(scratch, `wt-${Date.now()}`);
    git(["worktree", "add", "-q", wt], repo.dir);
    try {
      expect(statSync(join(wt, ".git")).isFile()).toBe(true);
      const fromWorktree = expectSent(await send("alice", ["bob", "from the worktree"], wt));
      expect(storedMessages(box("bob"))[0]).toMatchObject({ id: fromWorktree });
      const fromMain = expectSent(await send("carol", ["bob", "from main"], repo.dir));
      mkdirSync(join(wt, "sub"));
      expect((await receive("bob", [], repo.dir)).stdout).toBe(shown("alice", fromWorktree, "from the worktree"));
      expect((await receive("bob", [], join(wt, "sub"))).stdout).toBe(shown("carol", fromMain, "from main"));
      expect((await receive("bob", [], wt)).stdout).toBe("No unread messages\n");
      // No second store beside the worktree's own git dir or in its work tree.
      const worktreeGitDirs = readdirSync(join(repo.dir, ".git", "worktrees"));
      for (const name of worktreeGitDirs) expect(existsSync(join(repo.dir, ".git", "worktrees", name, "mail"))).toBe(false);
      expect(existsSync(join(wt, ".agentmail"))).toBe(false);
      expect(existsSync(join(wt, "mail"))).toBe(false);
    } finally {
      rmSync(wt, { recursive: true, force: true });
    }
  });

  test("$AGENTMAIL_DIR overrides the repository store and is created 0700", async () => {
    const custom = join(scratch, `custom-${Date.now()}`, "mail");
    const id = expectSent(await send("alice", ["bob", "elsewhere"], repo.dir, { AGENTMAIL_DIR: custom }));
    expect(existsSync(repo.mailDir)).toBe(false);
    expect(storedMessages(join(custom, "bob.jsonl"))[0]).toMatchObject({ id, message: "elsewhere" });
    expect(modeOf(custom)).toBe(0o700);
    expect(modeOf(join(custom, "bob.jsonl"))).toBe(0o600);
    expect((await receive("bob", [], repo.dir)).stdout).toBe("No unread messages\n");
    expect((await receive("bob", [], repo.dir, { AGENTMAIL_DIR: custom })).stdout).toBe(shown("alice", id, "elsewhere"));
  });

  test("$AGENTMAIL_DIR shared by two repositories joins them", async () => {
    const other = tempRepo();
    try {
      const custom = join(scratch, `shared-${Date.now()}`);
      const id = expectSent(await send("alice", ["bob", "across repos"], repo.dir, { AGENTMAIL_DIR: custom }));
      expect((await receive("bob", [], other.dir, { AGENTMAIL_DIR: custom })).stdout).toBe(shown("alice", id, "across repos"));
    } finally {
      other.remove();
    }
  });
});

describe("refused paths at the mailbox", () => {
  test("a symlink to a file outside: exit 1, the target is unchanged", async () => {
    const target = join(scratch, `target-${Date.now()}.txt`);
    writeFileSync(target, "precious\n");
    mkdirSync(repo.mailDir, { recursive: true, mode: 0o700 });
    symlinkSync(target, box("bob"));
    expectError(await send("alice", ["bob", "into the link"]), 1);
    expectError(await receive("bob"), 1);
    expect(readFileSync(target, "utf8")).toBe("precious\n");
    expect(lstatSync(box("bob")).isSymbolicLink()).toBe(true);
  });

  test("a symlink to a mailbox-looking file outside: receive does not mark it read", async () => {
    const target = join(scratch, `target-${Date.now()}.jsonl`);
    const content = line("AAAAAAAA", "outside");
    writeFileSync(target, content);
    mkdirSync(repo.mailDir, { recursive: true, mode: 0o700 });
    symlinkSync(target, box("bob"));
    expectError(await receive("bob"), 1);
    expectError(await send("alice", ["bob", "x"]), 1);
    expect(readFileSync(target, "utf8")).toBe(content);
  });

  test("a dangling symlink: nothing is created at its target", async () => {
    const target = join(scratch, `dangling-${Date.now()}.jsonl`);
    mkdirSync(repo.mailDir, { recursive: true, mode: 0o700 });
    symlinkSync(target, box("bob"));
    expectError(await send("alice", ["bob", "into the void"]), 1);
    expect(existsSync(target)).toBe(false);
  });

  test("a FIFO: exit 1, no hang", async () => {
    mkdirSync(repo.mailDir, { recursive: true, mode: 0o700 });
    expect(Bun.spawnSync(["mkfifo", box("bob")]).exitCode).toBe(0);
    const sent = await am(["send", "bob", "into the fifo"], { env: env("alice"), cwd: repo.dir });
    expectError(sent, 1);
    const received = await am(["receive"], { env: env("bob"), cwd: repo.dir });
    expectError(received, 1);
  });

  test("a directory: exit 1", async () => {
    mkdirSync(box("bob"), { recursive: true });
    expectError(await send("alice", ["bob", "into the dir"]), 1);
    expectError(await receive("bob"), 1);
    expect(readdirSync(box("bob"))).toEqual([]);
  });

  test("the store root is a file: exit 1", async () => {
    writeFileSync(repo.mailDir, "not a directory\n");
    expectError(await send("alice", ["bob", "x"]), 1);
    expect(readFileSync(repo.mailDir, "utf8")).toBe("not a directory\n");
  });

  test("receive --hook with a refused mailbox path is silent with exit 0", async () => {
    mkdirSync(box("bob"), { recursive: true });
    expect(await receive("bob", ["--hook"])).toMatchObject({ code: 0, stdout: "", stderr: "" });
  });

  for (const kind of ["symlink", "FIFO", "directory"] as const) {
    test(`a ${kind} at the lock path: exit 1, no hang, nothing followed`, async () => {
      mkdirSync(repo.mailDir, { recursive: true, mode: 0o700 });
      const lock = `${box("bob")}.lock`;
      const target = join(scratch, `lock-target-${Date.now()}`);
      if (kind === "symlink") symlinkSync(target, lock);
      if (kind === "FIFO") expect(Bun.spawnSync(["mkfifo", lock]).exitCode).toBe(0);
      if (kind === "directory") mkdirSync(lock);
      const result = await am(["send", "bob", "x"], { env: env("alice", { AGENTMAIL_LOCK_TIMEOUT: "1" }), cwd: repo.dir });
      expectError(result, 1);
      expect(existsSync(target)).toBe(false);
      expect(readText(box("bob"))).toBe("");
    });
  }

  // The cursor beside a mailbox is the tool's own business, but a receive that fails on it must not eat the message.
  for (const kind of ["symlink", "FIFO", "directory"] as const) {
    test(`a ${kind} where receive keeps its own state: a failing receive leaves the message unread`, async () => {
      const id = expectSent(await send("alice", ["bob", "do not lose me"]));
      const cursor = `${box("bob")}.cursor`;
      const target = join(scratch, `cursor-target-${Date.now()}`);
      rmSync(cursor, { recursive: true, force: true });
      if (kind === "symlink") symlinkSync(target, cursor);
      if (kind === "FIFO") expect(Bun.spawnSync(["mkfifo", cursor]).exitCode).toBe(0);
      if (kind === "directory") mkdirSync(cursor);
      const result = await am(["receive"], { env: env("bob"), cwd: repo.dir });
      expect(existsSync(target)).toBe(false);
      const readFlag = storedMessages(box("bob"))[0]!.read_flag;
      if (result.code === 0) {
        expect(result.stdout).toBe(shown("alice", id, "do not lose me"));
        expect(readFlag).toBe(true);
      } else {
        expectError(result, 1);
        // Failed, so the message was not shown: it must still be unread.
        expect(readFlag).toBe(false);
      }
    });
  }

  test("other mailboxes keep working", async () => {
    mkdirSync(box("bob"), { recursive: true });
    const id = expectSent(await send("alice", ["carol", "fine"]));
    expect((await receive("carol")).stdout).toBe(shown("alice", id, "fine"));
  });
});

describe("damaged mailboxes", () => {
  test("a torn last line: the next send still writes a parseable line, and receive delivers it", async () => {
    const path = seed("bob", line("AAAAAAAA", "before") + '{"id":"zz');
    const id = expectSent(await send("alice", ["bob", "after the tear"]));
    const lines = rawLines(path);
    expect(lines[0]).toBe(line("AAAAAAAA", "before").trimEnd());
    expect(lines).toContain('{"id":"zz');
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ id, from: "alice", message: "after the tear", read_flag: false });
    expect(readText(path).endsWith("\n")).toBe(true);
    expect((await receive("bob")).stdout).toBe(shown("carol", "AAAAAAAA", "before"));
    const second = await receive("bob");
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(shown("alice", id, "after the tear"));
    expect((await receive("bob")).stdout).toBe("No unread messages\n");
    expect(readText(path)).toContain('{"id":"zz');
  });

  test("a torn last line alone: receive skips it without failing", async () => {
    seed("bob", '{"id":"zz');
    const result = await receive("bob");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("No unread messages\n");
  });

  test("malformed lines in the middle are skipped with a warning and never deleted", async () => {
    const garbage = ["this is not json", '{"id":"BBBBBBBB","from":"carol"}', "[1,2,3]", '{"broken": '];
    const content = line("AAAAAAAA", "first") + garbage.join("\n") + "\n" + line("CCCCCCCC", "last");
    const path = seed("bob", content);
    const first = await receive("bob");
    expect(first).toMatchObject({ code: 0, stdout: shown("carol", "AAAAAAAA", "first") });
    const second = await receive("bob");
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(shown("carol", "CCCCCCCC", "last"));
    expect(second.stderr).toMatch(/^warning: /m);
    for (const stderrLine of second.stderr.trimEnd().split("\n")) expect(stderrLine).toMatch(/^warning: /);
    expect((await receive("bob")).stdout).toBe("No unread messages\n");
    const after = readText(path);
    for (const bad of garbage) expect(after).toContain(bad + "\n");
    expect(rawLines(path).length).toBe(content.split("\n").length - 1);
  });

  test("a send appends after malformed lines and leaves them alone", async () => {
    const path = seed("bob", "garbage line\n");
    const id = expectSent(await send("alice", ["bob", "fresh"]));
    expect(rawLines(path)[0]).toBe("garbage line");
    const result = await receive("bob");
    expect(result.stdout).toBe(shown("alice", id, "fresh"));
    expect(result.stderr).toMatch(/^warning: /);
  });

  test("lines written by others with extra fields, spacing or a missing created_at are delivered", async () => {
    const path = seed(
      "bob",
      JSON.stringify({ id: "DDDDDDDD", from: "carol", to: "bob", message: "spaced", read_flag: false }, null, 0)
        .replace(/,/g, ", ")
        .replace(/:/g, ": ") +
        "\n" +
        line("EEEEEEEE", "extra", { thread: "t1", priority: 3 }),
    );
    expect((await receive("bob")).stdout).toBe(shown("carol", "DDDDDDDD", "spaced"));
    const json = await receive("bob", ["--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({ id: "EEEEEEEE", message: "extra", thread: "t1", priority: 3 });
    expect(storedMessages(path).map((m) => m.read_flag)).toEqual([true, true]);
    expect(storedMessages(path)[1]).toMatchObject({ thread: "t1", priority: 3 });
  });

  test("a message already read by another tool is not delivered again", async () => {
    seed("bob", line("FFFFFFFF", "old", { read_flag: true }) + line("GGGGGGGG", "new"));
    expect((await receive("bob")).stdout).toBe(shown("carol", "GGGGGGGG", "new"));
    expect((await receive("bob")).stdout).toBe("No unread messages\n");
  });
});

describe("mailboxes edited by hand", () => {
  const ping = async (n: number) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push(expectSent(await send("alice", ["bob", "ping"])));
    return ids;
  };

  test("a mailbox emptied in place (truncated) delivers every message sent afterwards", async () => {
    await ping(3);
    expect((await receive("bob")).code).toBe(0);
    expect((await receive("bob")).code).toBe(0);
    truncateSync(box("bob"), 0);
    // Same sender, same body: the new lines have the same length as the old ones.
    const fresh = await ping(3);
    const got: string[] = [];
    for (let i = 0; i < 3; i++) got.push((await receive("bob")).stdout);
    expect(got).toEqual(fresh.map((id) => shown("alice", id, "ping")));
    expect((await receive("bob")).stdout).toBe("No unread messages\n");
  });

  test("a mailbox replaced by a new file (rename) delivers the new file's unread mail from the start", async () => {
    await ping(3);
    await receive("bob");
    await receive("bob");
    const replacement = join(repo.mailDir, "replacement.tmp");
    writeFileSync(replacement, line("AAAAAAAA", "a") + line("BBBBBBBB", "b"), { mode: 0o600 });
    renameSync(replacement, box("bob"));
    expect((await receive("bob")).stdout).toBe(shown("carol", "AAAAAAAA", "a"));
    expect((await receive("bob")).stdout).toBe(shown("carol", "BBBBBBBB", "b"));
    expect((await receive("bob")).stdout).toBe("No unread messages\n");
  });

  test("a read message marked unread again by hand is delivered again", async () => {
    const [id] = await ping(1);
    await receive("bob");
    const text = readText(box("bob"));
    writeFileSync(box("bob"), text.replace(/"read_flag":true ?/, '"read_flag":false'));
    expect((await receive("bob")).stdout).toBe(shown("alice", id!, "ping"));
  });
});

describe("locks", () => {
  const lockOf = (name: string) => `${box(name)}.lock`;
  const holder = (pid: number) => JSON.stringify({ pid, host: hostname(), start: null, token: "x", time: new Date().toISOString() });

  test("a stale lock left by a dead pid is broken: send succeeds", async () => {
    mkdirSync(repo.mailDir, { recursive: true, mode: 0o700 });
    writeFileSync(lockOf("bob"), holder(deadPid()));
    const id = expectSent(await send("alice", ["bob", "through a stale lock"]));
    expect(storedMessages(box("bob"))[0]).toMatchObject({ id });
    expect(isPresent(lockOf("bob"))).toBe(false);
  });

  test("a stale lock left by a dead pid is broken: receive succeeds", async () => {
    seed("bob", line("AAAAAAAA", "waiting"));
    writeFileSync(lockOf("bob"), holder(deadPid()));
    expect((await receive("bob")).stdout).toBe(shown("carol", "AAAAAAAA", "waiting"));
    expect(isPresent(lockOf("bob"))).toBe(false);
  });

  test("an empty lock older than 2 s is broken", async () => {
    mkdirSync(repo.mailDir, { recursive: true, mode: 0o700 });
    writeFileSync(lockOf("bob"), "");
    const old = new Date(Date.now() - 10_000);
    utimesSync(lockOf("bob"), old, old);
    const id = expectSent(await send("alice", ["bob", "through an empty lock"]));
    expect(storedMessages(box("bob"))[0]).toMatchObject({ id });
  });

  test("an unparseable lock older than 2 s is broken", async () => {
    mkdirSync(repo.mailDir, { recursive: true, mode: 0o700 });
    writeFileSync(lockOf("bob"), '{"pid":');
    const old = new Date(Date.now() - 10_000);
    utimesSync(lockOf("bob"), old, old);
    expectSent(await send("alice", ["bob", "through a garbled lock"]));
  });

  test("a lock held by a live process: send fails with exit 1 after the timeout, naming the pid", async () => {
    mkdirSync(repo.mailDir, { recursive: true, mode: 0o700 });
    const content = holder(process.pid);
    writeFileSync(lockOf("bob"), content);
    const result = await send("alice", ["bob", "blocked"], repo.dir, { AGENTMAIL_LOCK_TIMEOUT: "1" });
    const stderr = expectError(result, 1);
    expect(stderr).toContain(String(process.pid));
    expect(readText(box("bob"))).toBe("");
    // The live holder's lock is left exactly as it was.
    expect(readFileSync(lockOf("bob"), "utf8")).toBe(content);
  });

  test("a lock held by a live process: receive fails with exit 1 and the message stays unread", async () => {
    const path = seed("bob", line("AAAAAAAA", "waiting"));
    writeFileSync(lockOf("bob"), holder(process.pid));
    const stderr = expectError(await receive("bob", [], repo.dir, { AGENTMAIL_LOCK_TIMEOUT: "1" }), 1);
    expect(stderr).toContain(String(process.pid));
    expect(storedMessages(path)[0]!.read_flag).toBe(false);
    rmSync(lockOf("bob"));
    expect((await receive("bob")).stdout).toBe(shown("carol", "AAAAAAAA", "waiting"));
  });

  test("a SIGKILLed lock holder is recovered by the next send", async () => {
    mkdirSync(repo.mailDir, { recursive: true, mode: 0o700 });
    const sleeper = Bun.spawn(["sleep", "30"], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
    try {
      writeFileSync(lockOf("bob"), holder(sleeper.pid));
    } finally {
      sleeper.kill(9);
      await sleeper.exited;
    }
    const id = expectSent(await send("alice", ["bob", "after the holder died"]));
    expect(storedMessages(box("bob"))[0]).toMatchObject({ id });
    expect(isPresent(lockOf("bob"))).toBe(false);
  });

  test("a lock on one mailbox does not block another", async () => {
    mkdirSync(repo.mailDir, { recursive: true, mode: 0o700 });
    writeFileSync(lockOf("bob"), holder(process.pid));
    expectSent(await send("alice", ["carol", "unrelated"], repo.dir, { AGENTMAIL_LOCK_TIMEOUT: "1" }));
  });

  test("a lock from another host is not broken by pid", async () => {
    mkdirSync(repo.mailDir, { recursive: true, mode: 0o700 });
    writeFileSync(
      lockOf("bob"),
      JSON.stringify({ pid: deadPid(), host: `not-${hostname()}`, start: null, token: "y", time: new Date().toISOString() }),
    );
    expectError(await send("alice", ["bob", "blocked"], repo.dir, { AGENTMAIL_LOCK_TIMEOUT: "1" }), 1);
    expect(readText(box("bob"))).toBe("");
  });

  test("appending to a mailbox never leaves a lock behind", async () => {
    for (let i = 0; i < 3; i++) expectSent(await send("alice", ["bob", `m${i}`]));
    await receive("bob");
    expect(readdirSync(repo.mailDir).filter((f) => f.endsWith("lock") || f.endsWith(".break"))).toEqual([]);
  });
});

/**
 * Starts `args` with one output stream (stdout or stderr) going into a FIFO that is read only until the message has
 * started to come out, then never again: the process is left blocked writing a message larger than a pipe holds.
 * It is then sent `signal`; returns what had been read.
 */
async function killWhileWriting(
  args: string[],
  who: string,
  stream: "stdout" | "stderr",
  signal: NodeJS.Signals,
  stdin?: string,
  extraEnv: Record<string, string> = {},
): Promise<string> {
  const fifo = join(scratch, `fifo-${process.pid}-${Math.random().toString(36).slice(2)}`);
  expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  const redirect = stream === "stdout" ? '>"$FIFO"' : '2>"$FIFO"';
  const child = Bun.spawn(["bash", "-c", `exec "$B" "$@" ${redirect}`, "bash", ...args], {
    env: { ...env(who), ...extraEnv, B: BINARY, FIFO: fifo },
    cwd: repo.dir,
    stdin: stdin === undefined ? "ignore" : "pipe",
    stdout: "ignore",
    stderr: stream === "stdout" ? "ignore" : "pipe",
  });
  if (stdin !== undefined) {
    const sink = child.stdin as import("bun").FileSink;
    sink.write(stdin);
    await sink.flush();
  }
  const chunk = Buffer.alloc(4096);
  let seen = "";
  try {
    // The canary: the output has begun (the message's ID line, or the start of an MCP tool reply, is out). One chunk
    // is read per look, so the writer is left blocked soon after.
    await waitFor(
      () => `output from ${args.join(" ")}; read so far: ${seen.slice(0, 200)}`,
      () => {
        try {
          seen += chunk.subarray(0, readSync(reader, chunk, 0, chunk.length, null)).toString("latin1");
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
        }
        return /ID: |\{"result":\{"content":\[/.test(seen);
      },
      60_000,
      5,
    );
    child.kill(signal);
    await child.exited;
    expect(child.signalCode as string | null).toBe(signal);
  } finally {
    child.kill(9);
    closeSync(reader);
    rmSync(fifo, { force: true });
  }
  return seen;
}

describe("a receive killed while its output is blocked leaves the message unread", () => {
  // Larger than a pipe holds (64 KiB), so the writer blocks with most of the message still unwritten.
  const big = "a message larger than a pipe buffer. ".repeat(5_000).trim();
  // Sent on stdin: one argument is limited to 128 KiB.
  const sendBig = async () => expectSent(await am(["send", "bob"], { env: env("alice"), cwd: repo.dir, stdin: big }));

  for (const signal of ["SIGKILL", "SIGTERM", "SIGHUP"] as const) {
    test(`receive, stdout full, ${signal}: the next receive gets the whole message`, async () => {
      const id = await sendBig();
      const seen = await killWhileWriting(["receive"], "bob", "stdout", signal);
      expect(seen).toStartWith(`From: alice\nID: ${id}\n`);
      expect(storedMessages(box("bob"))[0]!.read_flag).toBe(false);
      const again = await receive("bob");
      expect(again.code).toBe(0);
      expect(again.stdout).toBe(shown("alice", id, big));
      expect((await receive("bob")).stdout).toBe("No unread messages\n");
    });
  }

  test("receive --hook, stderr full, SIGKILL: the message stays unread", async () => {
    const id = await sendBig();
    // A budget that lets the whole big body through, so the hook's output fills the pipe.
    const budget = { AGENTMAIL_DELIVERY_CHARS: String(10 * 1024 * 1024) };
    const seen = await killWhileWriting(["receive", "--hook"], "bob", "stderr", "SIGKILL", undefined, budget);
    expect(seen).toStartWith(`${HOOK_OPENING}\nFrom: alice\nID: ${id}\n`);
    expect((await receive("bob")).stdout).toBe(shown("alice", id, big));
  });

  test("the MCP receive tool, reply blocked, server SIGKILLed: the message stays unread", async () => {
    const id = await sendBig();
    const requests = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "receive", arguments: {} } },
    ];
    const seen = await killWhileWriting(["mcp"], "bob", "stdout", "SIGKILL", requests.map((r) => JSON.stringify(r) + "\n").join(""));
    expect(seen).toContain('"content":[');
    expect(seen).not.toContain('"id":2');
    expect(storedMessages(box("bob"))[0]!.read_flag).toBe(false);
    expect((await receive("bob")).stdout).toBe(shown("alice", id, big));
  });
});

describe("a full disk", () => {
  const disk = smallDiskForEachTest();

  const onDisk = () => ({ AGENTMAIL_DIR: disk.store });
  const diskBox = (name: string) => join(disk.store, `${name}.jsonl`);
  // The marker is made on the store's first use (an empty file: it needs an inode, not a block).
  const leftovers = () =>
    readdirSync(disk.store).filter((file) => !file.endsWith(".jsonl") && !file.endsWith(".cursor") && file !== ".agentmail-store");

  test("a send that does not fit fails, prints no id, says why, and leaves the mailbox byte for byte as it was", async () => {
    const first = expectSent(await send("alice", ["bob", "fits"], repo.dir, onDisk()));
    const before = readFileSync(diskBox("bob"));
    disk.fill();
    const failed = await send("alice", ["bob", "does not fit ".repeat(1_000)], repo.dir, onDisk());
    const stderr = expectError(failed, 1);
    expect(stderr).toMatch(/no space left on device/);
    expect(stderr).toMatch(/free space and send again/);
    expect(readFileSync(diskBox("bob")).equals(before)).toBe(true);
    expect(leftovers()).toEqual([]);
    // Once there is space again, nothing of the failed send comes back: the next send is the next message.
    disk.free();
    const second = expectSent(await send("alice", ["bob", "after"], repo.dir, onDisk()));
    expect(storedMessages(diskBox("bob")).map((m) => m.id)).toEqual([first, second]);
    expect((await receive("bob", [], repo.dir, onDisk())).stdout).toBe(shown("alice", first, "fits"));
    expect((await receive("bob", [], repo.dir, onDisk())).stdout).toBe(shown("alice", second, "after"));
  });

  test("a send to a new mailbox on a full disk leaves no mailbox and no lock behind, and the next send does not wait", async () => {
    disk.fill();
    expectError(await send("alice", ["carol", "does not fit ".repeat(1_000)], repo.dir, onDisk()), 1);
    expect(readdirSync(disk.store)).toEqual([".agentmail-store"]);
    disk.free();
    // With a lock left behind, this send would have to wait for it to go stale; with a 1 s timeout it would fail.
    expectSent(await send("alice", ["carol", "fits now"], repo.dir, { ...onDisk(), AGENTMAIL_LOCK_TIMEOUT: "1" }));
  });

  test("receive works on a full disk: the message is shown and marked read", async () => {
    const id = expectSent(await send("alice", ["bob", "read me on a full disk"], repo.dir, onDisk()));
    disk.fill();
    const result = await receive("bob", [], repo.dir, onDisk());
    expect(result).toMatchObject({ code: 0, stdout: shown("alice", id, "read me on a full disk") });
    expect(storedMessages(diskBox("bob"))[0]!.read_flag).toBe(true);
    expect((await receive("bob", [], repo.dir, onDisk())).stdout).toBe("No unread messages\n");
    expect(leftovers()).toEqual([]);
  });
});

describe("every byte of a message is kept", () => {
  test("a leading BOM on stdin is part of the message", async () => {
    const body = "\uFEFFstarts with a byte order mark";
    const id = expectSent(await am(["send", "bob"], { env: env("alice"), cwd: repo.dir, stdin: body }));
    expect(storedMessages(box("bob"))[0]!.message).toBe(body);
    expect((await receive("bob")).stdout).toBe(shown("alice", id, body));
  });

  test("a leading BOM in an argument is part of the message", async () => {
    const body = "\uFEFFas an argument";
    expectSent(await send("alice", ["bob", body]));
    expect(JSON.parse((await receive("bob", ["--json"])).stdout).message).toBe(body);
  });
});

describe("one id, one delivery", () => {
  test("two lines with one id: the first is delivered, the later one is skipped with a warning", async () => {
    seed("bob", line("AAAAAAAA", "first") + line("AAAAAAAA", "again") + line("BBBBBBBB", "other"));
    expect((await receive("bob")).stdout).toBe(shown("carol", "AAAAAAAA", "first"));
    const next = await receive("bob");
    expect(next.stdout).toBe(shown("carol", "BBBBBBBB", "other"));
    expect(next.stderr).toMatch(/^warning: .*AAAAAAAA/m);
    expect((await receive("bob")).stdout).toBe("No unread messages\n");
  });

  test("an id already delivered long ago is not delivered again when it comes back", async () => {
    seed("bob", line("AAAAAAAA", "original"));
    expect((await receive("bob")).stdout).toBe(shown("carol", "AAAAAAAA", "original"));
    for (let i = 0; i < 3; i++) expectSent(await send("alice", ["bob", `m${i}`]));
    for (let i = 0; i < 3; i++) expect((await receive("bob")).stdout).toContain(`m${i}`);
    appendFileSync(box("bob"), line("AAAAAAAA", "replayed"));
    const replay = await receive("bob");
    expect(replay.stdout).toBe("No unread messages\n");
    expect(replay.stderr).toMatch(/^warning: .*AAAAAAAA/m);
  });

  test("a line that names read_flag twice is never silently taken as read: it is skipped with a warning", async () => {
    const hostile = '{"id":"HHHHHHHH","from":"carol","to":"bob","message":"hidden","read_flag":true,"read_flag":false}\n';
    seed("bob", hostile + line("CCCCCCCC", "after"));
    const result = await receive("bob");
    expect(result.stdout).toBe(shown("carol", "CCCCCCCC", "after"));
    expect(result.stderr).toMatch(/^warning: .*read_flag/m);
    expect(readText(box("bob"))).toStartWith(hostile);
  });

  test("a line with any key twice is not a message: skipped with a warning, never delivered", async () => {
    const hostile = '{"id":"DDDDDDDD","from":"carol","to":"bob","message":"shown","message":"hidden","read_flag":false}\n';
    seed("bob", hostile);
    const result = await receive("bob");
    expect(result.stdout).toBe("No unread messages\n");
    expect(result.stderr).toMatch(/^warning: .*"message"/m);
  });
});
