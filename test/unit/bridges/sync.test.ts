/**
 * Sync passes in process against real directories: the seeds' examples imported into the right mailboxes and moved
 * as their protocols say; malformed, hostile and foreign files left alone with a reason, reported once; imports cut
 * short at every step (the ledger) finished exactly once; the Roo queue; outbound writes that never overwrite.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { addBridge, listBridges, removeBridge, syncOnce } from "../../../src/actions/bridge.ts";
import { configPath, ledgerPath, readBridges, rooQueueDir, syncLockPath } from "../../../src/bridges/config.ts";
import { recordImports, pendingImports, recordDelivered } from "../../../src/bridges/ledger.ts";
import { bridgeSyncer, runBridgeLoop } from "../../../src/bridges/loop.ts";
import { readPeerFile } from "../../../src/bridges/files.ts";
import { readProblems, syncBridges } from "../../../src/bridges/sync.ts";
import { exportMessage } from "../../../src/bridges/send.ts";
import { AgentmailError } from "../../../src/mail/errors.ts";
import { appendMessage } from "../../../src/store/file/mailbox.ts";
import { withLock } from "../../../src/store/durable/lock.ts";
import { updateMemberships } from "../../../src/store/file/memberships.ts";
import { writeStatus } from "../../../src/store/file/status.ts";
import { roleQueue } from "../../../src/store/file/role-mail.ts";
import { storedMessages } from "../../support/e2e.ts";
import { bridgeWorld, feat124Text, fixture, HOSTILE_YAML, hostileText, type BridgeWorld } from "../../support/bridges.ts";
import { waitFor } from "../../support/workflow.ts";
import { FileStore } from "../../../src/store/file/file-store.ts";

let world: BridgeWorld;
beforeEach(async () => {
  world = await bridgeWorld(["alice", "bob", "tester", "Zoë dev"]);
});
afterEach(() => world.remove());

/** A pass that does not wait for files to settle: the tests write them and then age them (see `aged`). */
const pass = () => syncBridges(world.root, new FileStore(world.root), { settleMs: 0 });
const report = (result: Awaited<ReturnType<typeof pass>>, name: string) => result.bridges.find((bridge) => bridge.name === name)!;
const files = (dir: string) => (existsSync(dir) ? readdirSync(dir).sort() : []);

/**
 * Each hostile frontmatter in a FEAT-124 file and a D-Mail, and two of them in Roo files (one per slug): written,
 * and returned by the path the report shows, with the reason each must be left for.
 */
async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  await waitFor(what, check, 30_000, 25);
}

function hostileFiles(): Record<string, { text: string; reason: string }> {
  const files: Record<string, { text: string; reason: string }> = {};
  const add = (path: string, name: string) => {
    const { yaml, reason } = HOSTILE_YAML[name]!;
    files[path] = { text: hostileText(yaml), reason };
    world.write(path, files[path]!.text);
  };
  for (const name of Object.keys(HOSTILE_YAML)) {
    add(`.mail/alice/${name}.md`, name);
    add(`tool/outbox/${name}.md`, name);
  }
  add(".roo/mailbox/to-bob.md", "unknown-alias");
  add(".roo/mailbox/to-Zoë dev.md", "alias-bomb");
  return files;
}

