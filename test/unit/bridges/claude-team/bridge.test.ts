/**
 * The claude-team bridge in process, against fake team directories: `bridge add` by name, by the only running lead
 * and by --dir; sync passes importing what the team writes to agentmail's members exactly once (through the ledger,
 * across passes cut short and inboxes that stay locked) and never touching the lead's or Claude's teammates'
 * inboxes; malformed inboxes and entries reported while the others flow; a changed format or a team that is gone
 * stopping the team's bridge with a message; and sends to members and to the lead, polling or not.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addBridge, listBridges } from "../../../../src/actions/bridge.ts";
import { entryKey, newEntry, type InboxEntry } from "../../../../src/bridges/claude-team/inbox.ts";
import { lockDirOf } from "../../../../src/bridges/claude-team/lock.ts";
import { entryToRecord } from "../../../../src/bridges/claude-team/mapping.ts";
import { readBridges } from "../../../../src/bridges/config.ts";
import { pendingImports, recordImports, sentFiles } from "../../../../src/bridges/ledger.ts";
import { runBridgeLoop } from "../../../../src/bridges/loop.ts";
import { exportMessage } from "../../../../src/bridges/send.ts";
import { syncBridges } from "../../../../src/bridges/sync.ts";
import type { Message } from "../../../../src/mail/message.ts";
import { FileStore } from "../../../../src/store/file/file-store.ts";
import { ensureRoot } from "../../../../src/store/paths.ts";
import { writeStatus } from "../../../../src/store/file/status.ts";
import { storedMessages } from "../../../support/e2e.ts";
import { claudeEntry, fakeTeam, rejection, TEAM, type FakeTeam } from "../../../support/claude-team.ts";
import { runInProcess } from "../../../support/in-process.ts";
import { TmuxServer } from "../../../support/tmux-server.ts";
import { waitFor } from "../../../support/workflow.ts";

let dir: string;
let root: string;
let team: FakeTeam;
let place: { cwd: string; env: Record<string, string> };

const AGENTS = ["alice", "bob", "helper", "lead"];

beforeEach(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-team-bridge-")));
  root = ensureRoot(join(dir, "store"));
  for (const agent of AGENTS) writeStatus(root, { name: agent, status: "ready", pane: "%1" });
  team = fakeTeam({
    configDir: join(dir, "claude"),
    members: [
      { name: "codex" },
      { name: "bob" },
      { name: "gem", backendType: "other-tool" },
      { name: "helper", backendType: "in-process" },
    ],
  });
  place = { cwd: dir, env: { AGENTMAIL_DIR: root, CLAUDE_CONFIG_DIR: team.configDir, HOME: dir } };
  await addBridge(place, { kind: "claude-team", name: TEAM, members: ["codex=alice"] });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const store = () => new FileStore(root);
const pass = () => syncBridges(root, store(), { settleMs: 0 });
const mailbox = (agent: string): Message[] => storedMessages(join(root, `${agent}.jsonl`));
const bodies = (agent: string) => mailbox(agent).map((message) => message.message);
const teamReport = (result: Awaited<ReturnType<typeof pass>>) => result.bridges.find((bridge) => bridge.name === TEAM)!;
const INBOXES = "~/claude/teams/session-1a2b3c4d/inboxes";

describe("bridge add claude-team", () => {
  test("by name: the team's directory under $CLAUDE_CONFIG_DIR, shown under ~, with its member mappings", () => {
    expect(readBridges(root)).toEqual([
      { name: TEAM, kind: "claude-team", dir: team.dir, label: "~/claude/teams/session-1a2b3c4d", members: { codex: "alice" } },
    ]);
  });

  test("found as the only team whose lead runs; several are an error naming them; none is an error saying where it looked", async () => {
    const other = fakeTeam({ configDir: team.configDir, sessionId: "9f8e7d6c-0000-4000-8000-000000000000" });
    await expect(addBridge(place, { kind: "claude-team" })).rejects.toThrow(
      `no running Claude Code session has a team in ${team.configDir}`,
    );
    team.writeSession(process.pid, "%3", "2.1.400");
    const warnings: string[] = [];
    const added = await addBridge(place, { kind: "claude-team", warn: (warning) => void warnings.push(warning) });
    expect(added.name).toBe(TEAM);
    expect(warnings[0]).toContain("the lead runs Claude Code 2.1.400; the bridge was checked against 2.1.197 to 2.1.332");
    expect(warnings[1]).toContain("no tmux window is known for the lead");
    // The same team added again keeps its members.
    expect(readBridges(root)[0]!.members).toEqual({ codex: "alice" });
    const sleeper = Bun.spawn(["sleep", "60"]);
    try {
      other.writeSession(sleeper.pid);
      await expect(addBridge(place, { kind: "claude-team" })).rejects.toThrow("several Claude Code sessions run with teams: ");
    } finally {
      sleeper.kill();
    }
  });

  test("--dir, and the errors: no team there, a name that is not a team's, a --member that cannot take mail", async () => {
    const byDir = await addBridge(place, { kind: "claude-team", dir: team.dir });
    expect(byDir).toMatchObject({ name: TEAM, dir: team.dir });
    await expect(addBridge(place, { kind: "claude-team", name: "session-00000000" })).rejects.toThrow("no team session-00000000 in");
    await expect(addBridge(place, { kind: "claude-team", name: "My Team" })).rejects.toThrow("'My Team' is not a Claude Code team's name");
    await expect(addBridge(place, { kind: "claude-team", name: TEAM, members: ["codex=bobb"] })).rejects.toThrow(
      "--member codex=bobb: no agent of this store is named 'bobb' (did you mean 'bob'?)",
    );
    await expect(addBridge(place, { kind: "claude-team", name: TEAM, members: ["codex"] })).rejects.toThrow("--member takes NAME=AGENT");
    await expect(addBridge(place, { kind: "claude-team", name: TEAM, members: ["team-lead=bob"] })).rejects.toThrow("for itself");
    await expect(addBridge(place, { kind: "claude-team", name: TEAM, to: "bob" })).rejects.toThrow("--route and --to are for dmail");
    await expect(addBridge(place, { kind: "feat124", lead: "x" })).rejects.toThrow("--lead and --member are for claude-team bridges");
    await expect(addBridge(place, { kind: "claude-team", name: TEAM, lead: "a:b" })).rejects.toThrow(
      "--lead 'a:b' cannot be an agent's name",
    );
    expect((await listBridges(place)).map((bridge) => bridge.name)).toEqual([TEAM]);
  });
});

describe("importing", () => {
  test("mail for agentmail's members arrives once and leaves the inbox; the lead's, Claude's teammates' and others' stay", async () => {
    const toCodex = claudeEntry("team-lead", "LEAD-1: please review PR 12", "review request");
    const toBob = claudeEntry("team-lead", "LEAD-2: and you, bob");
    const forLead = claudeEntry("codex", "for the lead");
    const forHelper = claudeEntry("team-lead", "for Claude's own helper");
    const forGem = claudeEntry("team-lead", "for another tool's member");
    team.writeInbox("codex", [toCodex, { ...claudeEntry("team-lead", "seen"), read: true }]);
    team.writeInbox("bob", [toBob]);
    team.writeInbox("team-lead", [forLead]);
    team.writeInbox("helper", [forHelper]);
    team.writeInbox("gem", [forGem]);
    const result = teamReport(await pass());
    expect(result.imported.map(({ file, to }) => [file, to])).toEqual([
      [`${INBOXES}/codex.json`, "alice"],
      [`${INBOXES}/bob.json`, "bob"],
    ]);
    expect({ left: result.left, others: result.others }).toEqual({ left: [], others: 1 });
    const [message] = mailbox("alice");
    expect(message).toMatchObject({
      from: "claude-team:session-1a2b3c4d/team-lead",
      to: "alice",
      message: "LEAD-1: please review PR 12",
      subject: "review request",
      via: { bridge: "claude-team", team: TEAM, file: `${INBOXES}/codex.json`, id: toCodex.msg_id },
    });
    expect(bodies("bob")).toEqual(["LEAD-2: and you, bob"]);
    expect(team.entries("codex")).toEqual([]);
    expect(team.entries("bob")).toEqual([]);
    for (const [member, entry] of [
      ["team-lead", forLead],
      ["helper", forHelper],
      ["gem", forGem],
    ] as const) {
      expect(team.entries(member)).toEqual([entry]);
    }
    expect(bodies("helper")).toEqual([]);
    // A second pass finds nothing new: nothing twice.
    expect(teamReport(await pass()).imported).toEqual([]);
    expect(mailbox("alice").length + mailbox("bob").length).toBe(2);
    expect(existsSync(join(root, ".bridges", "ledger.jsonl"))).toBe(false);
  });

  test("a malformed inbox is reported and never written; an entry Claude would drop stays, reported; the others flow", async () => {
    team.writeInbox("bob", "{ not json");
    const good = claudeEntry("team-lead", "still delivered");
    const bad = { from: "team-lead", text: 42, timestamp: "t" };
    team.writeInbox("codex", [bad, good]);
    const result = teamReport(await pass());
    expect(result.imported.map((entry) => entry.to)).toEqual(["alice"]);
    expect(result.left).toEqual([
      {
        bridge: TEAM,
        file: `${INBOXES}/bob.json`,
        reason: expect.stringMatching(
          /^it is not JSON .*; agentmail does not write over it \(Claude Code would, on its next write to it\)/,
        ),
      },
      {
        bridge: TEAM,
        file: expect.stringMatching(/codex\.json entry [0-9a-f]{12}$/),
        reason: "Claude Code would drop this entry (its 'text' is not a string); it stays in the inbox",
      },
    ]);
    expect(team.entries("codex")).toEqual([bad]);
    expect(readFileSync(team.inbox("bob"), "utf8")).toBe("{ not json");
    expect(bodies("alice")).toEqual(["still delivered"]);
  });

  test("an entry in a changed format stops the team's bridge: nothing is imported from any of its inboxes", async () => {
    team.writeInbox("bob", [claudeEntry("team-lead", "for bob")]);
    team.writeInbox("codex", [{ ...claudeEntry("team-lead", "new"), msgV: 2 }]);
    const result = teamReport(await pass());
    expect(result.imported).toEqual([]);
    expect(result.left).toEqual([
      {
        bridge: TEAM,
        file: expect.stringContaining(`${INBOXES}/codex.json `),
        reason: expect.stringContaining("msgV is 2, not 1. Claude Code has changed its team format: agentmail knows msgV 1"),
      },
    ]);
    expect(team.entries("bob").length).toBe(1);
  });

  test("a config.json in a changed format, and a team that is gone, are reported with what to do", async () => {
    const config = team.config();
    team.writeConfig({ ...config, leadAgentId: 7 });
    expect(teamReport(await pass()).left).toEqual([
      {
        bridge: TEAM,
        file: "~/claude/teams/session-1a2b3c4d/config.json",
        reason: expect.stringContaining("it has no string 'leadAgentId'. Claude Code has changed its team format"),
      },
    ]);
    rmSync(team.dir, { recursive: true });
    expect(teamReport(await pass()).left).toEqual([
      {
        bridge: TEAM,
        file: "~/claude/teams/session-1a2b3c4d",
        reason: expect.stringContaining(
          `the team is gone: its lead exited, which deletes the team and its inboxes; remove this bridge (agentmail bridge remove ${TEAM})`,
        ),
      },
    ]);
  });

  test("protocol frames arrive as typed messages", async () => {
    const frame = JSON.stringify({
      type: "shutdown_request",
      requestId: "shutdown-1@codex",
      from: "team-lead",
      reason: "done",
      timestamp: "t",
    });
    team.writeInbox("codex", [claudeEntry("team-lead", frame)]);
    await pass();
    expect(mailbox("alice")[0]).toMatchObject({
      message: frame,
      subject: "shutdown requested: done",
      type: "question",
      needs_response: true,
    });
  });

  test("a pass cut short after the ledger is finished by the next: delivered once, then settled", async () => {
    const entry = claudeEntry("team-lead", "cut short");
    team.writeInbox("codex", [entry]);
    const record = entryToRecord(entry as InboxEntry, { id: "Crash001", to: "alice", team: TEAM, file: "x", now: new Date() });
    const path = team.inbox("codex");
    const pending = [
      {
        op: "import" as const,
        id: "Crash001",
        bridge: TEAM,
        kind: "claude-team" as const,
        path,
        file: "x",
        to: "alice",
        key: entryKey(entry as InboxEntry),
        record,
        at: "",
      },
    ];
    recordImports(root, pending);
    const result = teamReport(await pass());
    expect(result.imported).toEqual([{ file: "x", to: "alice", id: "Crash001" }]);
    expect(mailbox("alice").map((message) => message.id)).toEqual(["Crash001"]);
    expect(team.entries("codex")).toEqual([]);
    expect(pendingImports(root)).toEqual([]);
    // Cut short after the append: the next pass sees the id in the mailbox and does not append it again.
    team.writeInbox("codex", [entry]);
    recordImports(root, pending);
    await pass();
    expect(mailbox("alice").map((message) => message.id)).toEqual(["Crash001"]);
    expect(team.entries("codex")).toEqual([]);
  });

  test("an inbox locked past every retry keeps its imported entry in the ledger: reported, never imported twice, settled later", async () => {
    const entry = claudeEntry("team-lead", "locked out");
    team.writeInbox("codex", [entry]);
    mkdirSync(lockDirOf(team.inbox("codex")));
    // The pass tries on Claude's own terms (~0.65 s) and leaves it to a later pass.
    const first = teamReport(await pass());
    expect(first.imported.map((item) => item.to)).toEqual(["alice"]);
    expect(first.left).toEqual([
      { bridge: TEAM, file: `${INBOXES}/codex.json`, reason: expect.stringContaining("but not yet removed from the inbox") },
    ]);
    expect(team.entries("codex")).toEqual([entry]);
    expect(pendingImports(root).map((pending) => pending.id)).toEqual([mailbox("alice")[0]!.id]);
    // Still locked: the next pass cannot settle it either, and does not import it again.
    const again = teamReport(await pass());
    expect(again.imported).toEqual([]);
    expect(bodies("alice")).toEqual(["locked out"]);
    rmdirSync(lockDirOf(team.inbox("codex")));
    const second = teamReport(await pass());
    expect({ imported: second.imported, left: second.left }).toEqual({ imported: [], left: [] });
    expect(bodies("alice")).toEqual(["locked out"]);
    expect(team.entries("codex")).toEqual([]);
    expect(pendingImports(root)).toEqual([]);
  });

  test("bridge run imports an entry as soon as it is written to a member's inbox", async () => {
    const stop = new AbortController();
    const lines: string[] = [];
    team.writeInbox("codex", [claudeEntry("team-lead", "before running")]);
    const running = runBridgeLoop({ root, store: store(), sweepMs: 60_000, log: (line) => lines.push(line), signal: stop.signal });
    try {
      // The first pass has run (and emptied the inbox): what comes next can only arrive through the watch, not the
      // sweep, which is a minute away.
      await waitFor("bridge run's first pass", () => bodies("alice").length === 1 && team.entries("codex").length === 0, 30_000, 10);
      team.writeInbox("codex", [claudeEntry("team-lead", "while running")]);
      await waitFor("bridge run to import the entry", () => bodies("alice").length === 2, 30_000, 20);
    } finally {
      stop.abort();
      await running;
    }
    expect(lines.some((line) => line.startsWith(`imported ${TEAM} ${INBOXES}/codex.json -> alice `))).toBe(true);
  });
});

describe("sending", () => {
  const send = (address: string, body: string, extra: { from?: string; subject?: string } = {}) => {
    const warnings: string[] = [];
    const fields = extra.subject === undefined ? {} : { subject: extra.subject };
    const sent = exportMessage({
      root,
      store: store(),
      from: extra.from ?? "alice",
      address,
      body,
      fields,
      warn: (w) => void warnings.push(w),
    });
    return sent.then((result) => ({ ...result, warnings }));
  };

  test("to a member: Claude's entry in its inbox, durably, the subject as summary; the id maps to the msg_id", async () => {
    const sent = await send(`claude-team:${TEAM}/codex`, "please review", { subject: "review" });
    expect(sent.file).toBe(`${INBOXES}/codex.json`);
    expect(sent.warnings).toEqual([]);
    const [entry] = team.entries("codex");
    expect(entry).toMatchObject({ from: "alice", text: "please review", summary: "review", msgV: 1, type: "message", read: false });
    expect(sentFiles(root, TEAM).get(entry.msg_id)).toBe(sent.record.id);
  });

  test("a member the team does not list is refused, with the members and a did-you-mean; no inbox is made", async () => {
    const error = await rejection(send(`claude-team:${TEAM}/Codex`, "x"));
    expect(error.code).toBe("unknown_recipient");
    expect(error.message).toContain(
      "team session-1a2b3c4d has no member 'Codex' (did you mean 'codex'?); its members are team-lead, codex, bob, gem, helper",
    );
    expect(existsSync(team.inbox("Codex"))).toBe(false);
    expect((await rejection(send(`claude-team:${TEAM}`, "x"))).message).toContain("a team address is claude-team:TEAM/MEMBER");
    expect((await rejection(send("claude-team:session-00000000/codex", "x"))).message).toContain(
      `no Claude Code team 'session-00000000' is bridged (the bridged teams are ${TEAM})`,
    );
    expect((await rejection(send(`claude-team:${TEAM}/codex`, "x", { from: "user" }))).code).toBe("invalid_name");
  });

  test("to the lead while it polls (it has a Claude teammate): into its inbox, nothing to warn about", async () => {
    const sent = await send(`claude-team:${TEAM}/team-lead`, "hello lead");
    expect(sent.warnings).toEqual([]);
    expect(team.entries("team-lead").map((entry: any) => entry.text)).toEqual(["hello lead"]);
  });

  test("to a lead that does not poll: its window's agentmail mailbox when known, else its inbox with a warning; a lead that is gone: refused", async () => {
    const config = team.config();
    team.writeConfig({
      ...config,
      members: config.members.filter((member: any) => member.backendType !== "in-process" || member.name === "team-lead"),
    });
    const waiting = await send(`claude-team:${TEAM}/team-lead`, "waits in the inbox");
    expect(waiting.warnings).toEqual([
      expect.stringContaining(
        "written to the team inbox of team-lead of session-1a2b3c4d, but its lead reads its team inbox only while it has a Claude teammate of its own",
      ),
    ]);
    expect(team.entries("team-lead").map((entry: any) => entry.text)).toEqual(["waits in the inbox"]);
    await addBridge(place, { kind: "claude-team", name: TEAM, lead: "lead" });
    const rerouted = await send(`claude-team:${TEAM}/team-lead`, "to the window");
    expect(rerouted.warnings).toEqual([expect.stringContaining("delivered to the agentmail mailbox of its window 'lead' instead")]);
    expect(rerouted.file).toBe("lead");
    expect(mailbox("lead")).toEqual([
      expect.objectContaining({ id: rerouted.record.id, from: "alice", to: "lead", message: "to the window" }),
    ]);
    expect(team.entries("team-lead").length).toBe(1);
    const gone = Bun.spawn(["true"]);
    await gone.exited;
    team.writeConfig({ ...team.config(), leadProcess: { pid: gone.pid } });
    const dead = await send(`claude-team:${TEAM}/team-lead`, "lead gone");
    expect(dead.warnings).toEqual([expect.stringContaining(`its lead is not running (pid ${gone.pid})`)]);
    await addBridge(place, { kind: "claude-team", name: TEAM });
    const bridges = readBridges(root);
    expect(bridges[0]!.lead).toBe("lead");
  });

  test("a lead whose inbox holds old unread mail is not polling; a lead that is gone with no window known: refused", async () => {
    team.writeInbox("team-lead", [{ ...claudeEntry("codex", "old"), timestamp: new Date(Date.now() - 60_000).toISOString() }]);
    const sent = await send(`claude-team:${TEAM}/team-lead`, "behind old mail");
    expect(sent.warnings).toEqual([expect.stringContaining("its lead has left messages unread in its team inbox for over 5 s")]);
    const gone = Bun.spawn(["true"]);
    await gone.exited;
    team.writeConfig({ ...team.config(), leadProcess: { pid: gone.pid } });
    const error = await rejection(send(`claude-team:${TEAM}/team-lead`, "nobody reads it"));
    expect(error.message).toContain("will never read it: its lead is not running");
    expect(error.message).toContain("nothing was sent");
    expect(team.entries("team-lead").length).toBe(2);
  });

  test("a team in a changed format, or gone, takes nothing", async () => {
    team.writeConfig({ ...team.config(), members: "?" });
    expect((await rejection(send(`claude-team:${TEAM}/codex`, "x"))).message).toContain("Claude Code has changed its team format");
    rmSync(team.dir, { recursive: true });
    expect((await rejection(send(`claude-team:${TEAM}/codex`, "x"))).message).toContain(`team ${TEAM} is gone`);
    expect(existsSync(team.dir)).toBe(false);
  });
});

test("newEntry is Claude's shape", () => {
  const entry = newEntry("a", "b", undefined, new Date(0));
  expect(entry).toEqual({
    from: "a",
    text: "b",
    timestamp: "1970-01-01T00:00:00.000Z",
    msgV: 1,
    msg_id: expect.any(String),
    type: "message",
    read: false,
  });
});

describe("the commands, from panes of a private tmux server", () => {
  let server: TmuxServer;
  beforeAll(() => {
    server = TmuxServer.start(["alice", "lead", "codexwin"], "/tmp");
  });
  afterAll(() => server.stop());
  const run = (window: string, argv: string[]) => runInProcess(argv, { cwd: dir, env: { ...server.agent(window).env, ...place.env } });

  test("add --lead finds the team of the lead's window; join and leave; list; send and reply through the team", async () => {
    team.writeSession(process.pid, server.agent("lead").paneId);
    const added = await run("alice", ["bridge", "add", "claude-team", "--lead", "lead", "--json"]);
    expect(added).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(added.stdout)).toMatchObject({ name: TEAM, kind: "claude-team", lead: "lead", members: { codex: "alice" } });
    expect(await run("alice", ["bridge", "add", "claude-team", "--lead", "nowhere"])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("no tmux window is named 'nowhere'"),
    });
    // Found from the session file without --lead: the window is looked up from the pane.
    expect((await run("alice", ["bridge", "add", "claude-team"])).code).toBe(0);
    // A lead on a Claude Code the bridge was not checked against: added, with a warning on stderr.
    team.writeSession(process.pid, server.agent("lead").paneId, "2.1.400");
    expect(await run("alice", ["bridge", "add", "claude-team"])).toMatchObject({
      code: 0,
      stderr: expect.stringContaining("the lead runs Claude Code 2.1.400"),
    });
    team.writeSession(process.pid, server.agent("lead").paneId);

    const joined = await run("codexwin", ["bridge", "join", `claude-team:${TEAM}`, "--as", "codex2"]);
    expect(joined).toEqual({ code: 0, stdout: `joined ${TEAM} as codex2\n`, stderr: "" });
    expect(team.config().members.at(-1)).toMatchObject({
      name: "codex2",
      backendType: "agentmail",
      tmuxPaneId: server.agent("codexwin").paneId,
    });
    expect((await run("codexwin", ["bridge", "join", `claude-team:${TEAM}`, "--as", "codex2"])).stdout).toBe(
      `already in ${TEAM} as codex2\n`,
    );
    expect((await run("codexwin", ["bridge", "join", `claude-team:${TEAM}`])).stdout).toBe(`joined ${TEAM} as codexwin\n`);
    expect(await run("codexwin", ["bridge", "join", "session-x"])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("give claude-team:TEAM"),
    });
    expect(await run("codexwin", ["bridge", "join", `claude-team:${TEAM}`, "--as", "team-lead"])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("for itself"),
    });
    expect((await run("alice", ["bridge", "list"])).stdout).toBe(
      `${TEAM} claude-team ${team.dir} lead=lead member:codex=alice member:codex2=codexwin member:codexwin=codexwin\n`,
    );

    // The lead writes to codex2; the agent in codexwin gets it, and its reply goes back to the lead's inbox.
    team.writeInbox("codex2", [claudeEntry("team-lead", "please look at #12", "look")]);
    expect((await run("alice", ["bridge", "sync"])).stdout).toContain(`imported ${TEAM} ${INBOXES}/codex2.json -> codexwin `);
    const received = JSON.parse((await run("codexwin", ["receive", "--json"])).stdout);
    expect(received).toMatchObject({ from: `claude-team:${TEAM}/team-lead`, subject: "look", message: "please look at #12" });
    const replied = await run("codexwin", ["reply", received.id, "done"]);
    expect(replied).toMatchObject({ code: 0, stderr: "" });
    expect(team.entries("team-lead").at(-1)).toMatchObject({ from: "codexwin", text: "done", summary: "Re: look" });

    // A lead without a Claude teammate does not poll: the sender is told, and the mail goes to the lead's window.
    team.writeConfig({ ...team.config(), members: team.config().members.filter((member: any) => member.name !== "helper") });
    const sent = await run("alice", ["send", `claude-team:${TEAM}/team-lead`, "are you there?"]);
    expect(sent.code).toBe(0);
    expect(sent.stderr).toContain("delivered to the agentmail mailbox of its window 'lead' instead");
    expect(mailbox("lead").map((message) => message.id)).toEqual([sent.stdout.trim()]);
    // A reply to the lead says the same: its text went to the lead's window.
    const answered = await run("codexwin", ["reply", received.id, "one more thing"]);
    expect(answered.code).toBe(0);
    expect(answered.stderr).toContain("delivered to the agentmail mailbox of its window 'lead' instead");
    expect(await run("alice", ["send", `claude-team:${TEAM}/nobody`, "x"])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("has no member 'nobody'"),
    });

    const left = await run("codexwin", ["bridge", "leave", `claude-team:${TEAM}`]);
    expect(left).toEqual({ code: 0, stdout: `left ${TEAM} as codex2\n`, stderr: "" });
    expect((await run("codexwin", ["bridge", "leave", `claude-team:${TEAM}`, "--as", "codexwin", "--json"])).stdout).toBe(
      JSON.stringify({ team: TEAM, member: "codexwin", agent: "codexwin", state: "left" }) + "\n",
    );
    expect((await run("codexwin", ["bridge", "leave", `claude-team:${TEAM}`])).stdout).toBe(`was not in ${TEAM} as codexwin\n`);
    expect(team.config().members.map((member: any) => member.name)).toEqual(["team-lead", "codex", "bob", "gem"]);
    expect(readBridges(root)[0]!.members).toEqual({ codex: "alice" });
  });
});
