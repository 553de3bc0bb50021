/**
 * The mailman in process: its rules (whom to remind, which pane, the text) and the typing gate (only an agent CLI
 * holding its pane's terminal, at its prompt), and its loop against a private tmux server whose agents are stand-in
 * agent CLIs (reminded by pane id, once per burst; never busy, copy-mode, half-typed or question panes, nor a shell,
 * registered or not; one unreadable mailbox skipped and reported once; each agent's last reminder kept).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createMessage } from "../../../src/mail/message.ts";
import * as rules from "../../../src/mailman/rules.ts";
import * as gate from "../../../src/mailman/typing-gate.ts";
import { agentCli, readForeground, type ProcessView } from "../../../src/tmux/foreground.ts";
import { runMailman } from "../../../src/mailman/loop.ts";
import { appendMessage, takeOldestUnread } from "../../../src/store/file/mailbox.ts";
import { updateMemberships } from "../../../src/store/file/memberships.ts";
import { roleQueue } from "../../../src/store/file/role-mail.ts";
import { claimMailman, readMailmanState, releaseMailman, runningMailman } from "../../../src/mailman/files.ts";
import { ensureRoot } from "../../../src/store/paths.ts";
import { readStatus, removeStatus, writeStatus } from "../../../src/store/file/status.ts";
import { fakeClaude, installFakeAgents, startFakeAgent } from "../../support/fake-agent.ts";
import { runInProcess } from "../../support/in-process.ts";
import { tempRepo } from "../../support/repo.ts";
import { TmuxServer } from "../../support/tmux-server.ts";
import { waitFor } from "../../support/workflow.ts";
import { FileStore } from "../../../src/store/file/file-store.ts";

describe("reminder rules", () => {
  const view = { name: "bob", unread: 2, status: null, statusPane: null };

  test("the text starts with 'agentmail:', counts, and holds no shell metacharacter or name", () => {
    expect(rules.reminderText(1)).toBe("agentmail: 1 unread message. Run agentmail receive.");
    expect(rules.reminderText(3)).toBe("agentmail: 3 unread messages. Run agentmail receive.");
    expect(rules.reminderText(3)).not.toMatch(/[;&|$`'"<>()\\*?[\]{}~#!]/);
  });

  test("a reminder still sits on the input line when the text before the cursor ends with it, or with its wrapped tail", () => {
    const text = rules.reminderText(2);
    expect(rules.reminderStillTyped(`bash-5.2$ ${text}`, text)).toBe(true);
    expect(rules.reminderStillTyped(`${text}   `, text)).toBe(true);
    expect(rules.reminderStillTyped("receive.", text)).toBe(true);
    expect(rules.reminderStillTyped("bash-5.2$ ", text)).toBe(false);
    expect(rules.reminderStillTyped("", text)).toBe(false);
    expect(rules.reminderStillTyped("e.", text)).toBe(false);
    expect(rules.reminderStillTyped("> ", text)).toBe(false);
  });

  test("ready or unset agents with unread mail are reminded, at most once per interval", () => {
    expect(rules.wantsReminder(view, undefined, 1000, 60_000)).toBe(true);
    expect(rules.wantsReminder({ ...view, status: "ready" }, undefined, 1000, 60_000)).toBe(true);
    expect(rules.wantsReminder({ ...view, status: "work" }, undefined, 1000, 60_000)).toBe(false);
    expect(rules.wantsReminder({ ...view, status: "offline" }, undefined, 1000, 60_000)).toBe(false);
    expect(rules.wantsReminder({ ...view, unread: 0 }, undefined, 1000, 60_000)).toBe(false);
    expect(rules.wantsReminder(view, 1000, 30_000, 60_000)).toBe(false);
    expect(rules.wantsReminder(view, 1000, 61_000, 60_000)).toBe(true);
  });

  const proc = (exe: string | null, argv: string[], comm = ""): ProcessView => ({ exe, argv, comm });

  test("an agent CLI is known by its executable, or by the script (or title) of an interpreter; never by a shell's name", () => {
    const npmClaude = "/usr/lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe";
    expect(agentCli(proc(npmClaude, ["/usr/bin/claude"]))).toBe("claude");
    expect(agentCli(proc(`${npmClaude} (deleted)`, ["claude"]))).toBe("claude");
    expect(agentCli(proc("/home/bob/.local/share/claude/versions/2.1.3", ["claude"]))).toBe("claude");
    expect(agentCli(proc("/usr/lib/node_modules/@openai/codex/vendor/x86_64-unknown-linux-musl/codex/codex", ["codex"]))).toBe("codex");
    expect(agentCli(proc("/usr/bin/node", ["node", "/usr/local/bin/gemini", "-p", "x"]))).toBe("gemini");
    const codexFromNpm = ["node", "--max-old-space-size=8192", "/usr/lib/node_modules/@openai/codex/bin/codex.js"];
    expect(agentCli(proc("/usr/bin/node", codexFromNpm))).toBe("codex");
    expect(agentCli(proc("/opt/bun/bin/bun", ["bun", "/opt/claude"]))).toBe("claude");
    // Claude Code from npm before its native binary: node with its process title set to claude.
    expect(agentCli(proc("/usr/bin/node", ["claude"], "claude"))).toBe("claude");
    expect(agentCli(proc("/usr/bin/node", ["node", "/srv/app/server.js"]))).toBeNull();
    expect(agentCli(proc("/usr/bin/node", ["node"]))).toBeNull();
    expect(agentCli(proc("/usr/bin/node", ["node", "--inspect"]))).toBeNull();
    // A shell or a REPL that names itself claude (`exec -a claude bash`, a title) is still what it runs.
    expect(agentCli(proc("/usr/bin/bash", ["claude"], "bash"))).toBeNull();
    expect(agentCli(proc("/usr/bin/bash", ["bash", "/home/bob/bin/claude"], "claude"))).toBeNull();
    expect(agentCli(proc("/usr/bin/python3.11", ["claude"], "claude"))).toBeNull();
    expect(agentCli(proc("/usr/bin/vim", ["vim"]))).toBeNull();
    expect(agentCli(proc(null, ["claude"], "claude"))).toBeNull();
  });

  const claude = proc("/usr/bin/node", ["claude"], "claude");
  const bash = proc("/usr/bin/bash", ["-bash"], "bash");
  const python = proc("/usr/bin/python3.11", ["python3"], "python3");

  test("keys go only where an agent CLI holds the terminal alone", () => {
    expect(gate.foregroundRefusal({ leader: claude, readers: [] })).toBeNull();
    // Codex from npm is node running codex.js, which runs the native codex in its group, on the terminal.
    const codexWrapper = proc("/usr/bin/node", ["node", "/usr/lib/node_modules/@openai/codex/bin/codex.js"], "node");
    expect(gate.foregroundRefusal({ leader: codexWrapper, readers: [proc("/x/codex", ["codex"], "codex")] })).toBeNull();
    expect(gate.foregroundRefusal({ leader: bash, readers: [] })).toBe("runs bash, not an agent CLI");
    expect(gate.foregroundRefusal({ leader: python, readers: [] })).toBe("runs python3, not an agent CLI");
    expect(gate.foregroundRefusal({ leader: claude, readers: [python] })).toBe("runs python3 in the foreground of claude");
    expect(gate.foregroundRefusal({ leader: proc("/usr/bin/true", []), readers: [] })).toBe("runs an unnamed program, not an agent CLI");
    // A process names itself: its name is shown on one line, its control characters escaped.
    expect(gate.foregroundRefusal({ leader: proc("/x/evil", ["evil"], "ev\nil\u001b[2J"), readers: [] })).not.toMatch(/[\n\u001b]/);
    expect(gate.foregroundRefusal(null)).toMatch(/^has no foreground process that can be read/);
    expect(gate.paneAgent({ leader: claude, readers: [python] })).toBe("claude");
    expect(gate.paneAgent({ leader: bash, readers: [] })).toBeNull();
    expect(gate.paneAgent(null)).toBeNull();
  });

  test("the whole rule: an agent CLI alone in front, not in copy mode, at an idle prompt that asks nothing", () => {
    const agent = { inMode: false, foreground: { leader: claude, readers: [] } };
    expect(gate.typingRefusal(agent, "> ")).toBeNull();
    expect(gate.typingRefusal(agent, "")).toBeNull();
    expect(gate.typingRefusal({ ...agent, inMode: true }, "> ")).toBe("is in copy mode");
    expect(gate.typingRefusal(agent, null)).toBe("vanished");
    expect(gate.typingRefusal(agent, "Allow this command? [y/N]: ")).toBe("shows a question or password prompt");
    expect(gate.typingRefusal(agent, "> fix the")).toBe("has a half-typed line");
    // Whatever the line shows, a shell's prompt, a heredoc's (`> `) and a REPL's are never typed into.
    for (const [leader, line] of [
      [bash, "bash-5.2$ "],
      [bash, "> "],
      [python, ">>> "],
    ] as const) {
      expect(gate.typingRefusal({ inMode: false, foreground: { leader, readers: [] } }, line)).toMatch(/not an agent CLI$/);
    }
  });

  const panes = [
    { paneId: "%1", windowId: "@1", windowName: "bob", active: true, agent: null },
    { paneId: "%2", windowId: "@1", windowName: "bob", active: false, agent: "claude" },
    { paneId: "%3", windowId: "@2", windowName: "bob", active: true, agent: "codex" },
    { paneId: "%5", windowId: "@2", windowName: "bob", active: false, agent: "codex" },
    { paneId: "%4", windowId: "@3", windowName: "bobby", active: true, agent: "claude" },
  ];
  const ids = (list: { paneId: string }[]) => list.map((pane) => pane.paneId);

  test("the registered pane wins while an agent CLI holds it in a window of that name", () => {
    expect(ids(rules.targetPanes({ ...view, statusPane: "%5" }, panes))).toEqual(["%5"]);
  });

  test("a registered pane that no agent CLI holds is no target; the agent CLIs' panes of that name are", () => {
    expect(ids(rules.targetPanes({ ...view, statusPane: "%1" }, panes))).toEqual(["%2", "%3"]);
    expect(rules.targetPanes({ ...view, statusPane: "%1" }, [panes[0]!])).toEqual([]);
  });

  test("otherwise the agent panes of each window of that name, the active one when it is one", () => {
    expect(ids(rules.targetPanes(view, panes))).toEqual(["%2", "%3"]);
    expect(ids(rules.targetPanes({ ...view, statusPane: "%4" }, panes))).toEqual(["%2", "%3"]);
    expect(rules.targetPanes({ ...view, name: "nobody" }, panes)).toEqual([]);
    expect(rules.targetPanes(view, [panes[0]!])).toEqual([]);
  });

  test("questions and password prompts are recognised, case-insensitive", () => {
    const questions = [
      "Delete all files? [y/N]: ",
      "Delete all files? ",
      "Continue? ",
      "Overwrite (y/n) ",
      "Proceed [Y/n]",
      "Are you sure you want to continue connecting (yes/no/[fingerprint])? ",
      "Really (YES/NO)",
      "Password: ",
      "password:",
      "[sudo] password for bob: ",
      "Password for 'https://bob@github.com': ",
      "Enter passphrase for key '/home/bob/.ssh/id_ed25519': ",
      "Enter PIN for 'token': ",
      "#? ",
      "What now?> ",
    ];
    for (const line of questions) expect({ line, question: gate.looksLikeQuestion(line) }).toEqual({ line, question: true });
    const prompts = ["$ ", "bash-5.2$ ", "user@host:~/password-store$ ", "> ", "│ > ", "❯ ", "› ", "# ", ""];
    for (const line of prompts) expect({ line, question: gate.looksLikeQuestion(line) }).toEqual({ line, question: false });
  });

  test("an idle prompt ends with a prompt character or is blank; ':' and questions are never idle", () => {
    for (const line of ["$ ", "user@host:~/repo$ ", "> ", "│ > ", "❯ ", "› ", "# ", "% ", "λ ", "", "   "]) {
      expect({ line, idle: gate.looksIdle(line) }).toEqual({ line, idle: true });
    }
    for (const line of ["$ git sta", "> fix the", "hello", "Name: ", "Delete all files? [y/N]: ", "Password: ", "Continue? "]) {
      expect({ line, idle: gate.looksIdle(line) }).toEqual({ line, idle: false });
    }
  });
});

let repo: ReturnType<typeof tempRepo>;
let server: TmuxServer;
let root: string;
let bin: string;

/** Windows running a stand-in agent CLI at its prompt; `plain` and `left` keep their shells. */
const AGENTS = ["human", "2", "-x", "a.b", "busy", "copy", "typing"];