describe("inbound", () => {
  test("a FEAT-124 tag mailbox named like a role goes to the role's queue; a D-Mail route may name a group", async () => {
    await updateMemberships(world.root, "roles", (lists) => lists.set("triage", ["alice", "bob"]));
    await updateMemberships(world.root, "groups", (lists) => lists.set("pair", ["alice", "tester"]));
    await removeBridge(world.place, "paintress");
    await addBridge(world.place, { kind: "dmail", name: "paintress", dir: "tool", to: "@pair" });
    world.write(".mail/triage/2024-01-28T15-30-00_watchdog_alert.md", feat124Text("watchdog", "triage", "disk almost full"));
    world.write(".mail/nobody/2024-01-28T15-30-00_watchdog_alert.md", feat124Text("watchdog", "nobody", "not ours"));
    world.write("tool/outbox/report-my-42.md", fixture("dmail-report-my-42.md"));
    const result = await pass();
    expect(report(result, "feat124").imported.map((entry) => entry.to)).toEqual(["role:triage"]);
    expect(report(result, "feat124").others).toBe(1);
    const queue = roleQueue(world.root, "triage");
    expect(storedMessages(join(queue.root, "role%3Atriage.jsonl"))).toEqual([
      expect.objectContaining({ from: "feat124:watchdog", to: "role:triage", message: "disk almost full" }),
    ]);
    const [forAlice] = world.messages("alice");
    const [forTester] = world.messages("tester");
    expect(forAlice).toMatchObject({ from: "dmail:paintress", to: "alice", type: "report" });
    expect(forTester).toMatchObject({ id: forAlice!.id, to: "tester" });
    // Finishing the import again (a crash before the ledger said done) passes over the copies already there.
    expect((await pass()).bridges.every((bridge) => bridge.imported.length === 0)).toBe(true);
    expect(world.messages("tester")).toHaveLength(1);
  });

  test("the seeds' examples reach their agents once, and each source is moved as its protocol says", async () => {
    world.write(".mail/alice/2024-01-28T15-30-00_worker-bug-069_status.md", fixture("feat124-status.md"));
    world.write(".roo/mailbox/to-tester.md", fixture("roo-to-tester.md"));
    world.write("tool/outbox/report-my-42.md", fixture("dmail-report-my-42.md"));
    const first = await pass();
    const seedFile = "2024-01-28T15-30-00_worker-bug-069_status.md";
    expect(report(first, "feat124").imported.map((entry) => entry.file)).toEqual([`.mail/alice/${seedFile}`]);
    expect(report(first, "roo").imported).toHaveLength(1);
    expect(report(first, "paintress").imported).toHaveLength(1);

    const [status, report42] = world.messages("alice");
    expect(status).toMatchObject({ from: "feat124:worker-bug-069", subject: "Status Update", type: "status", tags: ["BUG-069", "fugue"] });
    expect(report42).toMatchObject({ from: "dmail:paintress", type: "report", tags: ["MY-42"], via: { name: "report-my-42" } });
    const roo = { from: "roo:nestjs-developer", priority: "high", via: expect.objectContaining({ id: "msg-a4b1c9e0" }) };
    expect(world.messages("tester")).toEqual([expect.objectContaining(roo)]);

    expect(files(join(world.mail, "alice"))).toEqual(["read"]);
    expect(files(join(world.mail, "alice", "read"))).toEqual([seedFile]);
    expect(readFileSync(join(world.mail, "alice", "read", seedFile), "utf8")).toBe(fixture("feat124-status.md"));
    expect(files(world.roo)).toEqual([]);
    expect(files(join(world.tool, "outbox"))).toEqual([]);
    expect(files(join(world.tool, "archive"))).toEqual(["report-my-42.md"]);
    expect(existsSync(ledgerPath(world.root))).toBe(false);

    const second = await pass();
    expect(second.bridges.flatMap((bridge) => bridge.imported)).toEqual([]);
    expect(world.messages("alice")).toHaveLength(2);
  });

  test("names with spaces and Unicode: a FEAT-124 mailbox and a Roo slug", async () => {
    world.write(".mail/Zoë dev/2024-01-28T15-30-00_wörker 8_status.md", feat124Text("wörker 8", "Zoë dev", "grüße ☕"));
    world.write(".roo/mailbox/to-Zoë dev.md", "---\nfrom: árchitect\ntimestamp: 2025-07-07T11:15:00Z\nid: m-1\n---\n\nbody ☕\n");
    await pass();
    expect(world.messages("Zoë dev").map((message) => [message.from, message.message])).toEqual([
      ["feat124:wörker 8", "grüße ☕"],
      ["roo:árchitect", "body ☕"],
    ]);
  });

  test("files for names that are not agentmail agents are the peer's own mail: left alone and counted", async () => {
    world.write(".mail/orchestrator/2024-01-28T15-30-00_w_status.md", fixture("feat124-status.md"));
    world.write(".roo/mailbox/to-architect.md", fixture("roo-to-tester.md"));
    const result = await pass();
    expect(report(result, "feat124").others).toBe(1);
    expect(report(result, "roo").others).toBe(1);
    expect(files(join(world.mail, "orchestrator"))).toEqual(["2024-01-28T15-30-00_w_status.md"]);
    expect(files(world.roo)).toEqual(["to-architect.md"]);
  });

  test("malformed files stay where they are with a reason each, never block the others, and are reported once", async () => {
    const bad = {
      ".mail/alice/a-bad-yaml.md": "---\nfrom: [x\n---\nbody\n",
      ".mail/alice/b-no-type.md": "---\nfrom: x\nto: alice\ntimestamp: 2024-01-28T15:30:00Z\n---\nbody\n",
      ".mail/alice/c-no-frontmatter.md": "just text\n",
      ".mail/alice/d-bad-time.md": "---\nfrom: x\nto: alice\ntype: status\ntimestamp: soon\n---\n",
      ".roo/mailbox/to-bob.md": "---\nfrom: x\ntimestamp: 2024-01-28T15:30:00Z\n---\nno id\n",
      "tool/outbox/bad-kind.md": fixture("dmail-report-my-42.md").replace("kind: report", "kind: memo"),
      "tool/outbox/no-version.md": fixture("dmail-report-my-42.md").replace('dmail-schema-version: "1"\n', ""),
      "tool/outbox/extra-key.md": fixture("dmail-report-my-42.md").replace("kind: report", "kind: report\nfrom: paintress"),
      "tool/outbox/escape.md": fixture("dmail-report-my-42.md").replace("name: report-my-42", "name: ../../x"),
    };
    for (const [path, text] of Object.entries(bad)) world.write(path, text);
    world.write(".mail/alice/z-good.md", feat124Text("w", "alice", "good one"));
    world.write("tool/outbox/zz-good.md", fixture("dmail-report-my-42.md"));
    const first = await pass();
    const left = first.bridges.flatMap((bridge) => bridge.left);
    expect(left.map((entry) => entry.file).sort()).toEqual(
      Object.keys(bad)
        .map((path) => path.replace(/^tool/, "tool"))
        .sort(),
    );
    const reasonOf = (file: string) => left.find((entry) => entry.file === file)!.reason;
    expect(reasonOf(".mail/alice/a-bad-yaml.md")).toContain("not valid YAML");
    expect(reasonOf(".mail/alice/b-no-type.md")).toBe("required field 'type' is missing or empty");
    expect(reasonOf(".mail/alice/c-no-frontmatter.md")).toContain("does not start with a '---'");
    expect(reasonOf(".mail/alice/d-bad-time.md")).toContain("not an ISO 8601 time");
    expect(reasonOf(".roo/mailbox/to-bob.md")).toBe("required field 'id' is missing or empty");
    expect(reasonOf("tool/outbox/bad-kind.md")).toContain("kind must be one of");
    expect(reasonOf("tool/outbox/no-version.md")).toBe("D-Mail is missing required field 'dmail-schema-version'");
    expect(reasonOf("tool/outbox/extra-key.md")).toBe("D-Mail field 'from' is not in the v1 schema");
    expect(reasonOf("tool/outbox/escape.md")).toContain("cannot be a file name");
    for (const [path, text] of Object.entries(bad)) expect(readFileSync(join(world.dir, path), "utf8")).toBe(text);
    const bodies = world.messages("alice").map((message) => message.message);
    expect(bodies).toEqual(["good one", expect.stringContaining("Expedition #1 Report")]);
    expect(first.newlyLeft).toHaveLength(Object.keys(bad).length);

    const second = await pass();
    expect(second.bridges.flatMap((bridge) => bridge.left)).toHaveLength(Object.keys(bad).length);
    expect(second.newlyLeft).toEqual([]);
    expect(readProblems(world.root)).toHaveLength(Object.keys(bad).length);

    world.write(".mail/alice/b-no-type.md", feat124Text("x", "alice", "fixed"));
    const third = await pass();
    expect(third.newlyLeft).toEqual([]);
    expect(report(third, "feat124").imported).toHaveLength(1);
    expect(readProblems(world.root)).toHaveLength(Object.keys(bad).length - 1);
  });

  test("frontmatter the YAML library throws on (an unknown alias, a loop, alias bombs) is that file's problem: the others flow", async () => {
    const hostile = hostileFiles();
    world.write(".mail/alice/z-good.md", feat124Text("w", "alice", "good one"));
    world.write(".roo/mailbox/to-tester.md", fixture("roo-to-tester.md"));
    world.write("tool/outbox/zz-good.md", fixture("dmail-report-my-42.md"));
    const first = await pass();
    const left = first.bridges.flatMap((bridge) => bridge.left);
    expect(left.map((entry) => entry.file).sort()).toEqual(Object.keys(hostile).sort());
    for (const entry of left) expect(entry.reason).toContain(hostile[entry.file]!.reason);
    for (const [path, { text }] of Object.entries(hostile)) expect(readFileSync(join(world.dir, path), "utf8")).toBe(text);
    expect(world.messages("alice").map((message) => message.from)).toEqual(["feat124:w", "dmail:paintress"]);
    expect(world.messages("tester").map((message) => message.from)).toEqual(["roo:nestjs-developer"]);
    expect(first.newlyLeft).toHaveLength(Object.keys(hostile).length);

    const second = await pass();
    expect(second.bridges.flatMap((bridge) => bridge.left)).toHaveLength(Object.keys(hostile).length);
    expect(second.newlyLeft).toEqual([]);
  });

  test("bridge run and the mailman's sweeps go on past such files: each is logged once, and later files are imported", async () => {
    const hostile = hostileFiles();
    const leftLines = (lines: string[]) => lines.filter((line) => line.includes("left "));
    const lines: string[] = [];
    const sweep = bridgeSyncer(world.root, new FileStore(world.root), (line) => lines.push(line));
    const logged = (count: number) => async () => {
      await sweep();
      return leftLines(lines).length >= count;
    };
    await until("each hostile file is logged", logged(Object.keys(hostile).length));
    world.write(".mail/bob/later.md", feat124Text("w", "bob", "after the hostile files"));
    const imported = async () => {
      await sweep();
      return world.messages("bob").length > 0;
    };
    await until("a file written after them is imported", imported);
    for (let i = 0; i < 3; i++) await sweep();
    expect(lines.filter((line) => line.includes("sync failed"))).toEqual([]);
    const files = leftLines(lines).map((line) => /^bridges: left \S+ (.*?): /.exec(line)?.[1]);
    expect(files.sort()).toEqual(Object.keys(hostile).sort());

    const stop = new AbortController();
    const runLines: string[] = [];
    const running = runBridgeLoop({
      root: world.root,
      store: new FileStore(world.root),
      sweepMs: 100,
      log: (line) => runLines.push(line),
      signal: stop.signal,
    });
    world.write(".mail/bob/while-running.md", feat124Text("w", "bob", "while bridge run runs"));
    try {
      await until("bridge run imports a file written while it runs", () => world.messages("bob").length === 2);
    } finally {
      stop.abort();
      await running;
    }
    expect(runLines.filter((line) => line.includes("sync failed"))).toEqual([]);
  });

  test("links and oversized or non-UTF-8 files are never followed or imported", async () => {
    const secret = world.write("secret.md", feat124Text("x", "alice", "secret"));
    mkdirSync(join(world.mail, "alice"), { recursive: true });
    symlinkSync(secret, join(world.mail, "alice", "link.md"));
    mkdirSync(join(world.dir, "elsewhere"));
    world.write("elsewhere/x.md", feat124Text("x", "bob", "through a linked dir"));
    symlinkSync(join(world.dir, "elsewhere"), join(world.mail, "bob"));
    world.write(".mail/alice/big.md", feat124Text("x", "alice", "x".repeat(400 * 1024)));
    const latin1 = Buffer.concat([Buffer.from(feat124Text("x", "alice", "")), Buffer.from([0xe9, 0xff])]);
    writeFileSync(join(world.mail, "alice", "latin1.md"), latin1);
    const result = await pass();
    const reasons = Object.fromEntries(report(result, "feat124").left.map((entry) => [entry.file, entry.reason]));
    expect(reasons[".mail/alice/link.md"]).toContain("symlink");
    expect(reasons[".mail/bob/"]).toContain("symlink");
    expect(reasons[".mail/alice/big.md"]).toContain("over the");
    expect(reasons[".mail/alice/latin1.md"]).toBe("it is not UTF-8 text");
    expect(world.messages("alice")).toEqual([]);
    expect(world.messages("bob")).toEqual([]);
    expect(lstatSync(join(world.mail, "alice", "link.md")).isSymbolicLink()).toBe(true);
    expect(existsSync(secret)).toBe(true);
  });

  test("a file still being written waits; a one-shot pass waits for it to settle and imports it", async () => {
    world.write(".mail/alice/fresh.md", feat124Text("x", "alice", "fresh"));
    const skipping = await syncBridges(world.root, new FileStore(world.root), { settleMs: 60_000, settleWaitMs: 0 });
    expect(skipping.deferred).toBe(1);
    expect(world.messages("alice")).toEqual([]);
    const waiting = await syncBridges(world.root, new FileStore(world.root), { settleMs: 100 });
    expect(waiting.deferred).toBe(0);
    expect(world.messages("alice")).toHaveLength(1);
  });

  test("D-Mail routing: a kind's route, else --to; a kind with neither is left with the reason; a route must be a name", async () => {
    await removeBridge(world.place, "paintress");
    await addBridge(world.place, { kind: "dmail", name: "paintress", dir: "tool", routes: ["report=bob"] });
    world.write("tool/outbox/a-report.md", fixture("dmail-report-my-42.md"));
    const spec = fixture("dmail-report-my-42.md").replace("kind: report", "kind: specification").replace("report-my-42", "spec-1");
    world.write("tool/outbox/b-spec.md", spec);
    const result = await pass();
    expect(world.messages("bob").map((message) => message.type)).toEqual(["report"]);
    expect(report(result, "paintress").left[0]!.reason).toContain("no route for D-Mail kind 'specification'");
    await removeBridge(world.place, "paintress");
    await expect(addBridge(world.place, { kind: "dmail", name: "paintress", dir: "tool", to: "role:" })).rejects.toThrow(
      "needs a role's name",
    );
  });

  test("a D-Mail for a recipient an import cannot reach stays in the outbox, reported with what to do, until it can", async () => {
    // Recipients `bridge add` refuses, as an older agentmail or a hand edit left them in the configuration.
    const config = JSON.parse(readFileSync(configPath(world.root), "utf8")) as { bridges: Array<Record<string, unknown>> };
    const routes = { report: "feat124:bob", specification: "alice,bob", feedback: "../x", convergence: "@all" };
    Object.assign(config.bridges.find((bridge) => bridge.name === "paintress")!, { routes, to: "carol" });
    writeFileSync(configPath(world.root), JSON.stringify(config));
    const dmail = (kind: string) =>
      world.write(
        `tool/outbox/${kind}-1.md`,
        fixture("dmail-report-my-42.md").replace("kind: report", `kind: ${kind}`).replace("report-my-42", `${kind}-1`),
      );
    for (const kind of [...Object.keys(routes), "design-feedback"]) dmail(kind);
    const before = await new FileStore(world.root).mailboxes();

    const first = await pass();
    const reasons = Object.fromEntries(report(first, "paintress").left.map((entry) => [entry.file, entry.reason]));
    expect(reasons["tool/outbox/report-1.md"]).toContain("--route report=feat124:bob: 'feat124:bob' is a bridge address");
    expect(reasons["tool/outbox/specification-1.md"]).toContain("'alice,bob' is a list");
    expect(reasons["tool/outbox/feedback-1.md"]).toContain("no agent of this store is named '../x'");
    expect(reasons["tool/outbox/convergence-1.md"]).toContain("@all means the windows of one tmux session");
    expect(reasons["tool/outbox/design-feedback-1.md"]).toContain("--to carol: no agent of this store is named 'carol'");
    for (const reason of Object.values(reasons)) {
      expect(reason).toStartWith("not delivered, left in the outbox: ");
      expect(reason).toContain("agentmail bridge remove paintress, then bridge add dmail paintress");
    }
    expect(Object.keys(reasons)).toHaveLength(5);
    expect(files(join(world.tool, "outbox"))).toHaveLength(5);
    expect(files(join(world.tool, "archive"))).toEqual([]);
    expect(await new FileStore(world.root).mailboxes()).toEqual(before);
    expect(first.newlyLeft).toHaveLength(5);

    // carol registers: her D-Mail goes; the others stay, not reported again.
    writeStatus(world.root, { name: "carol", status: "ready", pane: "%9" });
    const second = await pass();
    expect(report(second, "paintress").imported.map((entry) => [entry.file, entry.to])).toEqual([
      ["tool/outbox/design-feedback-1.md", "carol"],
    ]);
    expect(files(join(world.tool, "archive"))).toEqual(["design-feedback-1.md"]);
    expect(report(second, "paintress").left).toHaveLength(4);
    expect(second.newlyLeft).toEqual([]);
  });

  test("a D-Mail whose archive copy the sender already wrote just leaves the outbox; a different one gets the next name", async () => {
    world.write("tool/archive/report-my-42.md", fixture("dmail-report-my-42.md"));
    world.write("tool/outbox/report-my-42.md", fixture("dmail-report-my-42.md"));
    world.write("tool/archive/other.md", "an older, different file\n");
    world.write("tool/outbox/other.md", fixture("dmail-report-my-42.md").replace("report-my-42", "other"));
    await pass();
    expect(files(join(world.tool, "outbox"))).toEqual([]);
    expect(files(join(world.tool, "archive"))).toEqual(["other.2.md", "other.md", "report-my-42.md"]);
    expect(readFileSync(join(world.tool, "archive", "other.md"), "utf8")).toBe("an older, different file\n");
    expect(world.messages("alice")).toHaveLength(2);
  });
});

