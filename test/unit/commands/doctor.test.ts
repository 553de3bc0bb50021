/**
 * `agentmail doctor` in process (coverage counts it), in a throwaway repository, HOME and private tmux server: what
 * it finds in the store, tmux, the mailman and the agents' hooks, each problem with its fix; what --fix repairs.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import {
  chmodSync,
  existsSync,
  lutimesSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMessage } from "../../../src/mail/message.ts";
import { VERSION } from "../../../src/mail/version.ts";
import { withLock } from "../../../src/store/durable/lock.ts";
import { appendMessage } from "../../../src/store/file/mailbox.ts";
import { claimMailman, releaseMailman } from "../../../src/mailman/files.ts";
import { ensureRoot } from "../../../src/store/paths.ts";
import { currentProcess } from "../../../src/store/durable/process-identity.ts";
import { writeStatus } from "../../../src/store/file/status.ts";
import { runInProcess } from "../../support/in-process.ts";
import { tempRepo } from "../../support/repo.ts";
import { TmuxServer } from "../../support/tmux-server.ts";

let server: TmuxServer;
let repo: ReturnType<typeof tempRepo>;
let home: string;
let root: string;

interface Finding {
  area: string;
  status: string;
  message: string;
  fix: string | null;
}

const settingsEnv = () => ({
  HOME: home,
  XDG_STATE_HOME: join(home, "state"),
  CODEX_HOME: join(home, ".codex"),
  GEMINI_CLI_HOME: home,
  CLAUDE_CONFIG_DIR: join(home, ".claude"),
  GEMINI_CLI_TRUST_WORKSPACE: "",
  GEMINI_CLI_TRUSTED_FOLDERS_PATH: "",
});
const as = (name: string, extra: Record<string, string> = {}) => ({
  env: { TMUX: server.agent(name).env.TMUX, TMUX_PANE: server.agent(name).paneId, ...settingsEnv(), ...extra },
  cwd: repo.dir,
});

async function doctor(name = "alice", args: string[] = [], extra: Record<string, string> = {}) {
  const result = await runInProcess(["doctor", "--json", ...args], as(name, extra));
  return { code: result.code, report: JSON.parse(result.stdout) as { ok: boolean; store: string | null; findings: Finding[] } };
}

const problems = (findings: Finding[], area?: string) =>
  findings.filter((each) => each.status === "problem" && (area === undefined || each.area === area));

beforeAll(() => {
  server = TmuxServer.start(["alice", "bob"], tmpdir());
});
afterAll(() => server.stop());
beforeEach(async () => {
  repo = tempRepo();
  root = ensureRoot(repo.mailDir);
  home = mkdtempSync(join(tmpdir(), "agentmail-doctor-home-"));
  await claimMailman(root);
});
afterEach(() => {
  releaseMailman(root);
  repo.remove();
  rmSync(home, { recursive: true, force: true });
});

describe("doctor", () => {
  test("all well: exit 0, where the store is and why, who you are, the mailman, and notes on hooks not installed", async () => {
    const text = await runInProcess(["doctor"], as("alice"));
    expect(text.code).toBe(0);
    const lines = text.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe(`ok store: ${root} (mail/ in the common git dir of ${repo.dir}, shared by every worktree)`);
    expect(lines[1]).toMatch(/^ok tmux: you are "alice" \(pane %\d+, window @\d+\)$/);
    expect(lines[2]).toMatch(/^ok mailman: the mailman runs for this store \(pid \d+ on .+, since .+\)$/);
    expect(lines.slice(3)).toEqual([
      "note hooks: Claude Code: agentmail's hooks are not installed (project or user); fix: agentmail hooks install claude",
      "note hooks: Codex CLI: agentmail's hooks are not installed (project or user); fix: agentmail hooks install codex",
      "note hooks: Gemini CLI: agentmail's hooks are not installed (project or user); fix: agentmail hooks install gemini",
    ]);
    const storeDir = mkdtempSync(join(tmpdir(), "agentmail-doctor-store-"));
    const elsewhere = await runInProcess(["doctor"], { ...as("alice", { AGENTMAIL_DIR: storeDir }) });
    expect(elsewhere.stdout).toStartWith(`ok store: ${storeDir} (from AGENTMAIL_DIR=${storeDir})\n`);
    rmSync(storeDir, { recursive: true, force: true });
  });

  test("no mailman: exit 1, with the command that starts one", async () => {
    releaseMailman(root);
    const { code, report } = await doctor();
    expect(code).toBe(1);
    expect(report.ok).toBe(false);
    expect(problems(report.findings)).toEqual([
      {
        area: "mailman",
        status: "problem",
        message:
          "no mailman runs for this store (an agent's session start brings it up once agentmail's hooks are installed), " +
          "so mail reaches agents only at their hooks, never while idle",
        fix: "agentmail mailman --daemon",
      },
    ]);
    // Stopped by hand: said so, as the reason session starts leave it stopped.
    expect((await runInProcess(["mailman", "stop"], as("alice"))).code).toBe(0);
    const stopped = problems((await doctor()).report.findings)[0]!.message;
    expect(stopped).toMatch(
      /^no mailman runs for this store: it was stopped by hand \(agentmail mailman stop, \d{4}-[^)]+\), and agents' session starts leave it stopped, /,
    );
  });

  test("the store: stale locks, stray temp files, bad cursors, lines that are not messages, modes, links; --fix repairs", async () => {
    await appendMessage(root, createMessage("alice", "bob", "one"));
    await appendMessage(root, createMessage("alice", "bob", "two"));
    const host = (await Bun.file("/proc/sys/kernel/hostname").text()).trim();
    writeFileSync(join(root, "bob.jsonl.lock"), JSON.stringify({ pid: 2 ** 30, host, token: "t", time: "x" }), { mode: 0o600 });
    writeFileSync(join(root, "bob.jsonl.lock.break"), "", { mode: 0o600 });
    utimesSync(join(root, "bob.jsonl.lock.break"), new Date(0), new Date(0));
    writeFileSync(join(root, ".bob.jsonl.tmp-1073741824-abc"), "", { mode: 0o600 });
    writeFileSync(join(root, "bob.jsonl.cursor"), "1 2 3 nope\n", { mode: 0o600 });
    writeFileSync(join(root, "bob.jsonl"), 'not json\n{"half": \n', { flag: "a" });
    writeFileSync(join(root, "carol.jsonl"), '{"id":"A","from":"x","to":"carol","message":"m","read_flag":false}\n{"torn', { mode: 0o644 });
    symlinkSync("/dev/null", join(root, "dave.jsonl"));
    mkdirSync(join(root, ".mailman"), { recursive: true });
    writeFileSync(join(root, ".roles.json"), "{nope", { mode: 0o600 });
    // Locks as agentmail makes them, symlinks naming their holder: a dead one's receive lock, and a live archive lock.
    const probe = join(root, "probe.jsonl.lock");
    const [, , , tag] = await withLock(probe, () => readlinkSync(probe).split(":"));
    symlinkSync(`am1:${2 ** 30}:1:${tag}:aaaaaaaaaaaa`, join(root, "bob.jsonl.rlock"));
    symlinkSync(`am1:${process.pid}:${currentProcess().start}:${tag}:bbbbbbbbbbbb`, join(root, "bob.jsonl.alock"));
    const { code, report } = await doctor();
    expect(code).toBe(1);
    const store = problems(report.findings, "store").map((each) => [each.message.replace(`${root}/`, ""), each.fix]);
    // How long it was held depends on how soon doctor looks at it (a loaded machine takes longer).
    const staleLock = new RegExp(
      `^bob\\.jsonl\\.lock: a stale lock, left by pid ${2 ** 30} on ${host.replaceAll(".", "\\.")} \\(held \\d+\\.\\ds\\)$`,
    );
    expect(store).toContainEqual([expect.stringMatching(staleLock), "agentmail doctor --fix"]);
    expect(store).toContainEqual([
      expect.stringMatching(new RegExp(staleLock.source.replace("lock:", "rlock:"))),
      "agentmail doctor --fix",
    ]);
    expect(store.filter(([message]) => message!.includes("alock"))).toEqual([]);
    expect(store).toContainEqual([
      "bob.jsonl.lock.break: a lock breaker's file " + Math.round((Date.now() - 0) / 1000) + " s old",
      "agentmail doctor --fix",
    ]);
    expect(store).toContainEqual([".bob.jsonl.tmp-1073741824-abc: a temp file left by process 1073741824", "agentmail doctor --fix"]);
    expect(store).toContainEqual([
      "bob.jsonl.cursor: a cursor receive would not use: it is not a cursor agentmail wrote",
      "agentmail doctor --fix",
    ]);
    expect(store).toContainEqual([
      "bob.jsonl: 2 lines that are not messages (lines 3, 4); receive skips them",
      `with no agentmail running: sed -i '3d;4d' ${root}/bob.jsonl`,
    ]);
    expect(store).toContainEqual(["carol.jsonl: mode 0644, not 0600; other users may read the mail", `chmod 600 ${root}/carol.jsonl`]);
    expect(store).toContainEqual(["dave.jsonl: a symlink, which agentmail never follows", `rm ${root}/dave.jsonl`]);
    expect(store.some(([message]) => message!.includes(".roles.json is not a JSON object"))).toBe(true);
    expect(report.findings).toContainEqual({
      area: "store",
      status: "note",
      message:
        `${root}/carol.jsonl: its last line has no newline (6 bytes); ` +
        "a writer was killed mid-append, and the next send ends that line first",
      fix: null,
    });

    const fixed = await runInProcess(["doctor", "--fix"], as("alice"));
    expect(fixed.code).toBe(1);
    const repairs = fixed.stdout.split("\n").filter((line) => line.startsWith("fixed "));
    expect(repairs.map((line) => line.replace(`${root}/`, "").replace(/ \(.*$/, ""))).toEqual(
      expect.arrayContaining([
        "fixed store: removed the stale lock bob.jsonl.lock",
        "fixed store: removed the stale lock bob.jsonl.rlock",
        "fixed store: removed bob.jsonl.lock.break",
        "fixed store: removed .bob.jsonl.tmp-1073741824-abc",
        "fixed store: removed the cursor bob.jsonl.cursor",
      ]),
    );
    expect(repairs).toHaveLength(5);
    const after = problems((await doctor()).report.findings, "store").map((each) => each.message);
    expect(after.some((message) => /lock|tmp-|cursor/.test(message))).toBe(false);
    expect(after.length).toBe(4);
  });

  test("a file agentmail does not keep is a note with a safe fix, and stops nothing; no store at all is a problem", async () => {
    writeFileSync(join(root, "notes.txt"), "");
    writeFileSync(join(root, "bob.jsonl~"), "");
    const { code, report } = await doctor();
    expect(code).toBe(0);
    expect(report.store).toBe(root);
    expect(report.findings.filter((each) => each.area === "store")).toEqual([
      expect.objectContaining({ status: "ok" }),
      {
        area: "store",
        status: "note",
        message: `${root}/bob.jsonl~: a file agentmail does not keep; mail goes on without it`,
        fix: `mv '${root}/bob.jsonl~' <somewhere outside the store>`,
      },
      {
        area: "store",
        status: "note",
        message: `${root}/notes.txt: a file agentmail does not keep; mail goes on without it`,
        fix: `mv ${root}/notes.txt <somewhere outside the store>`,
      },
    ]);
    const outside = mkdtempSync(join(tmpdir(), "agentmail-doctor-norepo-"));
    const none = await runInProcess(["doctor", "--json"], { env: { ...as("alice").env }, cwd: outside });
    expect(JSON.parse(none.stdout).findings[0]).toMatchObject({ area: "store", status: "problem" });
    rmSync(outside, { recursive: true, force: true });
  });

  test("a store in use (archive, sent, a role queue, groups, a bridge with a queued Roo message, a held lock) is healthy: exit 0", async () => {
    const roo = mkdtempSync(join(tmpdir(), "agentmail-doctor-roo-"));
    try {
      const run = (name: string, args: string[]) => runInProcess(args, as(name));
      expect((await run("alice", ["bridge", "add", "roo", "--dir", roo])).code).toBe(0);
      for (const body of ["first for roo", "queued for roo"]) expect((await run("alice", ["send", "roo:architect", body])).code).toBe(0);
      expect(readdirSync(join(root, ".bridges", "roo-queue", "architect"))).toHaveLength(1);
      expect((await run("bob", ["status", "ready"])).code).toBe(0);
      expect((await run("bob", ["join", "triage"])).code).toBe(0);
      expect((await run("alice", ["group", "add", "team", "bob"])).code).toBe(0);
      for (const to of ["bob", "bob", "role:triage"]) expect((await run("alice", ["send", to, `for ${to}`])).code).toBe(0);
      const received = JSON.parse((await run("bob", ["receive", "--json"])).stdout) as { id: string };
      expect((await run("bob", ["archive", received.id])).code).toBe(0);
      expect((await run("bob", ["receive"])).code).toBe(0);
      expect((await run("alice", ["sent"])).code).toBe(0);
      for (const dir of [".archive", ".sent", ".bridges", ".roles", ".agents", ".mailman"]) expect(existsSync(join(root, dir))).toBe(true);
      // A lock held while doctor looks: a live holder's lock is nobody's business.
      const { code, report } = await withLock(join(root, "bob.jsonl.lock"), () => doctor());
      expect(report.findings.filter((each) => each.area === "store" || each.status === "problem")).toEqual([
        expect.objectContaining({ area: "store", status: "ok" }),
      ]);
      expect(code).toBe(0);
    } finally {
      rmSync(roo, { recursive: true, force: true });
    }
  });

  test("a stale lock (a symlink naming no holder) is reported as stale, and --fix removes it", async () => {
    const lock = join(root, "carol.jsonl.lock");
    symlinkSync("not-a-holder", lock);
    const old = new Date(Date.now() - 60_000);
    lutimesSync(lock, old, old);
    const { code, report } = await doctor();
    expect(code).toBe(1);
    expect(problems(report.findings, "store")).toEqual([
      {
        area: "store",
        status: "problem",
        message: expect.stringMatching(new RegExp(`^${lock}: a stale lock, left by a lock that names no holder`)),
        fix: "agentmail doctor --fix",
      },
    ]);
    const fixed = await runInProcess(["doctor", "--fix"], as("alice"));
    expect(fixed.stdout).toContain(`fixed store: removed the stale lock ${lock}`);
    expect(existsSync(lock)).toBe(false);
    expect((await doctor()).code).toBe(0);
  });

  test("a mailman serving another store (AGENTMAIL_URL set or unset since) is a problem that says which", async () => {
    releaseMailman(root);
    await claimMailman(root, "redis://mail.internal:6379, namespace acme/widgets");
    const { code, report } = await doctor();
    expect(code).toBe(1);
    expect(problems(report.findings, "mailman")).toEqual([
      {
        area: "mailman",
        status: "problem",
        message: expect.stringMatching(
          /^the mailman here serves redis:\/\/mail\.internal:6379, namespace acme\/widgets \(pid \d+ on .+\), not this store, so this store's mail reaches agents only at their hooks$/,
        ),
        fix: "agentmail mailman stop && agentmail mailman --daemon",
      },
    ]);
  });

  test("tmux: a name tmux chose, names held twice, agents with a name tmux chose, group members gone, outside tmux", async () => {
    const { windowId, paneId } = server.addUnnamedWindow(tmpdir());
    const bob = server.agent("bob");
    const twin = server.addWindow("bob", tmpdir());
    try {
      const autoName = server.run(["display-message", "-p", "-t", windowId, "#{window_name}"]).trim();
      writeStatus(root, { name: autoName, status: "ready", pane: paneId });
      writeFileSync(join(root, ".groups.json"), JSON.stringify({ devs: ["bob", "ghost"] }), { mode: 0o600 });
      writeFileSync(join(root, ".roles.json"), JSON.stringify({ triage: ["alice", "phantom"] }), { mode: 0o600 });
      const mine = await runInProcess(["doctor", "--json"], { env: { ...as("alice").env, TMUX_PANE: paneId }, cwd: repo.dir });
      const tmux = (JSON.parse(mine.stdout).findings as Finding[]).filter((each) => each.area === "tmux");
      expect(tmux).toContainEqual({
        area: "tmux",
        status: "problem",
        message: `your window's name "${autoName}" was chosen by tmux and will change with the program in it`,
        fix: "agentmail name <name>",
      });
      expect(tmux).toContainEqual({
        area: "tmux",
        status: "problem",
        message: `2 windows are named "bob" (panes ${bob.paneId}, ${twin.paneId}): they would share one mailbox`,
        fix: `tmux rename-window -t ${twin.paneId} <new-name>, or in that window: agentmail name <new-name>`,
      });
      expect(tmux).toContainEqual({
        area: "tmux",
        status: "problem",
        message: 'group "devs" has member "ghost", which is no window of this session: send @devs fails',
        fix: "agentmail group remove devs ghost",
      });
      expect(tmux).toContainEqual({
        area: "tmux",
        status: "note",
        message: 'role "triage" has members with no window in this session: "phantom"; the others take its mail',
        fix: null,
      });
      const fromAlice = problems((await doctor()).report.findings, "tmux").map((each) => each.message);
      expect(fromAlice).toContain(`agent "${autoName}" (pane ${paneId}) has a name tmux chose, which will change`);
    } finally {
      server.run(["kill-window", "-t", windowId]);
      server.run(["kill-window", "-t", twin.windowId]);
      server.agents.set("bob", bob);
    }
    const outside = await runInProcess(["doctor", "--json"], { env: { ...settingsEnv(), TMUX: "" }, cwd: repo.dir });
    expect(JSON.parse(outside.stdout).findings).toContainEqual(
      expect.objectContaining({ area: "tmux", status: "problem", message: expect.stringContaining("not inside tmux") }),
    );
  });

  test("Gemini CLI's hooks installed, no Gemini pane: doctor says once that an idle one cannot be woken without keystrokes", async () => {
    const geminiLines = (stdout: string) => stdout.split("\n").filter((line) => line.includes("cannot be woken"));
    expect(geminiLines((await runInProcess(["doctor"], as("alice"))).stdout)).toEqual([]);
    expect((await runInProcess(["hooks", "install", "gemini", "--user"], as("alice"))).code).toBe(0);
    expect((await runInProcess(["hooks", "install", "gemini"], as("alice"))).code).toBe(0);
    const text = await runInProcess(["doctor"], as("alice"));
    expect(geminiLines(text.stdout)).toEqual([
      "note hooks: Gemini CLI: an idle Gemini CLI cannot be woken without keystrokes: nothing of it runs while its " +
        "prompt waits, so mail sent to it then waits for its hooks, after its next tool call (AfterTool) or at the end of " +
        "its next turn (AfterAgent); a send to it meanwhile says stored, unreachable; fix: agentmail mailman --daemon " +
        "--typing <agent> (types a fixed reminder into Gemini CLI at its idle prompt and presses Enter: a new turn, whose " +
        "hooks then bring the mail; only there, never into a shell)",
    ]);
    const json = (await doctor()).report.findings.filter((each) => each.message.includes("cannot be woken"));
    expect(json).toEqual([expect.objectContaining({ area: "hooks", status: "note", fix: expect.stringContaining("--typing <agent>") })]);
  });

  test("hooks: the binary they run must exist and be this version; Codex must trust them; Gemini CLI the project folder", async () => {
    const bin = join(home, "bin");
    mkdirSync(bin);
    const fake = (name: string, version: string) => {
      writeFileSync(join(bin, name), `#!/bin/sh\necho '${version}'\n`, { mode: 0o755 });
      return join(bin, name);
    };
    // A build says where it came from after the version; an older agentmail says the version alone.
    const current = fake("agentmail", `${VERSION} (commit 0123456789ab, built 2026-11-29T10:00:00Z)`);
    const old = fake("agentmail-old", "0.0.1");
    const install = async (...argv: string[]) => expect((await runInProcess(["hooks", "install", ...argv], as("alice"))).code).toBe(0);
    await install("claude", "--binary", current);
    await install("codex", "--binary", join(bin, "agentmail-gone"));
    await install("gemini", "--user", "--binary", old);
    await install("gemini", "--binary", current);
    const hooks = (await doctor()).report.findings.filter((each) => each.area === "hooks");
    const claude = join(repo.dir, ".claude", "settings.json");
    expect(hooks).toContainEqual({
      area: "hooks",
      status: "ok",
      message: `Claude Code (project, ${claude}): 7 hooks run ${current} (${VERSION})`,
      fix: null,
    });
    const codex = hooks.filter((each) => each.message.startsWith("Codex CLI"));
    expect(codex[0]).toEqual({
      area: "hooks",
      status: "problem",
      message:
        `Codex CLI (project, ${join(repo.dir, ".codex", "hooks.json")}): ` +
        `the hooks run ${bin}/agentmail-gone, which does not exist or cannot run`,
      fix: `put agentmail on the PATH, or: agentmail hooks install codex --binary ${process.execPath}`,
    });
    expect(codex[1]).toMatchObject({ status: "problem", fix: "agentmail hooks install codex --trust" });
    expect(codex[1]!.message).toContain("the project is not trusted");
    expect(codex[2]).toMatchObject({
      status: "problem",
      message: "Codex CLI (project): 7 of 7 agentmail hooks are untrusted, and Codex skips them without a word",
    });
    const geminiUser = join(home, ".gemini", "settings.json");
    expect(hooks).toContainEqual({
      area: "hooks",
      status: "problem",
      message: `Gemini CLI (user, ${geminiUser}): the hooks run ${old}, which is version 0.0.1, not ${VERSION}`,
      fix: `replace ${old} with this agentmail (${process.execPath})`,
    });
    expect(hooks).toContainEqual(
      expect.objectContaining({
        status: "problem",
        message: `Gemini CLI (project): ${repo.dir} is not a trusted folder, so Gemini CLI loads none of .gemini/settings.json`,
      }),
    );
    const trusted = (await doctor("alice", [], { GEMINI_CLI_TRUST_WORKSPACE: "true" })).report.findings;
    expect(trusted.some((each) => each.message.startsWith("Gemini CLI (project):"))).toBe(false);
    writeFileSync(join(home, ".gemini", "trustedFolders.json"), JSON.stringify({ [join(repo.dir, "sub")]: "TRUST_PARENT" }));
    const byFile = (await doctor()).report.findings;
    expect(byFile.some((each) => each.message.startsWith("Gemini CLI (project):"))).toBe(false);
    writeFileSync(join(home, ".gemini", "trustedFolders.json"), JSON.stringify({ [repo.dir]: "DO_NOT_TRUST" }));
    expect((await doctor()).report.findings.some((each) => each.message.startsWith("Gemini CLI (project):"))).toBe(true);
    await install("codex", "--binary", current, "--trust");
    expect(problems((await doctor()).report.findings, "hooks").filter((each) => each.message.startsWith("Codex"))).toEqual([]);
    chmodSync(current, 0o644);
    const onPath = await runInProcess(["hooks", "install", "claude", "--user"], as("alice"));
    expect(onPath.code).toBe(0);
    const notOnPath = (await doctor("alice", [], { PATH: "/nonexistent" })).report.findings;
    expect(notOnPath).toContainEqual(
      expect.objectContaining({ message: expect.stringContaining("the hooks run agentmail, which is not on the PATH") }),
    );
    writeFileSync(join(repo.dir, ".claude", "settings.json"), "{ broken");
    expect(problems((await doctor()).report.findings, "hooks")[0]!.message).toStartWith("Claude Code (project): cannot parse");
    writeFileSync(join(repo.dir, ".claude", "settings.json"), '{"hooks": {},\n"hooks": {}}');
    expect(problems((await doctor()).report.findings, "hooks")[0]!.message).toStartWith(
      `Claude Code (project): ${join(repo.dir, ".claude", "settings.json")} has the key "hooks" twice (lines 1 and 2)`,
    );
  });
});
