/**
 * What `agentmail doctor` says of how each agent's mail reaches it, run in process against a private tmux server whose
 * windows run stand-in agent CLIs (test/support/fake-agent.ts): Claude Code with an inbox, one whose inbox holds mail
 * for its user's approval, one without an inbox; Gemini CLI; a Codex CLI whose daemon (test/support/codex-control.ts)
 * has its thread, and two Codex CLIs sharing a daemon in one directory; and a window with only its shell, whose name
 * a window of another repository on the same server carries too, with a Claude Code there: not this project's agent.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMessage } from "../../../src/mail/message.ts";
import { DEFAULT_BUDGET } from "../../../src/mail/frame.ts";
import { controlSocketOf } from "../../../src/mailman/codex-control.ts";
import { geminiTyping } from "../../../src/mailman/adapters.ts";
import { HOLD_ADVICE, NativeDeliveries } from "../../../src/mailman/native.ts";
import { FileStore } from "../../../src/store/file/file-store.ts";
import { ensureRoot } from "../../../src/store/paths.ts";
import { codexDaemon } from "../../support/codex-control.ts";
import { fakeClaude, installFakeAgents, startFakeAgent } from "../../support/fake-agent.ts";
import { runInProcess } from "../../support/in-process.ts";
import { tempRepo } from "../../support/repo.ts";
import { repository as newRepository, SHELL } from "../../support/projects.ts";
import { TmuxServer } from "../../support/tmux-server.ts";
import { waitFor } from "../../support/workflow.ts";

const NAMES = ["ann", "cox", "gem", "hal", "plain", "sam", "twin1", "twin2"];

let repo: ReturnType<typeof tempRepo>;
let server: TmuxServer;
let scratch: string;
let bin: string;
let root: string;
const daemons: ReturnType<typeof codexDaemon>[] = [];

const as = (name: string) => ({
  env: { TMUX: server.agent(name).env.TMUX, TMUX_PANE: server.agent(name).paneId, HOME: join(scratch, "home") },
  cwd: repo.dir,
});
const pane = (name: string) => server.agent(name).paneId;
const dirIn = (name: string) => {
  const dir = join(scratch, name);
  mkdirSync(dir, { recursive: true });
  return dir;
};

/** A stand-in Codex CLI in `cwd` with `codexHome`, in `name`'s window. */
const startCodex = (name: string, cwd: string, codexHome: string) =>
  startFakeAgent(server, name, `cd '${cwd}' && CODEX_HOME='${codexHome}' node '${join(bin, "codex")}'`);

beforeAll(async () => {
  repo = tempRepo();
  root = ensureRoot(repo.mailDir);
  scratch = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-doctor-delivery-")));
  bin = installFakeAgents(scratch);
  server = TmuxServer.start(NAMES, repo.dir);
  const claude = (name: string, ...options: string[]) =>
    startFakeAgent(server, name, `CLAUDE_CONFIG_DIR='${dirIn(`${name}-claude`)}' ${fakeClaude(bin, ...options)}`);
  await claude("ann", "--inbox");
  await claude("hal", "--inbox", "--hold");
  await claude("plain");
  await startFakeAgent(server, "gem", `node '${join(bin, "gemini")}'`);
  // Another project's window of sam's name, with an agent CLI: doctor never takes it for this project's sam.
  const elsewhere = newRepository(scratch, "elsewhere");
  const samThere = server.run(["new-window", "-d", "-P", "-F", "#{pane_id}", "-n", "sam", "-c", elsewhere, SHELL]).trim();
  server.agents.set("sam-elsewhere", { ...server.agent("sam"), paneId: samThere });
  await startFakeAgent(server, "sam-elsewhere", `CLAUDE_CONFIG_DIR='${dirIn("elsewhere-claude")}' ${fakeClaude(bin, "--inbox")}`);
  // The Codex CLIs work in subdirectories of the repository: this project's.
  const soloDir = join(repo.dir, "solo-work");
  mkdirSync(soloDir);
  const soloHome = dirIn("solo-codex");
  mkdirSync(join(soloHome, "app-server-control"));
  daemons.push(codexDaemon(controlSocketOf(soloHome), { activeTurn: null, cwd: soloDir, threads: ["t-solo"] }));
  await startCodex("cox", soloDir, soloHome);
  const twinDir = join(repo.dir, "twin-work");
  mkdirSync(twinDir);
  const twinHome = dirIn("twin-codex");
  mkdirSync(join(twinHome, "app-server-control"));
  daemons.push(codexDaemon(controlSocketOf(twinHome), { activeTurn: null, cwd: twinDir, threads: ["t-a", "t-b"] }));
  await startCodex("twin1", twinDir, twinHome);
  await startCodex("twin2", twinDir, twinHome);
  // Each agent claims its name, as its session-start hook does.
  for (const name of NAMES) expect((await runInProcess(["status", "ready"], as(name))).code).toBe(0);
});