describe("an import cut short is finished exactly once (the ledger)", () => {
  const TIME = "2024-01-28T15:30:00.000Z";

  /** Records the file in the ledger as a pass does just before appending, and returns the id it was given. */
  function recorded(path: string, to: string, file: string): string {
    const peer = readPeerFile(path, 1 << 20)!;
    const id = "Crash001";
    const { identity, sha256 } = peer;
    recordImports(world.root, [{ op: "import", id, bridge: "feat124", kind: "feat124", path, file, to, identity, sha256, at: "" }]);
    return id;
  }

  test("killed after recording, before appending: the next pass delivers it once, with the recorded id", async () => {
    const path = world.write(".mail/alice/m.md", feat124Text("w", "alice", "once"));
    const id = recorded(path, "alice", ".mail/alice/m.md");
    await pass();
    expect(world.messages("alice").map((message) => [message.id, message.message])).toEqual([[id, "once"]]);
    expect(files(join(world.mail, "alice", "read"))).toEqual(["m.md"]);
    expect(existsSync(ledgerPath(world.root))).toBe(false);
  });

  test("killed after appending, before marking it delivered: found in the mailbox, not delivered again", async () => {
    const path = world.write(".mail/alice/m.md", feat124Text("w", "alice", "once"));
    const id = recorded(path, "alice", ".mail/alice/m.md");
    await appendMessage(world.root, { id, from: "feat124:w", to: "alice", message: "once", read_flag: false, created_at: TIME });
    await pass();
    expect(world.messages("alice").map((message) => message.id)).toEqual([id]);
    expect(files(join(world.mail, "alice"))).toEqual(["read"]);
  });

  test("killed after marking it delivered, before the move: moved, not delivered again", async () => {
    const path = world.write(".mail/alice/m.md", feat124Text("w", "alice", "once"));
    const id = recorded(path, "alice", ".mail/alice/m.md");
    recordDelivered(world.root, [id]);
    await pass();
    expect(world.messages("alice")).toEqual([]);
    expect(files(join(world.mail, "alice", "read"))).toEqual(["m.md"]);
    expect(pendingImports(world.root)).toEqual([]);
  });

  test("killed half-way through the move (linked into read/, not yet unlinked): finished, nothing twice", async () => {
    const path = world.write(".mail/alice/m.md", feat124Text("w", "alice", "once"));
    const id = recorded(path, "alice", ".mail/alice/m.md");
    recordDelivered(world.root, [id]);
    mkdirSync(join(world.mail, "alice", "read"));
    Bun.spawnSync(["ln", path, join(world.mail, "alice", "read", "m.md")]);
    await pass();
    expect(files(join(world.mail, "alice"))).toEqual(["read"]);
    expect(files(join(world.mail, "alice", "read"))).toEqual(["m.md"]);
    expect(world.messages("alice")).toEqual([]);
  });

  test("a file rewritten after it was recorded is a new message: imported as such, the old entry closed", async () => {
    const path = world.write(".mail/alice/m.md", feat124Text("w", "alice", "first"));
    const id = recorded(path, "alice", ".mail/alice/m.md");
    await appendMessage(world.root, { id, from: "feat124:w", to: "alice", message: "first", read_flag: false, created_at: TIME });
    world.write(".mail/alice/m.md", feat124Text("w", "alice", "second, rewritten in place"));
    utimesSync(path, new Date(Date.now() + 5000), new Date(Date.now() + 5000));
    await pass();
    expect(world.messages("alice").map((message) => message.message)).toEqual(["first", "second, rewritten in place"]);
    expect(pendingImports(world.root)).toEqual([]);
  });

  test("a torn last ledger line (a pass killed mid-write) is ended before the next entry", async () => {
    mkdirSync(join(world.root, ".bridges"), { recursive: true });
    writeFileSync(ledgerPath(world.root), '{"op":"import","id":"Torn');
    const path = world.write(".mail/alice/m.md", feat124Text("w", "alice", "after a torn line"));
    recorded(path, "alice", ".mail/alice/m.md");
    expect(pendingImports(world.root).map((entry) => entry.id)).toEqual(["Crash001"]);
    await pass();
    expect(world.messages("alice")).toHaveLength(1);
  });
});

