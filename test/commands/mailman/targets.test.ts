/**
 * Whom the mailman types into, end to end in a private tmux server: only panes a known agent CLI holds (registered
 * or not; on the alternate screen too), never a shell, an editor or a pager (registered or not), never a question
 * or password prompt; `--all-panes`, the old rule that typed into any pane, is gone. A bad entry in the store (a
 * symlink or a FIFO named like a mailbox) is reported once and stops nobody else. (What runs in a pane's foreground
 * is covered in typing-gate.test.ts.)
 *
 * Nothing here measures time. "Nothing was typed" is proved with a canary: a registered agent CLI that got mail
 * after everyone else, and whose second reminder (a whole interval later, from a later sweep) has shown up.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fakeClaude, startFakeAgent } from "../../support/fake-agent.ts";
import { mailmanWorld } from "../../support/mailman-world.ts";
import { am, expectSent, occurrences, oneJson, waitFor, waitForPrompt } from "../../support/workflow.ts";

/** The reminder as this build types it, and any reminder any build ever typed (to catch one typed anywhere). */
const REMINDER = /agentmail: \d+ unread messages?\. Run agentmail receive\./;
const ANY_REMINDER = /agentmail: \d+ unread|unread agentmail message/;
/** A reminder a stand-in agent CLI took: it answers each line it is given with `got: <line>`. */
const TAKEN = /got: agentmail: \d+ unread/;
const QUESTION = `read -p "Delete all files? [y/N]: " x; echo "answer=[$x]"`;

/** The mailman's world (test/support/mailman-world.ts): stand-in agent CLIs in `bin/`, windows at a shell prompt. */
function world(names: string[]) {
  const w = Object.assign(mailmanWorld(names, TAKEN), {
    screen: (name: string) => w.server.capture(name),
    /** Types a command line into a pane's shell. */
    type(name: string, line: string) {
      w.server.run(["send-keys", "-t", w.server.agent(name).paneId, "-l", line]);
      w.server.run(["send-keys", "-t", w.server.agent(name).paneId, "Enter"]);
    },
    async register(name: string) {
      expect((await am(["status", "ready"], w.as(name))).code).toBe(0);
    },
    async until(name: string, what: RegExp | string) {
      const test = (text: string) => (typeof what === "string" ? text.includes(what) : what.test(text));
      await waitFor(
        () => `pane ${name} to show ${what}:\n${w.text(name)}`,
        () => test(w.text(name)),
      );
    },
  });
  beforeAll(async () => {
    for (const name of names) await waitForPrompt(w.server, name);
  });
  return w;
}