afterAll(() => {
  for (const daemon of daemons) daemon.server.stop(true);
  server?.stop();
  repo?.remove();
  rmSync(scratch, { recursive: true, force: true });
});

test("doctor names each agent's channel, or why it has none and what brings its mail; held mail and two Codex in one directory are problems", async () => {
  // hal's Claude Code holds what the mailman sends it for its user's approval.
  const store = new FileStore(root);
  const held = createMessage("ann", "hal", "for hal's approval");
  await store.append(held);
  const config = join(scratch, "hal-claude");
  const [entry] = readdirSync(join(config, "sessions"));
  const session = JSON.parse(readFileSync(join(config, "sessions", entry!), "utf8"));
  const native = new NativeDeliveries({ store, root, budget: DEFAULT_BUDGET, log: () => {}, report: () => {} });
  try {
    const route = { channel: "claude-inbox" as const, pane: pane("hal"), socket: session.messagingSocketPath, pid: session.pid };
    expect((await native.deliver("hal", { ...route, procStart: session.procStart }, [held])).channel).toBe("claude-inbox");
    await waitFor("hal's stand-in to answer held", async () => (await store.deliveries("hal")).get(held.id)?.at(-1)?.event === "held");
  } finally {
    await native.close();
  }

  const result = await runInProcess(["doctor", "--json"], as("ann"));
  const findings = (JSON.parse(result.stdout).findings as { area: string; status: string; message: string; fix: string | null }[]).filter(
    (finding) => finding.area === "delivery",
  );
  const who = (name: string) => `"${name}" (pane ${pane(name)})`;
  const twins = (name: string) => ({
    area: "delivery",
    status: "problem",
    message:
      `${who(name)}: 2 Codex CLIs work in ${join(repo.dir, "twin-work")} with the daemon of ${join(scratch, "twin-codex")}, ` +
      `so which thread is pane ${pane(name)}'s cannot be told; its hooks bring the mail; its hooks cannot tell whose thread they run for either`,
    fix: "run each Codex CLI in its own directory (a worktree each), or give each its own CODEX_HOME",
  });
  const annSocket = join(scratch, "ann-claude", "socks");
  expect(findings).toEqual([
    {
      area: "delivery",
      status: "ok",
      message: expect.stringMatching(
        new RegExp(
          `^"ann" \\(pane ${pane("ann")}\\): Claude Code's inbox \\(${annSocket}/\\d+\\.sock\\): mail arrives idle and busy, nothing typed$`,
        ),
      ),
      fix: null,
    },
    {
      area: "delivery",
      status: "ok",
      message: `${who("cox")}: Codex CLI's control socket, thread t-solo: mail steers a running turn, or starts one`,
      fix: null,
    },
    {
      area: "delivery",
      status: "note",
      message: `${who("gem")}: Gemini CLI: its hooks bring the mail, mid-turn and at the end of a turn; not while idle`,
      fix: geminiTyping("gem"),
    },
    {
      area: "delivery",
      status: "ok",
      message: `${who("hal")}: Claude Code's inbox (${session.messagingSocketPath}): mail arrives idle and busy, nothing typed`,
      fix: null,
    },
    { area: "delivery", status: "problem", message: `"hal": 1 message held: ${HOLD_ADVICE}`, fix: null },
    {
      area: "delivery",
      status: "note",
      message: expect.stringMatching(
        new RegExp(
          `^${who("plain").replace(/[()]/g, "\\$&")}: no Claude Code session registry entry is the process in pane ${pane("plain")} ` +
            `\\(pid \\d+, under ${join(scratch, "plain-claude")}\\); its hooks bring the mail$`,
        ),
      ),
      fix: null,
    },
    {
      area: "delivery",
      status: "note",
      message: `"sam": no agent CLI in its window (pane ${pane("sam")} runs bash, not an agent CLI); its mail waits for agentmail receive`,
      fix: null,
    },
    twins("twin1"),
    twins("twin2"),
  ]);
  expect(result.code).toBe(1);
  const text = await runInProcess(["doctor"], as("ann"));
  expect(text.stdout).toContain(`problem delivery: "hal": 1 message held: ${HOLD_ADVICE}\n`);
  expect(text.stdout).toContain(
    `note delivery: ${who("gem")}: Gemini CLI: its hooks bring the mail, mid-turn and at the end of a turn; not while idle; fix: agentmail mailman --daemon --typing gem (`,
  );
});