describe("outbound", () => {
  const send = (address: string, body: string, extra: Partial<Parameters<typeof exportMessage>[0]> = {}) =>
    exportMessage({ root: world.root, store: new FileStore(world.root), from: "alice", address, body, ...extra });

  test("FEAT-124: one file per message in the seed's naming; the same second twice gets a later-sorting name", async () => {
    const now = new Date("2026-11-22T04:22:48.000Z");
    const fields = { type: "task", priority: "high", tags: ["BUG-1"], needs_response: true as const };
    const first = await send("feat124:worker-7", "one", { now, fields });
    const second = await send("feat124:worker-7", "two", { now, fields: { type: "task" } });
    expect(first.file).toBe(".mail/worker-7/2026-11-22T04-22-48_alice_task.md");
    expect(second.file).toBe(".mail/worker-7/2026-11-22T04-22-48_alice_task_0002.md");
    const text = readFileSync(join(world.mail, "worker-7", "2026-11-22T04-22-48_alice_task.md"), "utf8");
    expect(text).toBe(
      '---\nfrom: alice\nto: worker-7\ntype: task\ntimestamp: "2026-11-22T04:22:48Z"\n' +
        "needs_response: true\npriority: high\ntags:\n  - BUG-1\n---\n\none\n",
    );
    expect(files(join(world.mail, "worker-7"))).toEqual(["2026-11-22T04-22-48_alice_task.md", "2026-11-22T04-22-48_alice_task_0002.md"]);
  });

  test("FEAT-124: a reply names the file of the message it answers; a peer's reply to our file is threaded to our id", async () => {
    world.write(".mail/alice/2024-01-28T15-30-00_worker-bug-069_status.md", fixture("feat124-status.md"));
    await pass();
    const [imported] = world.messages("alice");
    const reply = await send("feat124:worker-bug-069", "thanks", { fields: { in_reply_to: imported!.id, thread_id: imported!.id } });
    const replyText = readFileSync(join(world.dir, reply.file), "utf8");
    expect(replyText).toContain("in_reply_to: 2024-01-28T15-30-00_worker-bug-069_status.md\n");
    const replyFile = reply.file.split("/").pop();
    const answer = feat124Text("worker-bug-069", "alice", "you are welcome").replace(
      "type: status",
      `type: response\nin_reply_to: ${replyFile}`,
    );
    world.write(".mail/alice/2024-01-28T16-00-00_worker-bug-069_response.md", answer);
    await pass();
    expect(world.messages("alice")[1]).toMatchObject({ in_reply_to: reply.record.id, type: "response" });
  });

  test("a hostile name never leaves the bridge directory; a mailbox that is a symlink is refused", async () => {
    for (const address of ["feat124:../x", "feat124:a/b", "feat124:..", "roo:../x", "feat124:.hidden", "roo:a\nb"]) {
      await expect(send(address, "x")).rejects.toThrow(AgentmailError);
    }
    mkdirSync(world.mail, { recursive: true });
    symlinkSync(world.tool, join(world.mail, "evil"));
    await expect(send("feat124:evil", "x")).rejects.toThrow("symlink");
    expect(files(join(world.tool, "inbox"))).toEqual([]);
    await expect(send("dmail:nobody", "x")).rejects.toThrow("no D-Mail endpoint named 'nobody'");
  });

  test("D-Mail: archive first, then inbox, the same valid D-Mail; a taken name gets the next one", async () => {
    const fields = { type: "implementation-feedback", priority: "urgent", tags: ["MY-42", "auth"] };
    const sent = await send("dmail:paintress", "Fix MY-42 in the auth module.", { fields });
    const name = `implementation-feedback-${sent.record.id}`;
    expect(sent.file).toBe(`tool/inbox/${name}.md`);
    const archived = readFileSync(join(world.tool, "archive", `${name}.md`), "utf8");
    expect(readFileSync(join(world.tool, "inbox", `${name}.md`), "utf8")).toBe(archived);
    const head = [
      `name: ${name}`,
      "kind: implementation-feedback",
      "description: Fix MY-42 in the auth module.",
      "issues:",
      "  - MY-42",
      "severity: high\n",
    ];
    expect(archived).toContain(head.join("\n"));

    expect(archived).toContain('dmail-schema-version: "1"\n');
    writeFileSync(join(world.tool, "archive", "specification-Fixed001.md"), "taken\n");
    const again = await exportMessage({
      root: world.root,
      store: new FileStore(world.root),
      from: "alice",
      address: "dmail:paintress",
      body: "x",
      fields: {},
    });
    expect(again.file).toMatch(/^tool\/inbox\/specification-[A-Za-z0-9]{8}\.md$/);
  });

  test("Roo: the first message is written, the next ones queue in order and go out as the recipient deletes each", async () => {
    const first = await send("roo:architect", "first");
    const second = await send("roo:architect", "second");
    const third = await send("roo:architect", "third");
    expect([first.queued, second.queued, third.queued]).toEqual([false, true, true]);
    const target = join(world.roo, "to-architect.md");
    expect(readFileSync(target, "utf8")).toContain(`id: ${first.record.id}\n`);
    expect((await listBridges(world.place)).find((bridge) => bridge.kind === "roo")!.queued).toBe(2);

    const waiting = await pass();
    expect(report(waiting, "roo")).toMatchObject({ exported: [], queued: 2 });
    expect(readFileSync(target, "utf8")).toContain(`id: ${first.record.id}\n`);

    rmSync(target);
    const next = await pass();
    expect(report(next, "roo").exported).toEqual([{ file: ".roo/mailbox/to-architect.md", id: second.record.id }]);
    expect(readFileSync(target, "utf8")).toContain("\nsecond\n");
    rmSync(target);
    const fourth = await send("roo:architect", "fourth");
    expect(fourth.queued).toBe(true);
    expect(readFileSync(target, "utf8")).toContain("\nthird\n");
    rmSync(target);
    await pass();
    expect(readFileSync(target, "utf8")).toContain("\nfourth\n");
    expect(files(join(rooQueueDir(world.root), "architect"))).toEqual([]);
  });

  test("Roo: a flush killed after writing the file and before dropping the queue entry does not write it twice", async () => {
    await send("roo:architect", "first");
    const second = await send("roo:architect", "second");
    const target = join(world.roo, "to-architect.md");
    rmSync(target);
    const [entry] = files(join(rooQueueDir(world.root), "architect"));
    writeFileSync(target, readFileSync(join(rooQueueDir(world.root), "architect", entry!), "utf8"));
    const result = await pass();
    expect(report(result, "roo")).toMatchObject({ exported: [], queued: 0 });
    expect(readFileSync(target, "utf8")).toContain(`id: ${second.record.id}\n`);
  });

  test("without a bridge, a bridge address says how to add one", async () => {
    await removeBridge(world.place, "roo");
    await expect(send("roo:x", "y")).rejects.toThrow("agentmail bridge add roo");
  });
});

