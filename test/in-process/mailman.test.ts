/**
 * The mailman in process: its rules (whom to remind, which pane, what line may be typed into, the text), and its
 * loop against a private tmux server (reminding registered panes by id, once per burst, never busy, copy-mode,
 * half-typed or question panes; one unreadable mailbox skipped and reported once; each agent's last reminder kept).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createMessage } from "../../src/core/message.ts";
import * as rules from "../../src/core/reminders.ts";
import { runMailman } from "../../src/mailman/reminder-loop.ts";
import { appendMessage, takeOldestUnread } from "../../src/store/mailbox.ts";
import { updateMemberships } from "../../src/store/memberships.ts";
import { roleQueue } from "../../src/store/role-mail.ts";
import { claimMailman, readMailmanState, releaseMailman, runningMailman } from "../../src/store/mailman-files.ts";
import { ensureRoot } from "../../src/store/paths.ts";
import { readStatus, removeStatus, writeStatus } from "../../src/store/status.ts";
import { foregroundCommandLine } from "../../src/tmux/foreground.ts";
import { runInProcess } from "../support/in-process.ts";
import { tempRepo } from "../support/repo.ts";
import { TmuxServer } from "../support/tmux-server.ts";
import { waitFor } from "../support/workflow.ts";
import { FileStore } from "../../src/store/file-store.ts";

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

  test("a known agent CLI is known by its program, or by the script an interpreter runs", () => {
    expect(rules.agentProgram("claude", null)).toBe("claude");
    expect(rules.agentProgram("codex", null)).toBe("codex");
    expect(rules.agentProgram("node", ["node", "/usr/local/bin/gemini", "-p", "x"])).toBe("gemini");
    const codexFromNpm = ["node", "--max-old-space-size=8192", "/usr/lib/node_modules/@openai/codex/bin/codex.js"];
    expect(rules.agentProgram("node", codexFromNpm)).toBe("codex");
    expect(rules.agentProgram("bun", ["bun", "/opt/claude"])).toBe("claude");
    expect(rules.agentProgram("node", ["node", "/srv/app/server.js"])).toBeNull();
    expect(rules.agentProgram("node", null)).toBeNull();
    expect(rules.agentProgram("node", ["node"])).toBeNull();
    expect(rules.agentProgram("bash", ["bash", "claude"])).toBeNull();
    expect(rules.agentProgram("vim", null)).toBeNull();
  });

  const panes = [
    { paneId: "%1", windowId: "@1", windowName: "bob", active: true, agent: null },
    { paneId: "%2", windowId: "@1", windowName: "bob", active: false, agent: "claude" },
    { paneId: "%3", windowId: "@2", windowName: "bob", active: true, agent: "codex" },
    { paneId: "%5", windowId: "@2", windowName: "bob", active: false, agent: "codex" },
    { paneId: "%4", windowId: "@3", windowName: "bobby", active: true, agent: "claude" },
  ];
  const ids = (list: { paneId: string }[]) => list.map((pane) => pane.paneId);

  test("the registered pane wins while it sits in a window of that name", () => {
    expect(ids(rules.targetPanes({ ...view, statusPane: "%1" }, panes))).toEqual(["%1"]);
    expect(ids(rules.targetPanes({ ...view, statusPane: "%1" }, panes, true))).toEqual(["%1"]);
  });

  test("otherwise the agent panes of each window of that name, the active one when it is one", () => {
    expect(ids(rules.targetPanes(view, panes))).toEqual(["%2", "%3"]);
    expect(ids(rules.targetPanes({ ...view, statusPane: "%4" }, panes))).toEqual(["%2", "%3"]);
    expect(rules.targetPanes({ ...view, name: "nobody" }, panes)).toEqual([]);
    expect(rules.targetPanes(view, [panes[0]!])).toEqual([]);
  });

  test("--all-panes: the active pane of each window of that name, whatever it runs", () => {
    expect(ids(rules.targetPanes(view, panes, true))).toEqual(["%1", "%3"]);
  });

  test("copy mode, and the alternate screen of anything but an agent CLI, are refused before the line is read", () => {
    expect(rules.paneRefusal({ inMode: true, alternateScreen: false, agent: "claude" })).toMatch(/copy mode/);
    expect(rules.paneRefusal({ inMode: false, alternateScreen: true, agent: null })).toMatch(/alternate screen/);
    expect(rules.paneRefusal({ inMode: false, alternateScreen: true, agent: "gemini" })).toBeNull();
    expect(rules.paneRefusal({ inMode: false, alternateScreen: false, agent: null })).toBeNull();
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
    for (const line of questions) expect({ line, question: rules.looksLikeQuestion(line) }).toEqual({ line, question: true });
    const prompts = ["$ ", "bash-5.2$ ", "user@host:~/password-store$ ", "> ", "│ > ", "❯ ", "› ", "# ", ""];
    for (const line of prompts) expect({ line, question: rules.looksLikeQuestion(line) }).toEqual({ line, question: false });
  });

  test("an idle prompt ends with a prompt character; ':' and questions are never idle; blank only for agent CLIs", () => {
    for (const line of ["$ ", "user@host:~/repo$ ", "> ", "│ > ", "❯ ", "› ", "# ", "% ", "λ "]) {
      expect({ line, idle: rules.looksIdle(line, false) }).toEqual({ line, idle: true });
    }
    for (const line of ["$ git sta", "> fix the", "hello", "Name: ", "Delete all files? [y/N]: ", "Password: ", "Continue? "]) {
      expect({ line, idle: rules.looksIdle(line, true) }).toEqual({ line, idle: false });
    }
    expect(rules.looksIdle("", true)).toBe(true);
    expect(rules.looksIdle("   ", false)).toBe(false);
  });
});

let repo: ReturnType<typeof tempRepo>;
let server: TmuxServer;
let root: string;

beforeAll(() => {
  repo = tempRepo();
  root = ensureRoot(repo.mailDir);
  server = TmuxServer.start(["human", "2", "-x", "a.b", "busy", "copy", "typing", "asking", "plain"], repo.dir);
});
afterAll(() => {
  server.stop();
  repo.remove();
});

/** Polls with the shared waitFor, every 25 ms, for at most `ms`. */
const until = (check: () => boolean, ms = 5000) => waitFor(check, ms, 25);

