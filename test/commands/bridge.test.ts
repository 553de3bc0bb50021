/**
 * Bridges end to end against the compiled binary, in a private tmux server: the seeds' example messages cross into
 * agentmail and agents answer through feat124:, roo: and dmail: addresses; two `bridge run`s and a mailman import
 * a stream of files at once, each exactly once; `bridge sync`s SIGKILLed at random lose and duplicate nothing; names
 * with spaces and Unicode. Every wait is a poll with a deadline; nothing asserts on time.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Message } from "../../src/mail/message.ts";
import { feat124Text, fixture, HOSTILE_YAML, hostileText } from "../support/bridges.ts";
import { am, expectError, expectSent, oneJson, shown, start, storedMessages, type Running } from "../support/e2e.ts";
import { tempRepo } from "../support/repo.ts";
import { TmuxServer } from "../support/tmux-server.ts";
import { waitFor } from "../support/workflow.ts";

const AGENTS = ["alice", "bob", "Zoë dev"];

let repo: ReturnType<typeof tempRepo>;
let server: TmuxServer;
const as = (name: string) => ({ env: server.agent(name).env, cwd: repo.dir });
const path = (...parts: string[]) => join(repo.dir, ...parts);
const write = (relative: string, text: string) => {
  mkdirSync(dirname(path(relative)), { recursive: true });
  writeFileSync(path(relative), text);
};
const files = (relative: string) =>
  existsSync(path(relative))
    ? readdirSync(path(relative))
        .filter((name) => !name.startsWith("."))
        .sort()
    : [];

/** Every message in every mailbox of the store. */
function allMessages(): Message[] {
  return readdirSync(repo.mailDir)
    .filter((name) => name.endsWith(".jsonl"))
    .flatMap((name) => storedMessages(join(repo.mailDir, name)));
}