describe("configuration", () => {
  test("add, list and remove; defaults at the top; a second add with the same settings changes nothing", async () => {
    const bridges = await listBridges(world.place);
    expect(bridges.map((bridge) => [bridge.name, bridge.kind, bridge.label])).toEqual([
      ["feat124", "feat124", ".mail"],
      ["roo", "roo", ".roo/mailbox"],
      ["paintress", "dmail", "tool"],
    ]);
    expect(bridges[0]!.dir).toBe(world.mail);
    await addBridge(world.place, { kind: "feat124" });
    expect(readBridges(world.root)).toHaveLength(3);
    await expect(addBridge(world.place, { kind: "feat124", dir: "elsewhere" })).rejects.toThrow("remove it first");
    expect((await removeBridge(world.place, "feat124")).name).toBe("feat124");
    await expect(removeBridge(world.place, "feat124")).rejects.toThrow("no bridge named 'feat124'");
  });

  test("bad requests are refused with what to do", async () => {
    const refused = async (request: Parameters<typeof addBridge>[1], text: string) =>
      expect(addBridge(world.place, request)).rejects.toThrow(text);
    await refused({ kind: "smtp" }, "unknown bridge kind");
    await refused({ kind: "dmail" }, "missing endpoint name");
    await refused({ kind: "dmail", name: "x y" }, "invalid endpoint name");
    await refused({ kind: "dmail", name: "roo", dir: "tool", to: "a" }, "names the roo bridge");
    await refused({ kind: "dmail", name: "p2" }, "missing --dir");
    await refused({ kind: "dmail", name: "p2", dir: "nowhere", to: "a" }, "no directory");
    await refused({ kind: "dmail", name: "p2", dir: "tool" }, "say where the endpoint's D-Mails go");
    await refused({ kind: "dmail", name: "p2", dir: "tool", routes: ["report"] }, "--route takes KIND=RECIPIENT");
    await refused({ kind: "dmail", name: "p2", dir: "tool", routes: ["memo=a"] }, "unknown D-Mail kind");
    // One recipient an import can reach: an agent of the store, @GROUP or role:ROLE with members.
    const to = (recipient: string) => ({ kind: "dmail", name: "p2", dir: "tool", to: recipient });
    await refused(to("alice,bob"), "--to alice,bob: 'alice,bob' is a list; give one recipient");
    await refused(to("feat124:bob"), "'feat124:bob' is a bridge address");
    await refused(to("../x"), "no agent of this store is named '../x'");
    await refused(to("alcie"), "no agent of this store is named 'alcie' (did you mean 'alice'?)");
    await refused(to("@all"), "@all means the windows of one tmux session");
    await refused(to("@pair"), "no group 'pair' with members; create it: agentmail group add pair AGENT…");
    await refused(to("role:triage"), "role 'triage' has no members; an agent joins it with: agentmail join triage");
    await refused(to("-x"), "cannot be an agent's name: it starts with '-'");
    await refused({ ...to("alice"), routes: ["report=bob", "feedback=nobody"] }, "--route feedback=nobody: no agent");
    expect(readBridges(world.root).map((bridge) => bridge.name)).toEqual(["feat124", "roo", "paintress"]);
    await refused({ kind: "feat124", name: "x" }, "takes no name");
    await refused({ kind: "roo", to: "a" }, "--route and --to are for dmail");
    writeFileSync(join(world.dir, "plain-file"), "");
    await refused({ kind: "roo", dir: "plain-file" }, "not a directory");
  });

  test("a configuration file that does not parse is an error saying how to recover", async () => {
    writeFileSync(configPath(world.root), "{ not json");
    await expect(syncOnce(world.place)).rejects.toThrow("is not valid JSON");
    writeFileSync(configPath(world.root), '{"bridges": [{"name": 1}]}');
    await expect(syncOnce(world.place)).rejects.toThrow("does not hold a list of bridges");
  });
});