beforeAll(async () => {
  repo = tempRepo();
  root = ensureRoot(repo.mailDir);
  bin = installFakeAgents(repo.dir);
  server = TmuxServer.start([...AGENTS, "asking", "plain", "left"], repo.dir);
  for (const name of AGENTS) await startFakeAgent(server, name, fakeClaude(bin));
  await startFakeAgent(server, "asking", fakeClaude(bin, "--prompt", "Sure? [y/N]: "), "Sure? [y/N]: ");
});
afterAll(() => {
  server.stop();
  repo.remove();
});

/** Polls with the shared waitFor, every 25 ms, for at most `ms`; a timeout names the condition it waited for. */
const until = (check: () => boolean, ms = 30_000) => waitFor(() => String(check), check, ms, 25);

const occurrences = (text: string, needle: string) => text.split(needle).length - 1;
/** Reminders an agent's stand-in took (it answers each line it is given with `got: <line>`). */
const taken = (name: string, text = "agentmail: ") => occurrences(server.capture(name), `got: ${text}`);
const register = (name: string, status: "ready" | "work" = "ready") => writeStatus(root, { name, status, pane: server.agent(name).paneId });

/** A new window running a stand-in agent CLI (with these options) at its prompt. */
async function agentWindow(name: string, ...options: string[]) {
  const agent = server.addWindow(name, repo.dir);
  await startFakeAgent(server, name, fakeClaude(bin, ...options));
  return agent;
}

