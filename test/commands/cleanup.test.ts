/**
 * `agentmail cleanup` end to end against the compiled binary in private tmux servers: statuses of vanished or stale
 * agents are forgotten, old read messages are archived, empty mailboxes removed, unread mail is never lost; a dry run
 * reports exactly what the next real run does and changes no file; cleanup racing with senders loses nothing.
 */
import type { CleanupReport } from "../../src/actions/cleanup.ts";
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { tempRepo } from "../support/repo.ts";
import { richMailWorld } from "../support/rich-mail.ts";
import { outsideTmuxEnv, TmuxServer } from "../support/tmux-server.ts";
import { writeOldReadLines } from "../support/big-mailbox.ts";
import { ageLocks, heldBy, stopWhileHolding } from "../support/stopped-holder.ts";
import { am, expectError, expectSent, oneJson, readText, sleep, start, storedMessages } from "../support/workflow.ts";

const HOUR = 3_600_000;

const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const clean of cleanups.reverse()) clean();
});

/** A fresh repository and tmux server with the given windows; stopped and removed after the file. */
function world(names: string[]) {
  const repo = tempRepo();
  const server = TmuxServer.start(names, repo.dir);
  cleanups.push(() => {
    server.stop();
    repo.remove();
  });
  const as = (name: string) => ({ env: server.agent(name).env, cwd: repo.dir });
  const mailbox = (name: string) => join(repo.mailDir, `${name}.jsonl`);
  const statusFile = (name: string) => join(repo.mailDir, ".agents", `${name}.json`);
  return { repo, server, as, mailbox, statusFile };
}

let serial = 0;
/** A mailbox line written directly, the way the store writes it. */
function line(to: string, read: boolean, createdAt: Date, body = "old"): { id: string; text: string } {
  const id = `Old${String(serial++).padStart(5, "0")}`;
  return {
    id,
    text: JSON.stringify({ id, from: "alice", to, message: body, read_flag: read, created_at: createdAt.toISOString() }) + "\n",
  };
}

function addLines(path: string, lines: { text: string }[]): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  appendFileSync(path, lines.map((entry) => entry.text).join(""));
}

/** Makes an agent's stored status look as if it was last set `hours` ago. */
function ageStatus(path: string, hours: number): void {
  const record = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  const then = new Date(Date.now() - hours * HOUR).toISOString();
  record.updated_at = then;
  record.since = then;
  writeFileSync(path, JSON.stringify(record) + "\n");
}

/** Every file under the store: content and mtime, so a dry run that touches anything shows. */
function snapshot(dir: string): Record<string, { content: string; mtimeMs: number; mode: number }> {
  const out: Record<string, { content: string; mtimeMs: number; mode: number }> = {};
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const full = join(at, entry.name);
      if (entry.isDirectory()) walk(full);
      else {
        const stat = statSync(full);
        out[relative(dir, full)] = { content: readFileSync(full).toString("base64"), mtimeMs: stat.mtimeMs, mode: stat.mode };
      }
    }
  };
  walk(dir);
  return out;
}

const byName = <T extends { name: string }>(list: T[]) => [...list].sort((a, b) => a.name.localeCompare(b.name));

/**
 * The rich case: alice keeps her status; bob's status is 50 h old; dave's window is killed after he set his;
 * bob has old read mail (archived), old unread mail and recent read mail (kept); carol has only old read mail
 * (archived, then her mailbox is empty and removed); erin's mailbox is an empty file (removed).
 */