describe("whom the mailman reminds: agent CLIs only", () => {
  const NAMES = ["alice", "reg", "plain", "asker", "asker-reg", "vim", "less", "claude", "codex", "gemini", "tool", "onboarded"];
  const before: Record<string, string> = {};
  const w = world(NAMES);
  beforeAll(async () => {
    for (const name of ["reg", "asker-reg", "vim", "less"]) await w.register(name);
    writeFileSync(join(w.repo.dir, "long.txt"), Array.from({ length: 500 }, (_, i) => `line ${i + 1}`).join("\n") + "\n");
    w.type("asker-reg", QUESTION);
    w.type("vim", "vim -u NONE -N long.txt");
    w.type("less", "less long.txt");
    await startFakeAgent(w.server, "reg", fakeClaude(w.bin));
    await startFakeAgent(w.server, "onboarded", fakeClaude(w.bin));
    await startFakeAgent(w.server, "asker", fakeClaude(w.bin, "--prompt", "Delete all files? [y/N]: "), "Delete all files? [y/N]: ");
    await startFakeAgent(w.server, "claude", fakeClaude(w.bin));
    await startFakeAgent(w.server, "codex", `${w.bin}/codex`);
    await startFakeAgent(w.server, "gemini", `${w.bin}/gemini --alt`);
    await startFakeAgent(w.server, "tool", `${w.bin}/tool`);
    // Claude Code's SessionStart hook runs onboard in the agent's pane: that registers it too.
    const onboard = await am(["onboard"], w.as("onboarded"));
    expect({ code: onboard.code, stderr: onboard.stderr }).toEqual({ code: 0, stderr: "" });
    await w.until("asker-reg", "Delete all files? [y/N]: ");
    await waitFor(
      () => `vim to show line 49:\n${w.screen("vim")}`,
      () => w.screen("vim").includes("line 49"),
    );
    await waitFor(
      () => `less to show line 49:\n${w.screen("less")}`,
      () => w.screen("less").includes("line 49"),
    );
    // One line down: less now shows its `:` prompt, which the old rules took for an idle prompt.
    w.server.run(["send-keys", "-t", w.server.agent("less").paneId, "j"]);
    await waitFor(
      () => `less to show line 50:\n${w.screen("less")}`,
      () => w.screen("less").includes("line 50"),
    );
    before.vim = w.screen("vim");
    before.less = w.screen("less");
    await w.startMailman(["--interval", "2", "--sweep", "0.2"]);
    for (const name of NAMES.slice(2)) expectSent(await am(["send", name, `mail for ${name}`], w.as("alice")));
    // The canary: mail sent after everyone else's, reminded twice, so a whole sweep ran after the others were seen.
    expectSent(await am(["send", "reg", "canary"], w.as("alice")));
    await w.waitReminders("reg", 2);
  });

  test("a registered agent CLI is reminded, with a text that starts with 'agentmail:'", () => {
    expect(w.reminders("reg")).toBeGreaterThanOrEqual(2);
    expect(w.text("reg")).toMatch(REMINDER);
    expect(w.text("reg")).toContain("got: agentmail: 1 unread message. Run agentmail receive.");
  });

  test("an agent CLI whose SessionStart hook ran onboard is reminded", async () => {
    await w.waitReminders("onboarded", 1);
    expect(w.text("onboarded")).toContain("got: agentmail: 1 unread message. Run agentmail receive.");
  });

  test("an agent CLI showing a question is not answered", () => {
    expect(w.text("asker")).not.toMatch(ANY_REMINDER);
  });

  test("a read -p question in a registered shell is not answered", () => {
    expect(w.text("asker-reg")).not.toMatch(/^answer=/m);
    expect(w.text("asker-reg")).not.toMatch(ANY_REMINDER);
  });

  test("vim (alternate screen) in a registered pane gets no keys", () => {
    expect(w.screen("vim")).toBe(before.vim!);
  });

  test("less (alternate screen) in a registered pane gets no keys", () => {
    expect(w.screen("less")).toBe(before.less!);
  });

  test("a plain shell that never registered is not reminded", () => {
    expect(w.text("plain")).not.toMatch(ANY_REMINDER);
    expect(w.text("plain")).not.toContain("command not found");
  });

  test("a program under node that is not an agent CLI is not typed into", () => {
    expect(w.text("tool")).not.toContain("got:");
  });

  test("claude (process title), codex and gemini (node scripts; gemini on the alternate screen) are reminded unregistered", async () => {
    for (const name of ["claude", "codex", "gemini"]) await w.until(name, /got: agentmail: 1 unread message\. Run agentmail receive\./);
  });

  test("mailman status --json lists each agent's last reminder and its outcome", async () => {
    type Status = { agents: { name: string; outcome: string; detail: string; last_reminded_at: string | null }[] };
    const status = oneJson(await am(["mailman", "status", "--json"], w.as("alice"))) as Status;
    const byName = Object.fromEntries(status.agents.map((agent) => [agent.name, agent]));
    expect(byName.reg).toMatchObject({ outcome: "reminded" });
    expect(Date.parse(byName.reg!.last_reminded_at!)).not.toBeNaN();
    const shell = (name: string) => ({
      outcome: "no_agent_pane",
      detail: `pane ${w.server.agent(name).paneId} runs bash, not an agent CLI`,
    });
    expect(byName.plain).toMatchObject({ ...shell("plain"), last_reminded_at: null });
    expect(byName["asker-reg"]).toMatchObject({ ...shell("asker-reg"), last_reminded_at: null });
    expect(byName.vim).toMatchObject({ outcome: "no_agent_pane", last_reminded_at: null });
    expect(byName.vim!.detail).toMatch(/ runs vim, not an agent CLI$/);
    expect(byName.tool).toMatchObject({ outcome: "no_agent_pane", last_reminded_at: null });
    expect(byName.asker).toMatchObject({ outcome: "waiting", last_reminded_at: null });
    expect(byName.asker!.detail).toContain("question");
  });

  test("the log names each skipped pane once, with names escaped, not on every sweep", () => {
    const log = w.log();
    expect(occurrences(log, /"asker".*question/g)).toBe(1);
    expect(occurrences(log, /"plain".*not an agent CLI/g)).toBe(1);
  });
});

describe("mailman --all-panes (the old rule: any pane)", () => {
  const w = world(["alice"]);

  test("is gone: refused as an unknown option, and no mailman starts", async () => {
    const result = await am(["mailman", "--daemon", "--all-panes"], w.as("alice"));
    expect(result.code).toBe(1);
    expect(result.stderr).toStartWith("error: unknown option '--all-panes' for 'agentmail mailman'");
    expect(oneJson(await am(["mailman", "status", "--json"], w.as("alice")))).toMatchObject({ running: false });
  });
});

describe("a symlink and a FIFO named like mailboxes in the store", () => {
  const w = world(["alice", "reg", "reg2"]);
  beforeAll(async () => {
    for (const name of ["reg", "reg2"]) {
      await w.register(name);
      await startFakeAgent(w.server, name, fakeClaude(w.bin));
    }
    writeFileSync(join(w.repo.dir, "target.jsonl"), "");
    symlinkSync(join(w.repo.dir, "target.jsonl"), join(w.repo.mailDir, "bad-link.jsonl"));
    const fifo = Bun.spawnSync(["mkfifo", join(w.repo.mailDir, "bad-fifo.jsonl")]);
    expect(fifo.exitCode).toBe(0);
    await w.startMailman(["--interval", "2", "--sweep", "0.2"]);
    expectSent(await am(["send", "reg2", "hello"], w.as("alice")));
    expectSent(await am(["send", "reg", "canary"], w.as("alice")));
  });

  test("the other mailboxes are still reminded", async () => {
    await w.waitReminders("reg2", 1);
    await w.waitReminders("reg", 2);
  });

  test("each bad entry is reported once in the log, saying what to do", () => {
    const log = w.log();
    for (const entry of ["bad-link.jsonl", "bad-fifo.jsonl"]) {
      const lines = log.split("\n").filter((line) => line.includes(entry));
      expect({ entry, lines: lines.length }).toEqual({ entry, lines: 1 });
      expect(lines[0]).toMatch(/remove it/);
    }
  });
});