/** Runs the mailman loop in process, collecting its log lines, until `stop` aborts. */
type Timing = { intervalMs: number; sweepMs: number };
function loop(env: Record<string, string>, timing: Timing, logs: string[], stop: AbortController) {
  return runMailman({
    store: new FileStore(root),
    root,
    env,
    project: null,
    ...timing,
    typing: "all",
    log: (line) => logs.push(line),
    signal: stop.signal,
  });
}

describe("the mailman", () => {
  test("who holds a pane's terminal is read from /proc; a bad or gone pid, or a process without a terminal, gives null", () => {
    const pane = (name: string) => {
      const fields = server.run(["display-message", "-p", "-t", server.agent(name).paneId, "#{pane_pid} #{pane_tty}"]).trim();
      const [pid, tty] = fields.split(" ");
      return { pid: Number(pid), tty: tty! };
    };
    if (process.platform === "linux") {
      const shell = pane("plain");
      expect(readForeground(shell.pid, shell.tty)).toEqual({
        leader: { pid: shell.pid, exe: realpathSync(Bun.which("bash")!), argv: ["bash", "--norc", "--noprofile", "-i"], comm: "bash" },
        readers: [],
      });
      const agent = pane("human");
      const foreground = readForeground(agent.pid, agent.tty)!;
      expect(foreground.leader).toMatchObject({ argv: ["claude"], exe: realpathSync(Bun.which("node")!) });
      expect(gate.paneAgent(foreground)).toBe("claude");
    }
    expect(readForeground(0, "/dev/null")).toBeNull();
    expect(readForeground(-1, "/dev/null")).toBeNull();
    expect(readForeground(2 ** 30, "/dev/null")).toBeNull();
    expect(readForeground(process.pid, "/dev/null")).toBeNull();
  });

  test("onboard registers the caller (status ready, its pane); a store that cannot take it is a warning, not a failure", async () => {
    const env = { TMUX: server.agent("human").env.TMUX, TMUX_PANE: server.agent("human").paneId };
    const onboard = await runInProcess(["onboard"], { env, cwd: repo.dir });
    expect({ code: onboard.code, stderr: onboard.stderr }).toEqual({ code: 0, stderr: "" });
    expect(readStatus(root, "human")).toMatchObject({ status: "ready", pane: server.agent("human").paneId });
    removeStatus(root, "human");
    const notADirectory = join(repo.dir, "not-a-directory");
    writeFileSync(notADirectory, "");
    const refused = await runInProcess(["onboard"], { env: { ...env, AGENTMAIL_DIR: notADirectory }, cwd: repo.dir });
    expect(refused.code).toBe(0);
    expect(refused.stdout).toContain('You are "human"');
    expect(refused.stderr).toStartWith("warning: could not register you for reminders: ");
  });

  test("one mailman per store", async () => {
    await claimMailman(root);
    expect(runningMailman(root)?.pid).toBe(process.pid);
    releaseMailman(root);
    expect(runningMailman(root)).toBeNull();
  });

  test("reminds agent CLIs by pane id, once per burst; never busy, copy-mode, half-typed or question panes, nor shells", async () => {
    for (const name of ["2", "-x", "a.b", "copy", "typing", "asking", "left"]) register(name);
    register("busy", "work");
    server.run(["copy-mode", "-t", server.agent("copy").paneId]);
    server.run(["send-keys", "-t", server.agent("typing").paneId, "-l", "echo half"]);
    await until(() => server.capture("typing").includes("> echo half"));
    for (const name of ["2", "-x", "a.b", "busy", "copy", "typing", "asking", "plain", "left"]) {
      await appendMessage(root, createMessage("human", name, `hi ${name}`));
    }
    for (let i = 0; i < 20; i++) await appendMessage(root, createMessage("human", "a.b", `burst ${i}`));
    const logs: string[] = [];
    const stop = new AbortController();
    const running = loop(server.agent("human").env, { intervalMs: 60_000, sweepMs: 100 }, logs, stop);
    try {
      await until(() => taken("2", rules.reminderText(1)) === 1);
      await until(() => taken("-x", rules.reminderText(1)) === 1);
      await until(() => taken("a.b", rules.reminderText(21)) === 1);
      await until(() => logs.some((line) => line.includes("copy mode")));
      await until(() => logs.some((line) => line.includes("half-typed")));
      await until(() => logs.some((line) => line.includes("question")));
      await until(() => logs.some((line) => line.includes('not reminding "plain"')));
      await until(() => logs.some((line) => line.includes('not reminding "left"')));
      expect(taken("a.b")).toBe(1);
      expect(taken("busy")).toBe(0);
      expect(taken("typing")).toBe(0);
      expect(taken("asking")).toBe(0);
      for (const shell of ["plain", "left"]) expect(server.capture(shell)).not.toContain("agentmail");
      // The state file is written at the end of each sweep.
      await until(() => readMailmanState(root)?.agents.left?.outcome === "no_agent_pane");
      const state = readMailmanState(root)!;
      expect(state.agents["a.b"]).toMatchObject({ outcome: "reminded", detail: `in ${server.agent("a.b").paneId}` });
      expect(state.agents.busy).toMatchObject({ outcome: "not_ready", detail: "status work", last_reminded_at: null });
      const shellDetail = (name: string) => `pane ${server.agent(name).paneId} runs bash, not an agent CLI`;
      expect(state.agents.plain).toMatchObject({ outcome: "no_agent_pane", detail: shellDetail("plain"), last_reminded_at: null });
      expect(state.agents.left).toMatchObject({ outcome: "no_agent_pane", detail: shellDetail("left"), last_reminded_at: null });
      expect(state.agents.asking).toMatchObject({ outcome: "waiting" });
      expect(state.agents.asking!.detail).toContain("question");
      server.run(["send-keys", "-t", server.agent("copy").paneId, "-X", "cancel"]);
      server.run(["send-keys", "-t", server.agent("typing").paneId, "C-u"]);
      await until(() => taken("copy", rules.reminderText(1)) === 1);
      await until(() => taken("typing", rules.reminderText(1)) === 1);
      await until(() => readMailmanState(root)?.last_action?.startsWith("reminded") === true);
      // Each waiting reason was logged once, not on every sweep.
      expect(logs.filter((line) => line.includes("copy mode")).length).toBe(1);
      expect(logs.filter((line) => line.includes('not reminding "plain"')).length).toBe(1);
      expect(logs.filter((line) => line.includes('not reminding "left"'))).toEqual([
        `not reminding "left": ${shellDetail("left")}; reminders are typed only into an agent CLI (claude, codex, gemini) at its prompt; will retry`,
      ]);
    } finally {
      stop.abort();
      await running;
    }
  });

  test("reminds again after the interval while mail stays unread, and forgets read mail and vanished windows", async () => {
    const agent = await agentWindow("later");
    register("later");
    await appendMessage(root, createMessage("human", "later", "x"));
    await appendMessage(root, createMessage("human", "ghost", "nobody reads this"));
    for (const name of ["__proto__", "constructor"]) await appendMessage(root, createMessage("human", name, "names are data"));
    const logs: string[] = [];
    const stop = new AbortController();
    const running = loop(agent.env, { intervalMs: 300, sweepMs: 50 }, logs, stop);
    try {
      await until(() => taken("later", rules.reminderText(1)) >= 2);
      expect(logs.filter((line) => line.includes('dropped "ghost"')).length).toBe(1);
      await takeOldestUnread(root, "later", () => {});
      // The canary: mail for human sent after later's was read. Its first reminder comes from a sweep that saw later
      // read (any sweep in flight before has ended by then); its second from a sweep a whole interval later.
      register("human");
      await appendMessage(root, createMessage("human", "human", "canary"));
      await until(() => taken("human", rules.reminderText(1)) >= 1);
      const count = taken("later", rules.reminderText(1));
      await until(() => taken("human", rules.reminderText(1)) >= 2);
      expect(taken("later", rules.reminderText(1))).toBe(count);
      expect(readMailmanState(root)?.agents.later).toMatchObject({ outcome: "reminded" });
      for (const name of ["__proto__", "constructor", "ghost"]) {
        expect(Object.hasOwn(readMailmanState(root)!.agents, name)).toBe(true);
        expect(readMailmanState(root)!.agents[name]).toMatchObject({ outcome: "no_window", last_reminded_at: null });
      }
    } finally {
      stop.abort();
      await running;
      await takeOldestUnread(root, "human", () => {});
    }
  });

  test("a symlink or FIFO named like a mailbox is reported once and skipped; the others are still reminded", async () => {
    const agent = await agentWindow("fine");
    register("fine");
    mkdirSync(join(repo.dir, "elsewhere"), { recursive: true });
    writeFileSync(join(repo.dir, "elsewhere", "x.jsonl"), "");
    symlinkSync(join(repo.dir, "elsewhere", "x.jsonl"), join(root, "linked.jsonl"));
    expect(Bun.spawnSync(["mkfifo", join(root, "piped.jsonl")]).exitCode).toBe(0);
    await appendMessage(root, createMessage("human", "fine", "hello"));
    const logs: string[] = [];
    const stop = new AbortController();
    const running = loop(agent.env, { intervalMs: 200, sweepMs: 50 }, logs, stop);
    try {
      await until(() => taken("fine", rules.reminderText(1)) >= 2);
      for (const name of ["linked", "piped"]) {
        const lines = logs.filter((line) => line.includes(`${name}.jsonl`));
        expect({ name, lines: lines.length }).toEqual({ name, lines: 1 });
        expect(lines[0]).toContain(`skipping the mailbox of "${name}"`);
        expect(lines[0]).toContain("remove it");
        expect(readMailmanState(root)?.agents[name]).toMatchObject({ outcome: "unreadable" });
      }
    } finally {
      stop.abort();
      await running;
    }
  });

  test("a sweep that keeps failing the same way (state file unwritable) is logged once, and reminders go on", async () => {
    const other = tempRepo();
    const otherRoot = ensureRoot(other.mailDir);
    const agent = await agentWindow("stateless");
    try {
      mkdirSync(join(otherRoot, ".mailman", "state.json"), { recursive: true });
      writeStatus(otherRoot, { name: "stateless", status: "ready", pane: agent.paneId });
      await appendMessage(otherRoot, createMessage("human", "stateless", "hello"));
      const logs: string[] = [];
      const stop = new AbortController();
      const log = (line: string) => logs.push(line);
      const running = runMailman({
        store: new FileStore(otherRoot),
        root: otherRoot,
        env: agent.env,
        project: null,
        intervalMs: 200,
        sweepMs: 50,
        typing: "all",
        log,
        signal: stop.signal,
      });
      try {
        await until(() => taken("stateless", rules.reminderText(1)) >= 3);
        expect(logs.filter((line) => line.startsWith("sweep failed: ")).length).toBe(1);
      } finally {
        stop.abort();
        await running;
      }
    } finally {
      other.remove();
    }
  });

  test("a reminder whose Enter is lost gets a second Enter; one that still sits on the line is given up and logged", async () => {
    // "swallow" ignores the first Enter, so the second one submits. "deaf" ignores every Enter.
    await agentWindow("swallow", "--swallow");
    const deaf = await agentWindow("deaf", "--deaf");
    for (const name of ["swallow", "deaf"]) register(name);
    await appendMessage(root, createMessage("human", "swallow", "knock"));
    await appendMessage(root, createMessage("human", "deaf", "knock"));
    const logs: string[] = [];
    const stop = new AbortController();
    const running = loop(deaf.env, { intervalMs: 60_000, sweepMs: 50 }, logs, stop);
    try {
      await until(() => readMailmanState(root)?.agents.deaf?.outcome === "not_submitted");
      await until(() => readMailmanState(root)?.agents.swallow?.outcome === "reminded");
      const swallow = server.agent("swallow").paneId;
      expect(readMailmanState(root)!.agents.swallow!.detail).toBe(`in ${swallow} (submitted after a second Enter)`);
      expect(taken("swallow", rules.reminderText(1))).toBe(1);
      const detail = `pane ${deaf.paneId} still shows the reminder on its input line after a second Enter`;
      expect(readMailmanState(root)!.agents.deaf).toMatchObject({ detail, last_reminded_at: null });
      expect(logs.filter((line) => line.startsWith('reminder for "deaf" not submitted: ')).length).toBe(1);
      // Given up for the interval: later sweeps type nothing more (the canary: a reminder for a later message).
      register("human");
      await appendMessage(root, createMessage("human", "human", "canary"));
      await until(() => taken("human", rules.reminderText(1)) >= 1);
      expect(occurrences(server.capture("deaf"), rules.reminderText(1))).toBe(1);
    } finally {
      stop.abort();
      await running;
      await takeOldestUnread(root, "human", () => {});
    }
  });

  test("role mail reminds every ready member of the role, and no one else", async () => {
    const first = await agentWindow("member-1");
    await agentWindow("member-2");
    await agentWindow("member-busy");
    for (const name of ["member-1", "member-2"]) register(name);
    register("member-busy", "work");
    await updateMemberships(root, "roles", (roles) => void roles.set("triage", ["member-1", "member-2", "member-busy"]));
    const queue = roleQueue(root, "triage");
    await appendMessage(ensureRoot(queue.root), createMessage("human", queue.mailbox, "who takes it?"));
    const logs: string[] = [];
    const stop = new AbortController();
    const running = loop(first.env, { intervalMs: 60_000, sweepMs: 50 }, logs, stop);
    try {
      await until(() => taken("member-1") === 1 && taken("member-2") === 1);
      await until(() => readMailmanState(root)?.agents["member-busy"]?.outcome === "not_ready");
      expect(taken("member-busy")).toBe(0);
    } finally {
      stop.abort();
      await running;
    }
  });
});
