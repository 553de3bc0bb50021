/**
 * The store's layout (src/store/local/layout.ts) as doctor and migrate rely on it: every file the bridges and the mailman
 * write is agentmail's (never reported as foreign; never mail, so migrate leaves it), only their locks and breakers may
 * be repaired, and a name agentmail does not write is foreign wherever it lies.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import {
  bridgesDir,
  configLockPath,
  configPath,
  ledgerPath,
  problemsPath,
  rooQueueDir,
  rooQueueLockPath,
  sentLogPath,
  syncLockPath,
} from "../../../../src/bridges/config.ts";
import { inspectStore } from "../../../../src/store/local/inspect.ts";
import { claimsPath } from "../../../../src/store/file/claims-file.ts";
import { CLAIMS_FILE, kept, MAILMAN_FILES, mailEntries, MARKER } from "../../../../src/store/local/layout.ts";
import { withLock } from "../../../../src/store/durable/lock.ts";
import { mailmanDir, mailmanLogPath } from "../../../../src/mailman/files.ts";

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "agentmail-layout-"));
  writeFileSync(join(root, MARKER), "", { mode: 0o600 });
  mkdirSync(bridgesDir(root), { mode: 0o700 });
  mkdirSync(mailmanDir(root), { mode: 0o700 });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const bridgeFiles = () => [configPath(root), ledgerPath(root), sentLogPath(root), problemsPath(root)];
const bridgeLocks = () => [configLockPath(root), syncLockPath(root), rooQueueLockPath(root)];
const mailmanFiles = () => [join(mailmanDir(root), MAILMAN_FILES.pid), join(mailmanDir(root), MAILMAN_FILES.state), mailmanLogPath(root)];
const mailmanLock = () => join(mailmanDir(root), `${MAILMAN_FILES.pid}.lock`);

/** Holds every lock at once, as lock.ts takes them, while `look` runs. */
function holding<T>(locks: string[], look: () => T): Promise<T> {
  const [first, ...rest] = locks;
  return first === undefined ? Promise.resolve(look()) : withLock(first, () => holding(rest, look));
}

describe("the bridges' and the mailman's files", () => {
  test("all of them, their locks held and breakers beside them, are agentmail's: doctor finds nothing to say", async () => {
    for (const path of [...bridgeFiles(), ...mailmanFiles()]) writeFileSync(path, "{}\n", { mode: 0o600 });
    mkdirSync(rooQueueDir(root), { mode: 0o700 });
    mkdirSync(join(rooQueueDir(root), "architect"), { mode: 0o700 });
    writeFileSync(join(rooQueueDir(root), "architect", "whatever Roo left.json"), "");
    const locks = [...bridgeLocks(), mailmanLock()];
    // A breaker's file, as a breaker mid-break leaves it; and an atomic replace under way.
    for (const lock of locks) writeFileSync(`${lock}.break`, "", { mode: 0o600 });
    writeFileSync(join(bridgesDir(root), `.${basename(configPath(root))}.tmp-${process.pid}-abc123`), "", { mode: 0o600 });
    writeFileSync(join(mailmanDir(root), `.${MAILMAN_FILES.state}.tmp-${process.pid}-abc123`), "", { mode: 0o600 });

    expect(await holding(locks, () => inspectStore(root))).toEqual([]);
  });

  test("none of them is mail, so migrate leaves them; doctor --fix may remove only a stale lock, breaker or temp file", () => {
    const names = (paths: string[]) => paths.map((path) => basename(path));
    const bridges = [...names(bridgeFiles()), basename(rooQueueDir(root))];
    const mailman = names(mailmanFiles());
    const bridgeLockNames = names(bridgeLocks());
    for (const [place, list] of [
      ["bridges", bridges],
      ["mailman", mailman],
    ] as const) {
      for (const name of list) {
        expect(kept(place, name)).toMatchObject({ mail: false });
        expect(kept(place, name)?.repair).toBeUndefined();
      }
    }
    // The Roo queue is Roo's: kept whole, its entries not judged.
    expect(kept("bridges", basename(rooQueueDir(root)))).toMatchObject({ shape: "directory" });
    expect(kept("bridges", basename(rooQueueDir(root)))?.place).toBeUndefined();
    for (const name of bridgeLockNames) {
      expect(kept("bridges", name)).toMatchObject({ shape: "lock", mail: false, repair: "stale_lock" });
      expect(kept("bridges", `${name}.break`)).toMatchObject({ shape: "file", mail: false, repair: "stale_break" });
    }
    expect(kept("mailman", basename(mailmanLock()))).toMatchObject({ shape: "lock", mail: false, repair: "stale_lock" });
    expect(kept("mailman", `${basename(mailmanLock())}.break`)).toMatchObject({ mail: false, repair: "stale_break" });
    for (const place of ["bridges", "mailman"] as const)
      expect(kept(place, `.x.tmp-${process.pid}-abc`)).toMatchObject({ mail: false, repair: "stray_temp" });

    // The directories themselves are kept and not mail; the mailboxes beside them are.
    writeFileSync(join(root, "bob.jsonl"), "");
    expect(mailEntries(root)).toEqual(["bob.jsonl"]);
  });

  test("a stale breaker left in either directory is a stale break doctor --fix may remove", () => {
    const breakers = [`${syncLockPath(root)}.break`, `${mailmanLock()}.break`];
    const old = new Date(Date.now() - 60 * 60_000);
    for (const breaker of breakers) {
      writeFileSync(breaker, "", { mode: 0o600 });
      utimesSync(breaker, old, old);
    }
    const issues = inspectStore(root).map((issue) => [issue.kind, issue.path, issue.fixable]);
    expect(issues.sort()).toEqual(breakers.map((breaker) => ["stale_break", breaker, true]).sort());
  });

  test("a name they do not write is foreign there, even one that looks like theirs; doctor says so and removes nothing", () => {
    const foreign = {
      bridges: ["config.json.bak", "ledger.jsonl.lock", "sync.lock.old", "roo-queue.lock.break.1", "pid", "notes"],
      mailman: ["pid.old", "log.1", "state.json.lock", "config.json", "pid.lock.breaks"],
    };
    for (const [place, names] of Object.entries(foreign) as [keyof typeof foreign, string[]][]) {
      for (const name of names) {
        expect(kept(place, name)).toBeNull();
        writeFileSync(join(place === "bridges" ? bridgesDir(root) : mailmanDir(root), name), "", { mode: 0o600 });
      }
    }
    const issues = inspectStore(root);
    expect(issues.every((issue) => issue.kind === "foreign" && !issue.fixable)).toBe(true);
    expect(issues.map((issue) => basename(issue.path)).sort()).toEqual([...foreign.bridges, ...foreign.mailman].sort());
  });
});

describe("the claims document", () => {
  test("it, its held lock and a breaker beside it are agentmail's (doctor says nothing), not mail, and only the lock is repairable", async () => {
    writeFileSync(claimsPath(root), '{"claims":[]}\n', { mode: 0o600 });
    writeFileSync(`${claimsPath(root)}.lock.break`, "", { mode: 0o600 });
    expect(await holding([`${claimsPath(root)}.lock`], () => inspectStore(root))).toEqual([]);
    expect(kept("top", CLAIMS_FILE)).toMatchObject({ shape: "file", mail: false });
    expect(kept("top", CLAIMS_FILE)?.repair).toBeUndefined();
    expect(kept("top", `${CLAIMS_FILE}.lock`)).toMatchObject({ shape: "lock", mail: false, repair: "stale_lock" });
    expect(mailEntries(root)).not.toContain(CLAIMS_FILE);
  });
});