async function richScenario() {
  const w = world(["alice", "bob", "carol", "dave", "erin"]);
  for (const name of ["alice", "bob", "dave"]) expect((await am(["status", "ready"], w.as(name))).code).toBe(0);
  ageStatus(w.statusFile("bob"), 50);
  w.server.run(["kill-window", "-t", w.server.agent("dave").windowId]);

  const recentRead1 = expectSent(await am(["send", "bob", "recent read 1"], w.as("alice")));
  const recentRead2 = expectSent(await am(["send", "bob", "recent read 2"], w.as("alice")));
  expect((await am(["receive"], w.as("bob"))).stdout).toContain(recentRead1);
  expect((await am(["receive"], w.as("bob"))).stdout).toContain(recentRead2);
  const recentUnread = expectSent(await am(["send", "bob", "recent unread"], w.as("alice")));
  const threeHoursAgo = new Date(Date.now() - 3 * HOUR);
  const oldRead = [
    line("bob", true, threeHoursAgo),
    line("bob", true, threeHoursAgo),
    line("bob", true, new Date(Date.now() - 100 * HOUR)),
  ];
  const oldUnread = line("bob", false, new Date(Date.now() - 100 * HOUR), "old but unread");
  const freshRead = line("bob", true, new Date(Date.now() - 0.5 * HOUR), "read half an hour ago");
  addLines(w.mailbox("bob"), [oldRead[0]!, oldUnread, oldRead[1]!, freshRead, oldRead[2]!]);
  addLines(w.mailbox("carol"), [line("carol", true, threeHoursAgo), line("carol", true, threeHoursAgo)]);
  writeFileSync(w.mailbox("erin"), "");
  const bobKeeps = [recentRead1, recentRead2, recentUnread, oldUnread.id, freshRead.id];
  return { ...w, bobKeeps, oldRead: oldRead.map((entry) => entry.id) };
}

const EXPECTED_TEXT = [
  "archived 2 read messages of carol",
  "archived 3 read messages of bob",
  "forgot status of bob (not updated for 50.0 h)",
  "forgot status of dave (window gone)",
  "removed empty mailbox carol",
  "removed empty mailbox erin",
];

/** What a dry run says for what the real run did. */
const WOULD: Record<string, string> = { archived: "archive", forgot: "forget", removed: "remove", purged: "purge" };
const asDryRun = (line: string) => line.replace(/^(\w+)/, (verb) => `would ${WOULD[verb] ?? verb}`);

