/**
 * The claude-team bridge end to end against the compiled binary, in a private tmux server, with fake team
 * directories and processes that read and write them the way Claude Code does (test/support/claude-writer.ts): a
 * storm of 200 sends to the lead while a Claude-style lead drains its inbox, and 200 Claude-style writes to a member
 * while `bridge run` imports them, lose and duplicate nothing, and Claude's writer never times out on agentmail's
 * lock; `bridge sync`s SIGKILLed at random lose and duplicate nothing; a malformed inbox is reported while the others
 * flow. Every wait is a poll with a deadline; nothing asserts on time.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Message } from "../../src/mail/message.ts";
import { claudeEntry, fakeTeam, TEAM, type FakeTeam } from "../support/claude-team.ts";
import { am, expectSent, oneJson, start, storedMessages } from "../support/e2e.ts";
import { tempRepo } from "../support/repo.ts";
import { TmuxServer } from "../support/tmux-server.ts";
import { waitFor } from "../support/workflow.ts";

const WRITER = join(import.meta.dir, "..", "support", "claude-writer.ts");

let repo: ReturnType<typeof tempRepo>;
let server: TmuxServer;
let team: FakeTeam;
const as = (name: string) => ({ env: { ...server.agent(name).env, CLAUDE_CONFIG_DIR: team.configDir }, cwd: repo.dir });
const mailbox = (agent: string): Message[] => storedMessages(join(repo.mailDir, `${agent}.jsonl`));

beforeAll(async () => {
  repo = tempRepo();
  server = TmuxServer.start(["alice", "bob", "lead"], repo.dir);
  team = fakeTeam({ members: [{ name: "codex" }, { name: "bob" }, { name: "helper", backendType: "in-process" }] });
  for (const name of ["alice", "bob"]) expect((await am(["status", "ready"], as(name))).code).toBe(0);
  team.writeSession(process.pid, server.agent("lead").paneId);
  const added = await am(["bridge", "add", "claude-team", "--lead", "lead", "--member", "codex=alice", "--json"], as("alice"));
  expect(oneJson(added)).toMatchObject({ name: TEAM, kind: "claude-team", lead: "lead", members: { codex: "alice" } });
});

afterAll(() => {
  server?.stop();
  repo?.remove();
  team?.remove();
});

/** How many times each body arrived in an agent's mailbox. */
function counts(messages: Message[], prefix: string): Map<string, number> {
  const seen = new Map<string, number>();
  for (const message of messages) if (message.message.startsWith(prefix)) seen.set(message.message, (seen.get(message.message) ?? 0) + 1);
  return seen;
}

describe("storms both ways", () => {
  test("200 sends to the lead while it drains its inbox, and 200 Claude writes to a member while bridge run imports them: once each", async () => {
    const stop = join(team.configDir, "stop-draining");
    const lead = Bun.spawn([process.execPath, WRITER, "drain", team.inbox("team-lead"), stop], { stdout: "pipe", stderr: "pipe" });
    const writer = Bun.spawn([process.execPath, WRITER, "append", team.inbox("codex"), "team-lead", "200", "LEAD-OUT"], {
      stdout: "pipe",
      stderr: "pipe",
    });
    const run = start(["bridge", "run", "--sweep", "1"], { ...as("bob"), timeoutMs: 170_000 });
    const ids: string[] = [];
    const sendFrom = async (worker: number) => {
      for (let n = worker; n < 200; n += 4) {
        const sent = await am(["send", `claude-team:${TEAM}/team-lead`, `IN-${n}`], {
          ...as(worker % 2 ? "alice" : "bob"),
          timeoutMs: 60_000,
        });
        ids.push(expectSent(sent));
        expect(sent.stderr).toBe("");
      }
    };
    try {
      await Promise.all([0, 1, 2, 3].map(sendFrom));
      const wrote = JSON.parse(await new Response(writer.stdout).text());
      expect(wrote.failed).toEqual([]);
      await waitFor(
        () => `200 imports (${counts(mailbox("alice"), "LEAD-OUT").size} came)`,
        () => counts(mailbox("alice"), "LEAD-OUT").size === 200,
        120_000,
        100,
      );
    } finally {
      writeFileSync(stop, "");
      process.kill(run.pid, "SIGTERM");
    }
    const taken: string[] = JSON.parse(await new Response(lead.stdout).text()).taken;
    expect((await run.done).code).toBe(0);
    const inCounts = new Map<string, number>();
    for (const text of taken) inCounts.set(text, (inCounts.get(text) ?? 0) + 1);
    expect([...inCounts.keys()].sort()).toEqual(Array.from({ length: 200 }, (_, n) => `IN-${n}`).sort());
    expect([...inCounts.values()].filter((count) => count !== 1)).toEqual([]);
    expect(new Set(ids).size).toBe(200);
    const outCounts = counts(mailbox("alice"), "LEAD-OUT");
    expect([...outCounts.values()].filter((count) => count !== 1)).toEqual([]);
    expect(team.entries("codex")).toEqual([]);
    expect(team.entries("team-lead")).toEqual([]);
    expect(existsSync(join(repo.mailDir, ".bridges", "ledger.jsonl"))).toBe(false);
  });
});