const occurrences = (text: string, needle: string) => text.split(needle).length - 1;
const reminders = (name: string) => occurrences(server.capture(name), "agentmail: ");
const register = (name: string, status: "ready" | "work" = "ready") => writeStatus(root, name, status, server.agent(name).paneId);

/** Runs the mailman loop in process, collecting its log lines, until `stop` aborts. */
type Timing = { intervalMs: number; sweepMs: number; allPanes?: boolean };
function loop(env: Record<string, string>, timing: Timing, logs: string[], stop: AbortController) {
  return runMailman({
    store: new FileStore(root),
    root,
    env,
    allPanes: false,
    ...timing,
    log: (line) => logs.push(line),
    signal: stop.signal,
  });
}

describe("the mailman", () => {
  test("a pane's foreground command line is read from /proc; a bad or gone pid, or a process without a terminal, gives null", () => {
    const panePid = Number(server.run(["display-message", "-p", "-t", server.agent("human").paneId, "#{pane_pid}"]).trim());
    if (process.platform === "linux") expect(foregroundCommandLine(panePid)).toEqual(["bash", "--norc", "--noprofile", "-i"]);
    expect(foregroundCommandLine(0)).toBeNull();
    expect(foregroundCommandLine(-1)).toBeNull();
    expect(foregroundCommandLine(2 ** 30)).toBeNull();
    expect(foregroundCommandLine(process.pid)).toBeNull();
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

  test("reminds registered panes by id, once per burst, never busy, copy-mode, half-typed, question or unregistered panes", async () => {
    for (const name of ["2", "-x", "a.b", "copy", "typing", "asking"]) register(name);
    register("busy", "work");
    server.run(["copy-mode", "-t", server.agent("copy").paneId]);
    server.run(["send-keys", "-t", server.agent("typing").paneId, "-l", "echo half"]);
    server.run(["send-keys", "-t", server.agent("asking").paneId, "-l", `read -p "Sure? [y/N]: " x; echo "answer=[$x]"`]);
    server.run(["send-keys", "-t", server.agent("asking").paneId, "Enter"]);
    expect(await until(() => server.capture("asking").includes("Sure? [y/N]: \n"))).toBe(true);
    for (const name of ["2", "-x", "a.b", "busy", "copy", "typing", "asking", "plain"]) {
      await appendMessage(root, createMessage("human", name, `hi ${name}`));
    }
    for (let i = 0; i < 20; i++) await appendMessage(root, createMessage("human", "a.b", `burst ${i}`));
    const logs: string[] = [];
    const stop = new AbortController();
    const running = loop(server.agent("human").env, { intervalMs: 60_000, sweepMs: 100 }, logs, stop);
    try {
      expect(await until(() => server.capture("2").includes(rules.reminderText(1)))).toBe(true);
      expect(await until(() => server.capture("-x").includes(rules.reminderText(1)))).toBe(true);
      expect(await until(() => server.capture("a.b").includes(rules.reminderText(21)))).toBe(true);
      expect(await until(() => logs.some((line) => line.includes("copy mode")))).toBe(true);
      expect(await until(() => logs.some((line) => line.includes("half-typed")))).toBe(true);
      expect(await until(() => logs.some((line) => line.includes("question")))).toBe(true);
      expect(await until(() => logs.some((line) => line.includes('not reminding "plain"')))).toBe(true);
      expect(reminders("a.b")).toBe(1);
      expect(reminders("busy")).toBe(0);
      expect(reminders("typing")).toBe(0);
      expect(reminders("plain")).toBe(0);
      expect(server.capture("asking")).not.toMatch(/^answer=/m);
      // The state file is written at the end of each sweep.
      expect(await until(() => readMailmanState(root)?.agents.plain?.outcome === "no_agent_pane")).toBe(true);
      const state = readMailmanState(root)!;
      expect(state.agents["a.b"]).toMatchObject({ outcome: "reminded", detail: `in ${server.agent("a.b").paneId}` });
      expect(state.agents.busy).toMatchObject({ outcome: "not_ready", detail: "status work", last_reminded_at: null });
      expect(state.agents.plain).toMatchObject({ outcome: "no_agent_pane", last_reminded_at: null });
      expect(state.agents.asking).toMatchObject({ outcome: "waiting" });
      expect(state.agents.asking!.detail).toContain("question");
      server.run(["send-keys", "-t", server.agent("copy").paneId, "-X", "cancel"]);
      server.run(["send-keys", "-t", server.agent("typing").paneId, "C-u"]);
      expect(await until(() => server.capture("copy").includes(rules.reminderText(1)))).toBe(true);
      expect(await until(() => server.capture("typing").includes(rules.reminderText(1)))).toBe(true);
      expect(await until(() => readMailmanState(root)?.last_action?.startsWith("reminded") === true)).toBe(true);
      // Each waiting reason was logged once, not on every sweep.
      expect(logs.filter((line) => line.includes("copy mode")).length).toBe(1);
      expect(logs.filter((line) => line.includes('not reminding "plain"')).length).toBe(1);
    } finally {
      stop.abort();
      await running;
    }
  });

  test("reminds again after the interval while mail stays unread, and forgets read mail and vanished windows", async () => {
    const agent = server.addWindow("later", repo.dir);
    register("later");
    await appendMessage(root, createMessage("human", "later", "x"));
    await appendMessage(root, createMessage("human", "ghost", "nobody reads this"));
    for (const name of ["__proto__", "constructor"]) await appendMessage(root, createMessage("human", name, "names are data"));
    const logs: string[] = [];
    const stop = new AbortController();
    const running = loop(agent.env, { intervalMs: 300, sweepMs: 50 }, logs, stop);
    try {
      expect(await until(() => occurrences(server.capture("later"), rules.reminderText(1)) >= 2)).toBe(true);
      expect(logs.filter((line) => line.includes('dropped "ghost"')).length).toBe(1);
      await takeOldestUnread(root, "later", () => {});
      // The canary: mail for human sent after later's was read. Its first reminder comes from a sweep that saw later
      // read (any sweep in flight before has ended by then); its second from a sweep a whole interval later.
      register("human");
      await appendMessage(root, createMessage("human", "human", "canary"));
      expect(await until(() => occurrences(server.capture("human"), rules.reminderText(1)) >= 1)).toBe(true);
      const count = occurrences(server.capture("later"), rules.reminderText(1));
      expect(await until(() => occurrences(server.capture("human"), rules.reminderText(1)) >= 2)).toBe(true);
      expect(occurrences(server.capture("later"), rules.reminderText(1))).toBe(count);
      expect(readMailmanState(root)?.agents.later).toMatchObject({ outcome: "reminded" });
      for (const name of ["__proto__", "constructor", "ghost"]) {
        expect(Object.hasOwn(readMailmanState(root)!.agents, name)).toBe(true);
        expect(readMailmanState(root)!.agents[name]).toMatchObject({ outcome: "no_window", last_reminded_at: null });
      }
    } finally {
      stop.abort();
      await running;
    }
  });

  test("a symlink or FIFO named like a mailbox is reported once and skipped; the others are still reminded", async () => {
    const agent = server.addWindow("fine", repo.dir);
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
      expect(await until(() => occurrences(server.capture("fine"), rules.reminderText(1)) >= 2)).toBe(true);
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
    const agent = server.addWindow("stateless", other.dir);
    try {
      mkdirSync(join(otherRoot, ".mailman", "state.json"), { recursive: true });
      writeStatus(otherRoot, "stateless", "ready", agent.paneId);
      await appendMessage(otherRoot, createMessage("human", "stateless", "hello"));
      const logs: string[] = [];
      const stop = new AbortController();
      const log = (line: string) => logs.push(line);
      const running = runMailman({
        store: new FileStore(otherRoot),
        root: otherRoot,
        env: agent.env,
        intervalMs: 200,
        sweepMs: 50,
        allPanes: false,
        log,
        signal: stop.signal,
      });
      try {
        expect(await until(() => occurrences(server.capture("stateless"), rules.reminderText(1)) >= 3)).toBe(true);
        expect(logs.filter((line) => line.startsWith("sweep failed: ")).length).toBe(1);
      } finally {
        stop.abort();
        await running;
      }
    } finally {
      other.remove();
    }
  });

  /** A window whose bash takes Enter as `binding` until that binding says otherwise. */
  async function windowWithEnter(name: string, binding: string) {
    const agent = server.addWindow(name, repo.dir);
    server.run(["send-keys", "-t", agent.paneId, "-l", binding]);
    server.run(["send-keys", "-t", agent.paneId, "Enter"]);
    server.run(["send-keys", "-t", agent.paneId, "C-l"]);
    expect(await until(() => /^\S*[$#] *$/.test(server.capture(name).trim()))).toBe(true);
    register(name);
    return agent;
  }

  test("a reminder whose Enter is lost gets a second Enter; one that still sits on the line is given up and logged", async () => {
    // "swallow": the first Enter only rebinds Enter, so the second one submits. "deaf": Enter never submits.
    await windowWithEnter("swallow", `bind -x '"\\C-m": bind "\\"\\\\C-m\\": accept-line"'`);
    const deaf = await windowWithEnter("deaf", `bind '"\\C-m": redraw-current-line'`);
    await appendMessage(root, createMessage("human", "swallow", "knock"));
    await appendMessage(root, createMessage("human", "deaf", "knock"));
    const logs: string[] = [];
    const stop = new AbortController();
    const running = loop(deaf.env, { intervalMs: 60_000, sweepMs: 50 }, logs, stop);
    try {
      expect(await until(() => readMailmanState(root)?.agents.deaf?.outcome === "not_submitted", 10_000)).toBe(true);
      expect(await until(() => readMailmanState(root)?.agents.swallow?.outcome === "reminded", 10_000)).toBe(true);
      const swallow = server.agent("swallow").paneId;
      expect(readMailmanState(root)!.agents.swallow!.detail).toBe(`in ${swallow} (submitted after a second Enter)`);
      expect(server.capture("swallow")).toContain("bash: agentmail:: command not found");
      const detail = `pane ${deaf.paneId} still shows the reminder on its input line after a second Enter`;
      expect(readMailmanState(root)!.agents.deaf).toMatchObject({ detail, last_reminded_at: null });
      expect(logs.filter((line) => line.startsWith('reminder for "deaf" not submitted: ')).length).toBe(1);
      // Given up for the interval: later sweeps type nothing more (the canary: a reminder for a later message).
      register("human");
      await appendMessage(root, createMessage("human", "human", "canary"));
      expect(await until(() => reminders("human") >= 1)).toBe(true);
      expect(reminders("deaf")).toBe(1);
    } finally {
      stop.abort();
      await running;
      await takeOldestUnread(root, "human", () => {});
    }
  });

  test("role mail reminds every ready member of the role, and no one else", async () => {
    const first = server.addWindow("member-1", repo.dir);
    server.addWindow("member-2", repo.dir);
    server.addWindow("member-busy", repo.dir);
    for (const name of ["member-1", "member-2"]) register(name);
    register("member-busy", "work");
    await updateMemberships(root, "roles", (roles) => void roles.set("triage", ["member-1", "member-2", "member-busy"]));
    const queue = roleQueue(root, "triage");
    await appendMessage(ensureRoot(queue.root), createMessage("human", queue.mailbox, "who takes it?"));
    const logs: string[] = [];
    const stop = new AbortController();
    const running = loop(first.env, { intervalMs: 60_000, sweepMs: 50 }, logs, stop);
    try {
      expect(await until(() => reminders("member-1") === 1 && reminders("member-2") === 1)).toBe(true);
      expect(await until(() => readMailmanState(root)?.agents["member-busy"]?.outcome === "not_ready")).toBe(true);
      expect(reminders("member-busy")).toBe(0);
    } finally {
      stop.abort();
      await running;
    }
  });

  test("--all-panes reminds an unregistered shell but never a question", async () => {
    const plain = server.addWindow("open", repo.dir);
    const asking = server.addWindow("open-ask", repo.dir);
    server.run(["send-keys", "-t", asking.paneId, "-l", `read -p "Password: " x; echo "answer=[$x]"`]);
    server.run(["send-keys", "-t", asking.paneId, "Enter"]);
    expect(await until(() => server.capture("open-ask").includes("Password: \n"))).toBe(true);
    expect(await until(() => /[$#] *$/.test(server.capture("open").trimEnd()))).toBe(true);
    await appendMessage(root, createMessage("human", "open-ask", "secret"));
    await appendMessage(root, createMessage("human", "open", "hello"));
    const logs: string[] = [];
    const stop = new AbortController();
    const running = loop(plain.env, { intervalMs: 200, sweepMs: 50, allPanes: true }, logs, stop);
    try {
      expect(await until(() => occurrences(server.capture("open"), rules.reminderText(1)) >= 2)).toBe(true);
      expect(server.capture("open-ask")).not.toMatch(/^answer=/m);
      expect(logs.filter((line) => line.includes('"open-ask"') && line.includes("question")).length).toBe(1);
    } finally {
      stop.abort();
      await running;
    }
  });
});