describe("cleanup", () => {
  test("--dry-run --json reports what the real run then does, and changes no file", async () => {
    const w = await richScenario();
    const before = snapshot(w.repo.mailDir);
    const dry = await am(["cleanup", "--dry-run", "--json"], w.as("alice"));
    expect({ code: dry.code, stderr: dry.stderr }).toEqual({ code: 0, stderr: "" });
    const dryReport = oneJson(dry) as CleanupReport;
    expect(snapshot(w.repo.mailDir)).toEqual(before);

    expect(dryReport.dry_run).toBe(true);
    expect(byName(dryReport.forgotten)).toEqual([
      { name: "bob", reason: "not updated for 50.0 h" },
      { name: "dave", reason: "window gone" },
    ]);
    expect(byName(dryReport.archived)).toEqual([
      { name: "bob", count: 3 },
      { name: "carol", count: 2 },
    ]);
    expect([...dryReport.removed].sort()).toEqual(["carol", "erin"]);

    const real = await am(["cleanup", "--json"], w.as("alice"));
    expect({ code: real.code, stderr: real.stderr }).toEqual({ code: 0, stderr: "" });
    const realReport = oneJson(real) as CleanupReport;
    expect(realReport.dry_run).toBe(false);
    expect({ ...realReport, dry_run: true }).toEqual(dryReport);

    // What the report said is what happened to the files.
    expect(existsSync(w.statusFile("bob"))).toBe(false);
    expect(existsSync(w.statusFile("dave"))).toBe(false);
    expect(existsSync(w.statusFile("alice"))).toBe(true);
    expect((await am(["status"], w.as("alice"))).stdout).toMatch(/^ready since/);
    expect(storedMessages(w.mailbox("bob")).map((m) => m.id)).toEqual(w.bobKeeps);
    expect(existsSync(w.mailbox("carol"))).toBe(false);
    expect(existsSync(w.mailbox("erin"))).toBe(false);

    // Nothing left to do: a second dry run and a second real run agree on that.
    const after = snapshot(w.repo.mailDir);
    const again = oneJson(await am(["cleanup", "--dry-run", "--json"], w.as("alice"))) as CleanupReport;
    const nothing = { forgotten: [], archived: [], removed: [] };
    expect({ forgotten: again.forgotten, archived: again.archived, removed: again.removed }).toEqual(nothing);
    expect((await am(["cleanup"], w.as("alice"))).stdout).toBe("Nothing to clean up\n");
    expect(snapshot(w.repo.mailDir)).toEqual(after);
  });

  test("--dry-run text output says in the same words what the real run then says it did, and changes no file", async () => {
    const w = await richScenario();
    const before = snapshot(w.repo.mailDir);
    const dry = await am(["cleanup", "--dry-run"], w.as("alice"));
    expect({ code: dry.code, stderr: dry.stderr }).toEqual({ code: 0, stderr: "" });
    expect(snapshot(w.repo.mailDir)).toEqual(before);
    const dryLines = dry.stdout.trimEnd().split("\n");
    for (const entry of dryLines) expect(entry.startsWith("would ")).toBe(true);

    const real = await am(["cleanup"], w.as("alice"));
    expect({ code: real.code, stderr: real.stderr }).toEqual({ code: 0, stderr: "" });
    expect(real.stdout.endsWith("\n")).toBe(true);
    const realLines = real.stdout.trimEnd().split("\n");
    expect(realLines.map(asDryRun)).toEqual(dryLines);
    expect([...realLines].sort()).toEqual(EXPECTED_TEXT);
    expect(storedMessages(w.mailbox("bob")).map((m) => m.id)).toEqual(w.bobKeeps);
  });

  test("--stale-hours and --read-hours move the thresholds", async () => {
    const w = await richScenario();
    // 60 h: bob's 50 h old status stays; 200 h: no read message is old enough.
    const report = oneJson(await am(["cleanup", "--stale-hours", "60", "--read-hours", "200", "--json"], w.as("alice"))) as CleanupReport;
    expect(report.forgotten).toEqual([{ name: "dave", reason: "window gone" }]);
    expect(report.archived).toEqual([]);
    expect(report.removed).toEqual(["erin"]);
    expect(existsSync(w.statusFile("bob"))).toBe(true);
    expect(storedMessages(w.mailbox("carol"))).toHaveLength(2);
    // 1 h: the message read half an hour ago stays, the 3 h old ones go.
    const second = oneJson(await am(["cleanup", "--read-hours", "1", "--json"], w.as("alice"))) as CleanupReport;
    expect(byName(second.archived)).toEqual([
      { name: "bob", count: 3 },
      { name: "carol", count: 2 },
    ]);
    expect(storedMessages(w.mailbox("bob")).map((m) => m.id)).toEqual(w.bobKeeps);
    // 0 h: every read message goes; the unread ones stay.
    oneJson(await am(["cleanup", "--read-hours", "0", "--json"], w.as("alice")));
    const left = storedMessages(w.mailbox("bob"));
    expect(left.every((m) => m.read_flag === false)).toBe(true);
    expect(left.map((m) => m.id)).toEqual([w.bobKeeps[2]!, w.bobKeeps[3]!]);
  });

  test("--read-hours 0 archives every read message, whatever clock stamped it; --stale-hours 0 forgets every status", async () => {
    const w = world(["alice", "bob"]);
    // Stamped by clocks ahead of this one (another host, a bridged peer): a message just read, a status just set.
    const ahead = new Date(Date.now() + 60_000);
    const read = line("bob", true, ahead, "read, stamped a minute ahead");
    const unread = line("bob", false, ahead, "unread");
    addLines(w.mailbox("bob"), [read, unread]);
    expect((await am(["status", "ready"], w.as("bob"))).code).toBe(0);
    const status = JSON.parse(readFileSync(w.statusFile("bob"), "utf8")) as Record<string, unknown>;
    writeFileSync(w.statusFile("bob"), JSON.stringify({ ...status, updated_at: ahead.toISOString(), since: ahead.toISOString() }) + "\n");
    // An hour is measured by the stamp: not older than an hour yet, so kept.
    expect((oneJson(await am(["cleanup", "--read-hours", "1", "--json"], w.as("alice"))) as CleanupReport).archived).toEqual([]);
    const report = oneJson(await am(["cleanup", "--read-hours", "0", "--stale-hours", "0", "--json"], w.as("alice"))) as CleanupReport;
    expect(report.archived).toEqual([{ name: "bob", count: 1 }]);
    expect(report.forgotten.map((entry) => entry.name)).toContain("bob");
    expect(storedMessages(w.mailbox("bob")).map((message) => message.id)).toEqual([unread.id]);
  });

  test("never loses an unread message, however old", async () => {
    const w = world(["alice", "bob"]);
    expectSent(await am(["send", "bob", "first"], w.as("alice")));
    const ancient = [
      line("bob", false, new Date(Date.now() - 10_000 * HOUR)),
      line("bob", false, new Date(0)),
      line("bob", false, new Date(Date.now() - 5 * HOUR)),
    ];
    addLines(w.mailbox("bob"), ancient);
    const before = readText(w.mailbox("bob"));
    for (const args of [["cleanup"], ["cleanup", "--read-hours", "0"], ["cleanup", "--read-hours", "0", "--stale-hours", "0"]]) {
      const result = await am(args, w.as("alice"));
      expect(result.code).toBe(0);
    }
    expect(readText(w.mailbox("bob"))).toBe(before);
    const received = await am(["receive", "--json"], w.as("bob"));
    expect(oneJson(received)).toMatchObject({ message: "first" });
  });

  test("a status set in a window that is then killed is forgotten; live windows keep theirs", async () => {
    const w = world(["alice", "bob", "carol"]);
    for (const name of ["alice", "bob", "carol"]) expect((await am(["status", "work"], w.as(name))).code).toBe(0);
    w.server.run(["kill-window", "-t", w.server.agent("carol").windowId]);
    const result = await am(["cleanup"], w.as("alice"));
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "forgot status of carol (window gone)\n" });
    expect(existsSync(w.statusFile("carol"))).toBe(false);
    expect((await am(["status"], w.as("bob"))).stdout).toMatch(/^work since/);
    expect((await am(["cleanup"], w.as("alice"))).stdout).toBe("Nothing to clean up\n");
  });

  test("bad arguments: exit 1, one error line, nothing changed", async () => {
    const w = world(["alice", "bob"]);
    addLines(w.mailbox("bob"), [line("bob", true, new Date(0))]);
    const before = snapshot(w.repo.mailDir);
    for (const args of [["--read-hours", "-1"], ["--stale-hours", "abc"], ["--read-hours"], ["--bogus"], ["extra"]]) {
      expectError(await am(["cleanup", ...args], w.as("alice")), 1);
    }
    expect(snapshot(w.repo.mailDir)).toEqual(before);
  });

  test("outside tmux it still archives old read mail (exit 0)", async () => {
    const w = world(["alice", "bob"]);
    addLines(w.mailbox("bob"), [line("bob", true, new Date(0)), line("bob", false, new Date(0))]);
    const result = await am(["cleanup", "--json"], { env: outsideTmuxEnv(), cwd: w.repo.dir });
    expect(result.code).toBe(0);
    expect((oneJson(result) as CleanupReport).archived).toEqual([{ name: "bob", count: 1 }]);
    expect(storedMessages(w.mailbox("bob"))).toHaveLength(1);
  });

  test("a symlink and a FIFO posing as mailboxes are each reported once and skipped; the rest is cleaned; exit 1 at the end", async () => {
    const w = world(["alice", "carol"]);
    const old = new Date(Date.now() - 3 * HOUR);
    addLines(w.mailbox("carol"), [line("carol", true, old), line("carol", true, old)]);
    addLines(w.mailbox("zed"), [line("zed", true, old), line("zed", false, old, "keep me")]);
    const target = join(w.repo.dir, "outside.jsonl");
    const outside = line("x", true, old).text;
    writeFileSync(target, outside);
    symlinkSync(target, w.mailbox("a-link"));
    expect(Bun.spawnSync(["mkfifo", w.mailbox("b-fifo")]).exitCode).toBe(0);

    const dry = await am(["cleanup", "--dry-run", "--json"], w.as("alice"));
    expect(dry.code).toBe(1);
    const dryReport = oneJson(dry) as CleanupReport & { failed: { name: string; code: string; message: string }[] };
    expect(dryReport.archived).toEqual([
      { name: "carol", count: 2 },
      { name: "zed", count: 1 },
    ]);
    expect(dryReport.failed.map((entry) => [entry.name, entry.code])).toEqual([
      ["a-link", "unsafe_path"],
      ["b-fifo", "unsafe_path"],
    ]);

    const result = await am(["cleanup"], w.as("alice"));
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("archived 2 read messages of carol\narchived 1 read message of zed\nremoved empty mailbox carol\n");
    const errors = result.stderr.trimEnd().split("\n");
    expect(errors.length).toBe(2);
    expect(errors[0]).toMatch(/^error: .*a-link.*symlink.*remove it/);
    expect(errors[1]).toMatch(/^error: .*b-fifo.*FIFO.*remove it/);
    expect(existsSync(w.mailbox("carol"))).toBe(false);
    expect(storedMessages(w.mailbox("zed")).map((m) => m.message)).toEqual(["keep me"]);
    expect(readFileSync(target, "utf8")).toBe(outside);
  });

  /** A cleanup of bob's mailbox, with `lines` old read lines in it to archive, started and not waited for. */
  function longCleanup(w: ReturnType<typeof world>, lines: number) {
    writeOldReadLines(w.mailbox("bob"), "bob", lines);
    const mailbox = w.mailbox("bob");
    const locks = [`${mailbox}.lock`, `${mailbox}.rlock`, `${mailbox}.alock`];
    return { locks, cleanup: start(["cleanup", "--read-hours", "0", "--json"], { ...w.as("alice"), timeoutMs: 120_000 }) };
  }

  test("a send while a cleanup is stopped mid-rewrite, for longer than any lock age: kept, or refused naming it; never lost", async () => {
    const w = world(["alice", "bob"]);
    const { locks, cleanup } = longCleanup(w, 100_000);
    // Stopped holding any of bob's locks, and aged as a 31 s pause (a VM, a suspended laptop) would age them.
    const held = await stopWhileHolding(cleanup.pid, locks, (now) => now.length > 0);
    let sent: Awaited<ReturnType<typeof am>>;
    let heldAfterSend: string[];
    try {
      ageLocks(held, 31_000);
      const env = { ...w.as("alice").env, AGENTMAIL_LOCK_TIMEOUT: "1" };
      sent = await am(["send", "bob", "sent while the cleanup was stopped"], { ...w.as("alice"), env });
      heldAfterSend = heldBy(cleanup.pid, locks);
    } finally {
      process.kill(cleanup.pid, "SIGCONT");
    }
    const done = await cleanup.done;
    expect({ code: done.code, stderr: done.stderr }).toEqual({ code: 0, stderr: "" });
    // A printed id is stored, whatever happened meanwhile.
    const printed = /^([A-Za-z0-9]{8})\n$/.exec(sent.stdout)?.[1];
    const everywhere = [...storedMessages(w.mailbox("bob")), ...storedMessages(join(w.repo.mailDir, ".archive", "bob.jsonl"))];
    if (printed) expect(everywhere.filter((message) => message.id === printed).map((message) => message.read_flag)).toEqual([false]);
    expect(everywhere).toHaveLength(100_000 + (printed ? 1 : 0));
    // A live holder's lock is never broken, whatever its age: a send that needs one of them waits, then is refused.
    expect(heldAfterSend).toEqual(held);
    if (held.includes(`${w.mailbox("bob")}.lock`)) {
      expect({ code: sent.code, stdout: sent.stdout }).toEqual({ code: 1, stdout: "" });
      expect(sent.stderr).toContain(`is held by pid ${cleanup.pid}`);
      expect(sent.stderr).toContain("stopped (SIGSTOP or a suspended job)");
    } else expect(printed).toBeDefined();
  });

  test("a send and a receive while a cleanup is stopped reading its snapshot go through; the cleanup keeps both", async () => {
    const w = world(["alice", "bob"]);
    const first = expectSent(await am(["send", "bob", "first"], w.as("alice")));
    const second = expectSent(await am(["send", "bob", "second"], w.as("alice")));
    const { locks, cleanup } = longCleanup(w, 200_000);
    const archiveLock = `${w.mailbox("bob")}.alock`;
    // Stopped while it holds only its archive lock: reading the mailbox, holding up no send and no receive.
    await stopWhileHolding(cleanup.pid, locks, (held) => held.length === 1 && held[0] === archiveLock);
    let third: string;
    try {
      ageLocks([archiveLock], 31_000);
      third = expectSent(await am(["send", "bob", "third"], w.as("alice")));
      expect(oneJson(await am(["receive", "--json"], w.as("bob")))).toMatchObject({ id: first, message: "first" });
    } finally {
      process.kill(cleanup.pid, "SIGCONT");
    }
    const done = await cleanup.done;
    expect({ code: done.code, stderr: done.stderr }).toEqual({ code: 0, stderr: "" });
    // The message read meanwhile stays read, live or archived (as read) if the snapshot saw it read already; the one
    // sent meanwhile is there.
    const live = storedMessages(w.mailbox("bob")).map((message) => [message.message, message.read_flag]);
    const archived = storedMessages(join(w.repo.mailDir, ".archive", "bob.jsonl")).filter((message) => message.message === "first");
    expect(archived.every((message) => message.read_flag === true)).toBe(true);
    expect(live).toEqual([...(archived.length === 0 ? [["first", true]] : []), ["second", false], ["third", false]]);
    expect(oneJson(await am(["receive", "--json"], w.as("bob")))).toMatchObject({ id: second });
    expect(oneJson(await am(["receive", "--json"], w.as("bob")))).toMatchObject({ id: third });
    expect(oneJson(await am(["receive", "--json"], w.as("bob")))).toBeNull();
  });

  test("concurrency: 20 cleanups while 4 senders send 50 messages each; every id exactly once and unread", async () => {
    const w = world(["bob", "s1", "s2", "s3", "s4"]);
    // Read lines for cleanup to drop, so it really rewrites the mailbox while the senders append.
    expectSent(await am(["send", "bob", "seed"], w.as("s1")));
    expect((await am(["receive"], w.as("bob"))).code).toBe(0);
    const oldRead = Array.from({ length: 300 }, () => line("bob", true, new Date(Date.now() - 10 * HOUR)));
    addLines(w.mailbox("bob"), oldRead);

    const printed: string[] = [];
    const failures: string[] = [];
    const sender = async (name: string) => {
      for (let i = 0; i < 50; i++) {
        const result = await am(["send", "bob", `${name} #${i}`], w.as(name));
        if (result.code === 0 && /^[A-Za-z0-9]{8}\n$/.test(result.stdout)) printed.push(result.stdout.trim());
        else failures.push(`send ${name} #${i}: ${result.code} ${result.stderr}`);
      }
    };
    let archived = 0;
    const cleaner = async () => {
      for (let i = 0; i < 20; i++) {
        const result = await am(["cleanup", "--read-hours", "0", "--json"], w.as("bob"));
        if (result.code !== 0) failures.push(`cleanup #${i}: ${result.code} ${result.stdout} ${result.stderr}`);
        else for (const entry of (JSON.parse(result.stdout) as CleanupReport).archived) archived += entry.count;
        await sleep(40);
      }
    };
    await Promise.all([sender("s1"), sender("s2"), sender("s3"), sender("s4"), cleaner()]);

    expect(failures).toEqual([]);
    expect(printed).toHaveLength(200);
    expect(new Set(printed).size).toBe(200);
    const stored = storedMessages(w.mailbox("bob"));
    const counts = new Map<string, number>();
    for (const message of stored) counts.set(message.id, (counts.get(message.id) ?? 0) + 1);
    for (const id of printed) expect({ id, count: counts.get(id) ?? 0 }).toEqual({ id, count: 1 });
    for (const message of stored.filter((m) => printed.includes(m.id))) expect(message.read_flag).toBe(false);
    // The 300 old read lines and the seed were archived exactly once in total, and nothing else was.
    expect(archived).toBe(301);
    expect(stored).toHaveLength(200);
    const inArchive = storedMessages(join(w.repo.mailDir, ".archive", "bob.jsonl")).map((m) => m.id);
    expect(new Set(inArchive).size).toBe(301);
    expect(inArchive).toHaveLength(301);
    // Nothing left behind by the rewrites: no temp files, no locks.
    const ours = (name: string) => /\.(jsonl|cursor|reads)$/.test(name) || [".agents", ".archive", ".agentmail-store"].includes(name);
    const leftovers = (dir: string) => readdirSync(dir).filter((name) => !ours(name));
    expect(leftovers(w.repo.mailDir)).toEqual([]);
    expect(leftovers(join(w.repo.mailDir, ".archive"))).toEqual([]);
  });

  test("concurrency with a receiver too: cleanup rewrites while messages are appended and marked read; nothing lost or doubled", async () => {
    const w = world(["bob", "s1", "s2", "s3", "s4"]);
    const printed: string[] = [];
    const received: string[] = [];
    const failures: string[] = [];
    let sending = true;
    const sender = async (name: string) => {
      for (let i = 0; i < 50; i++) {
        const result = await am(["send", "bob", `${name} #${i}`], w.as(name));
        if (result.code === 0 && /^[A-Za-z0-9]{8}\n$/.test(result.stdout)) printed.push(result.stdout.trim());
        else failures.push(`send ${name} #${i}: ${result.code} ${result.stderr}`);
      }
    };
    const receiver = async () => {
      while (sending) {
        const result = await am(["receive", "--json"], w.as("bob"));
        if (result.code !== 0) failures.push(`receive: ${result.code} ${result.stdout} ${result.stderr}`);
        else {
          const message = JSON.parse(result.stdout) as { id: string } | null;
          if (message) received.push(message.id);
          else await sleep(10);
        }
      }
    };
    const cleaner = async () => {
      for (let i = 0; i < 20; i++) {
        const result = await am(["cleanup", "--read-hours", "0"], w.as("bob"));
        if (result.code !== 0) failures.push(`cleanup #${i}: ${result.code} ${result.stdout} ${result.stderr}`);
        await sleep(40);
      }
    };
    const senders = Promise.all([sender("s1"), sender("s2"), sender("s3"), sender("s4")]).finally(() => (sending = false));
    await Promise.all([senders, receiver(), cleaner()]);

    expect(failures).toEqual([]);
    expect(new Set(printed).size).toBe(200);
    expect(new Set(received).size).toBe(received.length);
    for (const id of received) expect(printed).toContain(id);
    const stored = storedMessages(w.mailbox("bob"));
    const unread = stored.filter((m) => !m.read_flag).map((m) => m.id);
    expect(new Set(stored.map((m) => m.id)).size).toBe(stored.length);
    // Every printed id was received exactly once or is still unread in the mailbox, never both, never neither.
    const delivered = new Set(received);
    expect(printed.filter((id) => !delivered.has(id) && !unread.includes(id))).toEqual([]);
    expect(unread.filter((id) => delivered.has(id))).toEqual([]);
    expect(received.length).toBeGreaterThan(0);
    expect(received.length + unread.length).toBe(200);
  });
});

