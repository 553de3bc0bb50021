/**
 * The claude-team bridge's guards end to end, against the compiled binary in a private tmux server with fake team
 * directories (test/support/claude-team.ts): two members whose inbox is one file (Claude names `x.y`'s inbox
 * `x-y.json`, the inbox of agentmail's `x-y`) never have Claude's mail taken by an import, and such a pair is never
 * made by `bridge join`, `--member` or a send; a symlinked `inboxes/` is never written through; a lock directory
 * stamped in the future does not hold every send off until then.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, renameSync, rmSync, symlinkSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Message } from "../../src/mail/message.ts";
import { claudeEntry, fakeTeam, TEAM, type FakeTeam } from "../support/claude-team.ts";
import { am, expectError, expectSent, storedMessages } from "../support/e2e.ts";
import { tempRepo } from "../support/repo.ts";
import { TmuxServer } from "../support/tmux-server.ts";

let server: TmuxServer;
let repo: ReturnType<typeof tempRepo>;
let team: FakeTeam;
let scratch: string;

const as = (name: string) => ({ env: { ...server.agent(name).env, CLAUDE_CONFIG_DIR: team.configDir }, cwd: repo.dir });
const mailbox = (agent: string): Message[] => storedMessages(join(repo.mailDir, `${agent}.jsonl`));

beforeAll(() => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-team-guards-")));
  server = TmuxServer.start(["alice", "x-y"], scratch);
});

afterAll(() => {
  server?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

beforeEach(() => {
  repo = tempRepo();
});

afterEach(() => {
  repo.remove();
  team?.remove();
});

/** A team whose members are `members` (agentmail's unless a backend is given), bridged from this repository. */
async function bridged(members: { name: string; backendType?: string }[], add: string[] = []): Promise<void> {
  team = fakeTeam({ members });
  for (const name of ["alice", "x-y"]) expect((await am(["status", "ready"], as(name))).code).toBe(0);
  const added = await am(["bridge", "add", "claude-team", TEAM, ...add], as("alice"));
  expect({ code: added.code, stderr: added.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
}

describe("two members, one inbox file", () => {
  test("bridge sync leaves Claude's x.y's mail in x-y.json, which agentmail's x-y also names, and says why", async () => {
    // Claude spawned its teammate x.y after agentmail's x-y had joined: one file, x-y.json, for both.
    await bridged([{ name: "x-y" }, { name: "x.y", backendType: "in-process" }, { name: "codex" }], ["--member", "codex=alice"]);
    const forTeammate = claudeEntry("team-lead", "for Claude's teammate x.y", "task");
    team.writeInbox("x.y", [forTeammate]);
    team.writeInbox("codex", [claudeEntry("team-lead", "for codex", "fine")]);
    const sync = await am(["bridge", "sync"], as("alice"));
    expect(sync).toMatchObject({ code: 0, stderr: "" });
    expect(sync.stdout).toContain(
      `left ${TEAM} ${team.inbox("x-y")}: not imported for 'x-y': its inbox, inboxes/x-y.json, is member 'x.y' (one of Claude Code's)'s too`,
    );
    expect(sync.stdout).toContain(`${TEAM}: 1 imported, 0 exported, 1 left alone`);
    expect(team.entries("x.y")).toEqual([forTeammate]);
    expect(mailbox("x-y")).toEqual([]);
    expect(mailbox("alice").map((message) => message.message)).toEqual(["for codex"]);
    // doctor names it too, from the last sync's list.
    const doctor = await am(["doctor"], as("alice"));
    expect(doctor.stdout).toContain(`note bridges: ${TEAM} ${team.inbox("x-y")}: not imported for 'x-y'`);
  });

  test("bridge join as x-y is refused while Claude's x.y is a member; so are --member x-y=AGENT and a send to agentmail's x-y", async () => {
    await bridged([{ name: "x.y", backendType: "in-process" }]);
    const join = expectError(await am(["bridge", "join", `claude-team:${TEAM}`], as("x-y")), 1);
    expect(join).toBe(
      `error: cannot join ${TEAM} as 'x-y': its inbox, inboxes/x-y.json, is member 'x.y' (one of Claude Code's)'s too ` +
        "(Claude Code names an inbox file after the member, with every character but letters, digits, '_' and '-' made '-', " +
        "and a file system may ignore case); join with another --as NAME\n",
    );
    expect(team.config().members.map((member: { name: string }) => member.name)).toEqual(["team-lead", "x.y"]);
    const mapped = expectError(await am(["bridge", "add", "claude-team", TEAM, "--member", "X-Y=alice"], as("alice")), 1);
    expect(mapped).toStartWith("error: --member X-Y=alice: its inbox, inboxes/X-Y.json, is member 'x.y' (one of Claude Code's)'s too");
    // Another tool's member x-y beside Claude's x.y: a send to it would reach x.y.
    const config = team.config();
    config.members.push({ ...config.members[1], agentId: `x-y@${TEAM}`, name: "x-y", backendType: "other-tool" });
    team.writeConfig(config);
    const send = expectError(await am(["send", `claude-team:${TEAM}/x-y`, "meant for x-y"], as("alice")), 1);
    expect(send).toContain(`cannot write to member 'x-y' of ${TEAM}: its inbox, inboxes/x-y.json, is member 'x.y'`);
    expect(send).toContain("nothing was sent");
    expect(team.entries("x-y")).toEqual([]);
    // To Claude's x.y itself it goes, and stays Claude's.
    expectSent(await am(["send", `claude-team:${TEAM}/x.y`, "meant for x.y"], as("alice")));
    expect(team.entries("x.y").map((entry: { text: string }) => entry.text)).toEqual(["meant for x.y"]);
  });
});

describe("the team's files", () => {
  test("a symlinked inboxes/ is never written through: a send is refused, and a sync imports nothing from it", async () => {
    await bridged([{ name: "codex" }], ["--member", "codex=alice"]);
    const elsewhere = join(scratch, "elsewhere");
    mkdirSync(elsewhere, { recursive: true });
    const inboxes = join(team.dir, "inboxes");
    renameSync(inboxes, join(elsewhere, "real-inboxes"));
    symlinkSync(join(elsewhere, "real-inboxes"), inboxes);
    const send = expectError(await am(["send", `claude-team:${TEAM}/codex`, "through the link"], as("alice")), 1);
    expect(send).toContain(`${inboxes} is a symlink; agentmail never writes through one in a team directory`);
    expect(readdirSync(join(elsewhere, "real-inboxes"))).toEqual([]);
    expect(mailbox("alice")).toEqual([]);
    team.writeInbox("codex", [claudeEntry("team-lead", "behind the link", "x")]);
    const sync = await am(["bridge", "sync"], as("alice"));
    expect(sync.stdout).toContain(`${inboxes} is a symlink`);
    expect(mailbox("alice")).toEqual([]);
    expect(team.entries("codex").map((entry: { text: string }) => entry.text)).toEqual(["behind the link"]);
    rmSync(elsewhere, { recursive: true, force: true });
  });

  test("a lock directory stamped an hour ahead is stale: a send takes it at once instead of failing 'locked'", async () => {
    await bridged([{ name: "codex" }]);
    team.writeInbox("codex", []);
    const lock = `${team.inbox("codex")}.lock`;
    mkdirSync(lock);
    const later = new Date(Date.now() + 3_600_000);
    utimesSync(lock, later, later);
    expectSent(await am(["send", `claude-team:${TEAM}/codex`, "past a lock from the future"], as("alice")));
    expect(team.entries("codex").map((entry: { text: string }) => entry.text)).toEqual(["past a lock from the future"]);
    expect(existsSync(lock)).toBe(false);
  });
});