/** How often each imported source was delivered: by its file, or (Roo files share a name) by its Roo id. */
function deliveries(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const message of allMessages()) {
    const via = message.via as { bridge: string; file: string; id?: string } | undefined;
    if (!via) continue;
    const key = via.bridge === "roo" ? `roo:${via.id}` : via.file;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** Removes every trace of earlier tests' traffic, keeping the agents and the bridges. */
function clean(): void {
  for (const dir of [".mail", ".roo", "tool"]) rmSync(path(dir), { recursive: true, force: true });
  for (const sub of ["inbox", "outbox", "archive"]) mkdirSync(path("tool", sub), { recursive: true });
  for (const name of readdirSync(repo.mailDir)) if (name.includes(".jsonl")) rmSync(join(repo.mailDir, name));
  rmSync(join(repo.mailDir, ".bridges", "roo-queue"), { recursive: true, force: true });
}

beforeAll(async () => {
  repo = tempRepo();
  server = TmuxServer.start(AGENTS, repo.dir);
  for (const name of AGENTS) expect((await am(["status", "ready"], as(name))).code).toBe(0);
  mkdirSync(path("tool"));
  expect((await am(["bridge", "add", "feat124"], as("alice"))).stdout).toBe(`feat124 ${path(".mail")}\n`);
  expect((await am(["bridge", "add", "roo"], as("alice"))).code).toBe(0);
  const dmail = await am(["bridge", "add", "dmail", "paintress", "--dir", "tool", "--route", "report=alice", "--to", "bob", "--json"], {
    ...as("alice"),
  });
  expect(oneJson(dmail)).toMatchObject({ name: "paintress", kind: "dmail", routes: { report: "alice" }, to: "bob" });
});

afterAll(() => {
  server?.stop();
  repo?.remove();
});

describe("both ways, with the seeds' own messages", () => {
  test("FEAT-124: fugue's status reaches alice; alice's answer is a FEAT-124 file in the sender's mailbox", async () => {
    clean();
    write(".mail/alice/2024-01-28T15-30-00_worker-bug-069_status.md", fixture("feat124-status.md"));
    const sync = await am(["bridge", "sync"], as("bob"));
    expect(sync.code).toBe(0);
    expect(sync.stdout).toMatch(/^imported feat124 \.mail\/alice\/2024-01-28T15-30-00_worker-bug-069_status\.md -> alice [A-Za-z0-9]{8}\n/);
    const [message] = storedMessages(join(repo.mailDir, "alice.jsonl"));
    const body = fixture("feat124-status.md").split("---\n\n")[1]!.replace(/\n$/, "");
    const headers = "Subject: Status Update\nType: status\nTags: BUG-069, fugue\n";
    const expected = shown("feat124:worker-bug-069", message!.id, body).replace("\n\n", `\n${headers}\n`);
    expect((await am(["receive"], as("alice"))).stdout).toBe(expected);
    expect(files(".mail/alice/read")).toEqual(["2024-01-28T15-30-00_worker-bug-069_status.md"]);

    const id = expectSent(await am(["send", "feat124:worker-bug-069", "Reviewed; merging."], as("alice")));
    const [answer] = files(".mail/worker-bug-069");
    expect(answer).toMatch(/^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d_alice_message\.md$/);
    const written = readFileSync(path(".mail/worker-bug-069", answer!), "utf8");
    expect(written).toMatch(/^---\nfrom: alice\nto: worker-bug-069\ntype: message\ntimestamp: "[^"]+"\n---\n\nReviewed; merging\.\n$/);
    expect(readFileSync(join(repo.mailDir, ".bridges", "sent.jsonl"), "utf8")).toContain(`"id":"${id}"`);

    // A reply to the imported message goes back through the bridge, naming the file it answers.
    const replyId = expectSent(await am(["reply", message!.id, "Thanks, merged."], as("alice")));
    const reply = files(".mail/worker-bug-069").find((file) => file.includes("_response"));
    const replied = readFileSync(path(".mail/worker-bug-069", reply!), "utf8");
    expect(replied).toContain("in_reply_to: 2024-01-28T15-30-00_worker-bug-069_status.md\n");
    expect(replied).toContain("type: response\n");
    expect(replied).toContain("Thanks, merged.");
    expect(readFileSync(join(repo.mailDir, ".bridges", "sent.jsonl"), "utf8")).toContain(`"id":"${replyId}"`);
  });

  test("Roo: the tester's request reaches bob; bob's answers wait their turn in the one-file mailbox", async () => {
    clean();
    write(".roo/mailbox/to-bob.md", fixture("roo-to-tester.md"));
    expect((await am(["bridge", "sync"], as("bob"))).code).toBe(0);
    expect((await am(["receive"], as("bob"))).stdout).toStartWith("From: roo:nestjs-developer\nID: ");
    expect(files(".roo/mailbox")).toEqual([]);

    const first = expectSent(await am(["send", "roo:nestjs-developer", "Tests pass."], as("bob")));
    const second = expectSent(await am(["send", "roo:nestjs-developer", "And the e2e suite too."], as("bob")));
    const target = path(".roo/mailbox/to-nestjs-developer.md");
    const roo = new RegExp(`^---\\nfrom: bob\\ntimestamp: "[^"]+"\\nid: ${first}\\npriority: normal\\n---\\n\\nTests pass\\.\\n$`);
    expect(readFileSync(target, "utf8")).toMatch(roo);
    expect((await am(["bridge", "list"], as("bob"))).stdout).toContain("roo roo");
    expect(oneJson(await am(["bridge", "list", "--json"], as("bob")))).toContainEqual(expect.objectContaining({ kind: "roo", queued: 1 }));
    rmSync(target);
    const flushed = await am(["bridge", "sync"], as("bob"));
    expect(flushed.stdout).toContain(`exported roo .roo/mailbox/to-nestjs-developer.md ${second}\n`);
    expect(readFileSync(target, "utf8")).toContain(`id: ${second}\n`);
  });

  test("D-Mail: paintress's report reaches alice by its route; her specification lands archive-first in its inbox", async () => {
    clean();
    write("tool/archive/report-my-42.md", fixture("dmail-report-my-42.md"));
    write("tool/outbox/report-my-42.md", fixture("dmail-report-my-42.md"));
    expect((await am(["bridge", "sync", "--json"], as("bob"))).stdout).toContain('"name":"paintress","kind":"dmail","imported":1');
    const received = oneJson(await am(["receive", "--json"], as("alice")));
    expect(received).toMatchObject({ from: "dmail:paintress", type: "report", subject: "Expedition #1 completed implement for MY-42" });
    expect(files("tool/outbox")).toEqual([]);

    // A D-Mail kind is a type for a dmail: address (and only there); priority high becomes severity high.
    const feedback = ["send", "dmail:paintress", "-t", "feedback", "-p", "high", "--tag", "MY-42", "Retry the flaky login test."];
    expectSent(await am(feedback, as("alice")));
    const [feedbackFile] = files("tool/inbox");
    expect(readFileSync(path("tool/inbox", feedbackFile!), "utf8")).toMatch(/kind: feedback\n[\s\S]*severity: high\n/);
    expect(expectError(await am(["send", "bob", "-t", "feedback", "x"], as("alice")), 1)).toContain("unknown type 'feedback'");
    rmSync(path("tool/inbox", feedbackFile!));
    rmSync(path("tool/archive", feedbackFile!));

    const id = expectSent(await am(["send", "dmail:paintress", "Fix MY-42: the login loses the session cookie."], as("alice")));
    const name = `specification-${id}.md`;
    expect(files("tool/inbox")).toEqual([name]);
    expect(files("tool/archive")).toEqual(["report-my-42.md", name]);
    expect(readFileSync(path("tool/inbox", name), "utf8")).toBe(readFileSync(path("tool/archive", name), "utf8"));
    const head = `---\nname: specification-${id}\nkind: specification\ndescription: "Fix MY-42: the login loses the session cookie."\n`;
    expect(readFileSync(path("tool/inbox", name), "utf8")).toStartWith(head);
  });

  test("names with spaces and Unicode both ways", async () => {
    clean();
    write(".mail/Zoë dev/2024-01-28T15-30-00_wörker 8_task.md", feat124Text("wörker 8", "Zoë dev", "Bitte prüfen ☕"));
    await am(["bridge", "sync"], as("alice"));
    expect((await am(["receive"], as("Zoë dev"))).stdout).toMatch(
      /^From: feat124:wörker 8\nID: [A-Za-z0-9]{8}\nType: status\n\n> Bitte prüfen ☕\n$/,
    );
    expectSent(await am(["send", "feat124:wörker 8", "Erledigt ✓"], as("Zoë dev")));
    const [answer] = files(".mail/wörker 8");
    expect(answer).toMatch(/_Zoë dev_message\.md$/);
  });

  test("hostile and unknown addresses fail with one line and write nothing", async () => {
    clean();
    expectError(await am(["send", "feat124:../../etc", "x"], as("alice")), 1);
    expectError(await am(["send", "roo:a/b", "x"], as("alice")), 1);
    expect(expectError(await am(["send", "dmail:nobody", "x"], as("alice")), 1)).toContain("no D-Mail endpoint named 'nobody'");
    expect(existsSync(path(".mail"))).toBe(false);
  });
});

describe("hostile input", () => {
  test("frontmatter the YAML library throws on is left with its reason; bridge sync exits 0 and a mailman sweeps on", async () => {
    clean();
    const hostile: Array<[bridge: string, file: string, name: string]> = [
      ["feat124", ".mail/alice/loop.md", "alias-loop"],
      ["feat124", ".mail/bob/bomb.md", "alias-bomb"],
      ["roo", ".roo/mailbox/to-bob.md", "small-alias-bomb"],
      ["paintress", "tool/outbox/unknown-alias.md", "unknown-alias"],
    ];
    for (const [, file, name] of hostile) write(file, hostileText(HOSTILE_YAML[name]!.yaml));
    write(".mail/alice/good.md", feat124Text("w", "alice", "beside the hostile files"));
    const sync = await am(["bridge", "sync"], as("alice"));
    expect(sync).toMatchObject({ code: 0, stderr: "" });
    for (const [bridge, file, name] of hostile) {
      expect(sync.stdout).toContain(`left ${bridge} ${file}: `);
      expect(sync.stdout).toContain(HOSTILE_YAML[name]!.reason);
    }
    expect(storedMessages(join(repo.mailDir, "alice.jsonl")).map((message) => message.message)).toEqual(["beside the hostile files"]);

    const mailman = start(["mailman", "--sweep", "0.3"], { ...as("alice"), timeoutMs: 60_000 });
    try {
      write(".mail/bob/later.md", feat124Text("w", "bob", "written while the mailman runs"));
      await waitFor("the mailman to import .mail/bob/later.md", () => existsSync(join(repo.mailDir, "bob.jsonl")), 60_000, 100);
    } finally {
      process.kill(mailman.pid, "SIGTERM");
    }
    const result = await mailman.done;
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain("failed");
    for (const [, file] of hostile) expect(existsSync(path(file))).toBe(true);
  });

  test("bridge add dmail refuses a recipient no import could reach, in one line, and adds nothing", async () => {
    const refused = await am(["bridge", "add", "dmail", "sightjack", "--dir", "tool", "--to", "feat124:bob"], as("alice"));
    expect(expectError(refused, 1)).toContain("--to feat124:bob: 'feat124:bob' is a bridge address");
    expect((await am(["bridge", "list"], as("alice"))).stdout).not.toContain("sightjack");
  });
});

describe("concurrency and crashes", () => {
  test("two bridge runs and a mailman at once deliver each file exactly once", async () => {
    clean();
    const runners: Running[] = [
      start(["bridge", "run", "--sweep", "0.3"], { ...as("alice"), timeoutMs: 80_000 }),
      start(["bridge", "run", "--sweep", "0.3"], { ...as("bob"), timeoutMs: 80_000 }),
      start(["mailman", "--sweep", "0.3"], { ...as("alice"), timeoutMs: 80_000 }),
    ];
    const expected = new Set<string>();
    try {
      for (let i = 0; i < 90; i++) {
        const agent = AGENTS[i % AGENTS.length]!;
        const name = `.mail/${agent}/2026-01-01T00-00-${String(i).padStart(2, "0")}_w_status.md`;
        write(name, feat124Text("w", agent, `feat124 #${i}`));
        expected.add(name);
        if (i % 3 === 0) {
          const spec = fixture("dmail-report-my-42.md").replace("report-my-42", `spec-${i}`).replace("kind: report", "kind: specification");
          write(`tool/outbox/spec-${i}.md`, spec);
          expected.add(`tool/outbox/spec-${i}.md`);
        }
        if (i % 9 === 0) {
          // A Roo sender writes the next message only once the previous one is gone: one file per recipient.
          await waitFor("the bridges to take .roo/mailbox/to-alice.md", () => !existsSync(path(".roo/mailbox/to-alice.md")));
          write(".roo/mailbox/to-alice.md", `---\nfrom: r\ntimestamp: 2025-01-01T00:00:00Z\nid: roo-${i}\n---\n\nroo #${i}\n`);
          expected.add(`roo:roo-${i}`);
        }
      }
      await waitFor(
        () => `every file delivered (${deliveries().size} of ${expected.size}) and tool/outbox empty (${files("tool/outbox").length} left)`,
        () => deliveries().size === expected.size && files("tool/outbox").length === 0,
        120_000,
        100,
      );
    } finally {
      for (const runner of runners) process.kill(runner.pid, "SIGTERM");
    }
    const results = await Promise.all(runners.map((runner) => runner.done));
    expect(results.map((result) => result.code)).toEqual([0, 0, 0]);
    const counts = deliveries();
    expect([...counts.keys()].sort()).toEqual([...expected].sort());
    expect([...counts.values()].every((count) => count === 1)).toBe(true);
    for (const agent of AGENTS) expect(files(`.mail/${agent}`)).toEqual(["read"]);
    expect(results.map((result) => result.stderr).join("")).not.toContain("failed");
  });

  test("bridge syncs SIGKILLed at random moments lose nothing and duplicate nothing, inbound and outbound", async () => {
    clean();
    const expected = new Set<string>();
    for (let i = 0; i < 240; i++) {
      const agent = AGENTS[i % AGENTS.length]!;
      const [minute, second] = [String(Math.floor(i / 60)).padStart(2, "0"), String(i % 60).padStart(2, "0")];
      const name = `.mail/${agent}/2026-01-01T00-${minute}-${second}_w_status.md`;
      write(name, feat124Text("w", agent, `#${i}`));
      expected.add(name);
    }
    for (let i = 0; i < 60; i++) {
      write(`tool/outbox/r-${i}.md`, fixture("dmail-report-my-42.md").replace("report-my-42", `r-${i}`));
      expected.add(`tool/outbox/r-${i}.md`);
    }
    const sent: string[] = [];
    for (let i = 0; i < 8; i++) sent.push(expectSent(await am(["send", "roo:carol", `roo message ${i}`], as("bob"))));
    const received: string[] = [];
    const takeRoo = () => {
      const target = path(".roo/mailbox/to-carol.md");
      if (!existsSync(target)) return;
      received.push(/\nid: (\S+)\n/.exec(readFileSync(target, "utf8"))![1]!);
      rmSync(target);
    };
    takeRoo();
    // Files younger than 150 ms wait to settle; let them, so the kills land in the middle of imports.
    const newest = path(".mail", AGENTS[0]!);
    const age = () => Date.now() - Bun.file(join(newest, readdirSync(newest).sort().at(-1)!)).lastModified;
    await waitFor("the newest file to be 300 ms old", () => age() > 300);
    let kills = 0;
    let killedMidway = 0;
    for (let round = 0; round < 40 && (deliveries().size < expected.size || received.length < sent.length); round++) {
      const before = deliveries().size;
      const sync = start(["bridge", "sync"], { ...as("alice"), timeoutMs: 60_000 });
      // Every other sync is killed right after its first import lands (so some kills surely cut an import run
      // short, however slow the machine), the others at a random moment.
      if (round % 2 === 0 && before < expected.size) {
        let ended = false;
        void sync.done.then(
          () => (ended = true),
          () => (ended = true),
        );
        await waitFor("the sync to import a file, or end", () => deliveries().size > before || ended, 60_000, 2);
      } else await Bun.sleep(30 + Math.floor(Math.random() * 300));
      sync.kill();
      const result = await sync.done;
      if (result.signal === "SIGKILL") {
        kills++;
        if (deliveries().size > before) killedMidway++;
      }
      takeRoo();
    }
    for (let round = 0; round < 10 && received.length < sent.length; round++) {
      expect((await am(["bridge", "sync"], as("alice"))).code).toBe(0);
      takeRoo();
    }
    expect((await am(["bridge", "sync"], as("alice"))).code).toBe(0);
    // Some syncs were killed after they had imported part of the files: the work was cut short, not skipped.
    expect(killedMidway).toBeGreaterThan(0);
    expect(kills).toBeGreaterThan(killedMidway - 1);
    const counts = deliveries();
    expect([...counts.keys()].sort()).toEqual([...expected].sort());
    expect([...counts.entries()].filter(([, count]) => count !== 1)).toEqual([]);
    expect(received).toEqual(sent);
    expect(files("tool/outbox")).toEqual([]);
    expect(files("tool/archive")).toHaveLength(60);
    for (const agent of AGENTS) expect(files(`.mail/${agent}`)).toEqual(["read"]);
    expect(existsSync(join(repo.mailDir, ".bridges", "ledger.jsonl"))).toBe(false);
  });
});