describe("cleanup with an archive", () => {
  const { archiveOf, as, mailbox, ok } = richMailWorld();

  test("cleanup archives old read mail instead of deleting it; --purge-days deletes old archived mail; --dry-run shows both", async () => {
    const old = new Date(Date.now() - 10 * 86_400_000).toISOString();
    const line = (id: string, read: boolean) =>
      JSON.stringify({ id, from: "alice", to: "bob", message: id, read_flag: read, created_at: old }) + "\n";
    appendFileSync(mailbox("bob"), line("OldRead1", true) + line("OldUnrd1", false));
    const dry = await ok("alice", ["cleanup", "--dry-run", "--purge-days", "5"]);
    expect(dry).toBe("would archive 1 read message of bob\n");
    expect(await ok("alice", ["cleanup", "--purge-days", "5"])).toBe("archived 1 read message of bob\n");
    expect(storedMessages(archiveOf("bob")).map((m) => m.id)).toEqual(["OldRead1"]);
    expect(storedMessages(mailbox("bob")).map((m) => m.id)).toEqual(["OldUnrd1"]);
    expect(await ok("alice", ["cleanup", "--purge-days", "5", "--dry-run"])).toBe("would purge 1 archived message of bob\n");
    const report = oneJson(await am(["cleanup", "--purge-days", "5", "--json"], as("alice"))) as { purged: unknown; archived: unknown };
    expect(report).toMatchObject({ purged: [{ name: "bob", count: 1 }], archived: [] });
    expect(existsSync(archiveOf("bob"))).toBe(false);
    expect(storedMessages(mailbox("bob")).map((m) => m.id)).toEqual(["OldUnrd1"]);
  });
});