describe("passes at once and the long-running syncs", () => {
  test("a pass that may not wait finds the lock held and says so", async () => {
    await withLock(syncLockPath(world.root), async () => {
      const error = await syncBridges(world.root, new FileStore(world.root), { lockTimeoutMs: 0 }).catch((thrown) => thrown);
      expect(error).toBeInstanceOf(AgentmailError);
      expect((error as AgentmailError).code).toBe("locked");
    });
  });

  test("the mailman's hook does nothing without bridges, imports with them, and logs a failure once", async () => {
    const lines: string[] = [];
    const empty = join(world.dir, "empty-store");
    mkdirSync(empty);
    await bridgeSyncer(empty, new FileStore(empty), (line) => lines.push(line))();
    expect(lines).toEqual([]);
    const sync = bridgeSyncer(world.root, new FileStore(world.root), (line) => lines.push(line));
    world.write(".mail/alice/m.md", feat124Text("w", "alice", "via the mailman"));
    // The file settles (150 ms without a change) and a later sweep imports it.
    await waitFor(
      "a sweep to import .mail/alice/m.md",
      async () => {
        await sync();
        return world.messages("alice").length > 0;
      },
      30_000,
      25,
    );
    expect(world.messages("alice")).toHaveLength(1);
    expect(lines.some((line) => line.startsWith("bridges: imported feat124 .mail/alice/m.md -> alice "))).toBe(true);
    writeFileSync(configPath(world.root), "{ broken");
    lines.length = 0;
    await sync();
    await sync();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("bridges: sync failed:");
  });

  test("bridge run: a file written while it runs is imported; an abort stops it", async () => {
    const stop = new AbortController();
    const lines: string[] = [];
    const running = runBridgeLoop({
      root: world.root,
      store: new FileStore(world.root),
      sweepMs: 200,
      log: (line) => lines.push(line),
      signal: stop.signal,
    });
    world.write(".mail/bob/m.md", feat124Text("w", "bob", "while running"));
    world.write(".roo/mailbox/to-alice.md", "---\nfrom: r\ntimestamp: 2025-01-01T00:00:00Z\nid: r-1\n---\n\nroo while running\n");
    await until("bridge run imports both files", () => world.messages("bob").length > 0 && world.messages("alice").length > 0);
    stop.abort();
    const totals = await running;
    expect(world.messages("bob")).toHaveLength(1);
    expect(world.messages("alice")).toHaveLength(1);
    expect(totals.imported).toBe(2);
    expect(lines[0]).toBe(`syncing the bridges of ${world.root}`);
  });
});