describe("crashes and bad input", () => {
  test("bridge syncs SIGKILLed at random moments import each of 150 entries once, and empty the inbox", async () => {
    const entries = Array.from({ length: 150 }, (_, n) => claudeEntry("team-lead", `KILL-${n}`));
    team.writeInbox("bob", entries);
    const ledger = join(repo.mailDir, ".bridges", "ledger.jsonl");
    let cutShort = 0;
    for (let round = 0; round < 30 && team.entries("bob").length > 0; round++) {
      const before = mailbox("bob").length;
      const sync = start(["bridge", "sync"], { ...as("alice"), timeoutMs: 60_000 });
      // Every other sync is killed right after its first import lands, the others at a random moment.
      if (round % 2 === 0) {
        let ended = false;
        void sync.done.then(
          () => (ended = true),
          () => (ended = true),
        );
        await waitFor("the sync to import an entry, or end", () => mailbox("bob").length > before || ended, 60_000, 2);
      } else await Bun.sleep(20 + Math.floor(Math.random() * 200));
      sync.kill();
      if ((await sync.done).signal === "SIGKILL" && existsSync(ledger)) cutShort++;
    }
    expect((await am(["bridge", "sync"], as("alice"))).code).toBe(0);
    // Some syncs were killed with imports in flight (the ledger held them): the next finished them.
    expect(cutShort).toBeGreaterThan(0);
    const seen = counts(mailbox("bob"), "KILL-");
    expect(seen.size).toBe(150);
    expect([...seen.values()].filter((count) => count !== 1)).toEqual([]);
    expect(team.entries("bob")).toEqual([]);
    expect(existsSync(join(repo.mailDir, ".bridges", "ledger.jsonl"))).toBe(false);
  });

  test("a malformed inbox is reported by bridge sync (exit 0), never written over, and the other members' mail flows", async () => {
    team.writeInbox("bob", "[{ torn");
    team.writeInbox("codex", [claudeEntry("team-lead", "beside a malformed inbox", "fine")]);
    const sync = await am(["bridge", "sync"], as("alice"));
    expect(sync).toMatchObject({ code: 0, stderr: "" });
    expect(sync.stdout).toContain(`left ${TEAM} ${team.inbox("bob")}: it is not JSON`);
    expect(sync.stdout).toMatch(new RegExp(`imported ${TEAM} \\S+/codex\\.json -> alice [A-Za-z0-9]{8}`));
    expect(sync.stdout).toContain(`${TEAM}: 1 imported, 0 exported, 1 left alone`);
    expect(readFileSync(team.inbox("bob"), "utf8")).toBe("[{ torn");
    expect(mailbox("alice").at(-1)).toMatchObject({ message: "beside a malformed inbox", subject: "fine" });
    const send = await am(["send", `claude-team:${TEAM}/bob`, "into a malformed inbox"], as("alice"));
    expect(send.code).toBe(1);
    expect(send.stderr).toContain("cannot be read as a team inbox");
    expect(readFileSync(team.inbox("bob"), "utf8")).toBe("[{ torn");
  });
});
