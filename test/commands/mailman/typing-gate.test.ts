/**
 * The mailman types only into an agent CLI at its prompt, end to end: every pane here registered itself first
 * (`status ready`, or `onboard` as a SessionStart hook runs it), so a registration alone would have made each one
 * typeable. What runs in the pane's foreground now decides: a shell left after its agent died, a python REPL, a
 * heredoc being typed, a human's shell, an agent CLI with a program of its own in the foreground get nothing, and
 * `mailman status` says why; a stand-in agent CLI at its prompt is reminded.
 *
 * Nothing here measures time. "Nothing was typed" is checked once the mailman has been seen deciding (its status
 * records each refusal) and a canary agent, whose mail was sent last, has been reminded twice: a whole interval of
 * sweeps after every other mailbox was looked at.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fakeClaude, installFakeAgents, startFakeAgent } from "../../support/fake-agent.ts";
import { tempRepo } from "../../support/repo.ts";
import { TmuxServer } from "../../support/tmux-server.ts";
import { am, expectSent, occurrences, oneJson, paneText, printedPid, stopMailman, waitFor, waitForPrompt } from "../../support/workflow.ts";

/** Any reminder any build ever typed. */
const ANY_REMINDER = /agentmail: \d+ unread/;
/** A reminder a stand-in agent CLI took: it answers each submitted line with `got: <line>`. */
const TAKEN = /got: agentmail: \d+ unread messages?\. Run agentmail receive\./;

/** A REPL that is no agent CLI: python3's, or node's where there is no python3. */
const REPL =
  Bun.which("python3") !== null
    ? { command: "python3 -q", prompt: ">>> ", program: "python3" }
    : { command: "node", prompt: "> ", program: "node" };

interface AgentReport {
  name: string;
  outcome: string;
  detail: string;
}

describe("the mailman types only into an agent CLI at its prompt, never because a pane registered", () => {
  const NAMES = ["alice", "left", "repl", "heredoc", "human", "runner", "subshell", "claude"];
  let repo: ReturnType<typeof tempRepo>;
  let server: TmuxServer;
  const pids = new Set<number>();
  const as = (name: string) => ({ env: server.agent(name).env, cwd: repo.dir });
  const text = (name: string) => paneText(server, name);
  const log = () => readFileSync(join(repo.mailDir, ".mailman", "log"), "utf8");
  const type = (name: string, line: string) => {
    server.run(["send-keys", "-t", server.agent(name).paneId, "-l", line]);
    server.run(["send-keys", "-t", server.agent(name).paneId, "Enter"]);
  };
  async function until(name: string, what: string): Promise<void> {
    await waitFor(
      () => `pane ${name} to show ${what}:\n${text(name)}`,
      () => text(name).includes(what),
    );
  }
  async function agents(): Promise<Record<string, AgentReport>> {
    const status = oneJson(await am(["mailman", "status", "--json"], as("alice"))) as { agents: AgentReport[] };
    return Object.fromEntries(status.agents.map((agent) => [agent.name, agent]));
  }

  beforeAll(async () => {
    repo = tempRepo();
    const bin = installFakeAgents(repo.dir);
    server = TmuxServer.start(NAMES, repo.dir);
    for (const name of NAMES) await waitForPrompt(server, name);
    for (const name of NAMES.slice(1)) {
      const registered = await am(name === "human" ? ["onboard"] : ["status", "ready"], as(name));
      expect({ name, code: registered.code, stderr: registered.stderr }).toEqual({ name, code: 0, stderr: "" });
    }
    // "left": the agent that registered this pane has exited; its shell is left at its prompt.
    type("repl", REPL.command);
    type("heredoc", "cat > notes.txt <<EOF");
    type("heredoc", "first line");
    for (const name of ["runner", "subshell", "claude"]) await startFakeAgent(server, name, fakeClaude(bin));
    // The agent runs a REPL in its own process group (no job control): the agent leads the foreground group.
    type("runner", `!${REPL.command}`);
    // The agent runs an interactive shell, which takes the terminal for a process group of its own.
    type("subshell", "!bash --norc --noprofile -i");
    await until("repl", REPL.prompt);
    await until("heredoc", "> first line\n> ");
    await until("runner", `${REPL.prompt}`);
    await waitForPrompt(server, "subshell");

    const started = await am(["mailman", "--daemon", "--interval", "2", "--sweep", "0.2"], as("alice"));
    const pid = printedPid(started.stdout);
    if (pid) pids.add(pid);
    expect({ code: started.code, stderr: started.stderr }).toEqual({ code: 0, stderr: "" });
    for (const name of NAMES.slice(1, -1)) expectSent(await am(["send", name, `mail for ${name}`], as("alice")));
    expectSent(await am(["send", "claude", "canary"], as("alice")));
    await waitFor(
      () => `the stand-in claude to be reminded twice:\n${text("claude")}\nlog:\n${log()}`,
      () => occurrences(text("claude"), TAKEN) >= 2,
    );
  });

  afterAll(async () => {
    if (repo) await stopMailman(as("alice"), pids);
    server?.stop();
    repo?.remove();
  });

  test("an agent CLI at its prompt is reminded, registered or not", async () => {
    expect(occurrences(text("claude"), TAKEN)).toBeGreaterThanOrEqual(2);
    expect((await agents()).claude).toMatchObject({ outcome: "reminded", detail: `in ${server.agent("claude").paneId}` });
  });

  test("a registered pane whose agent has gone gets nothing: its shell is not an agent CLI", async () => {
    expect(text("left")).not.toMatch(ANY_REMINDER);
    const detail = `pane ${server.agent("left").paneId} runs bash, not an agent CLI`;
    expect((await agents()).left).toMatchObject({ outcome: "no_agent_pane", detail });
  });

  test("a REPL in a registered pane gets nothing", async () => {
    expect(text("repl")).not.toMatch(ANY_REMINDER);
    const detail = `pane ${server.agent("repl").paneId} runs ${REPL.program}, not an agent CLI`;
    expect((await agents()).repl).toMatchObject({ outcome: "no_agent_pane", detail });
  });

  test("a heredoc being typed in a registered pane gets no line: the file holds only what was typed", async () => {
    expect(text("heredoc")).not.toMatch(ANY_REMINDER);
    expect((await agents()).heredoc).toMatchObject({ outcome: "no_agent_pane" });
    type("heredoc", "EOF");
    const notes = join(repo.dir, "notes.txt");
    const written = () => {
      try {
        return readFileSync(notes, "utf8");
      } catch {
        return "";
      }
    };
    await waitFor("the heredoc to write notes.txt", () => written() !== "");
    expect(written()).toBe("first line\n");
  });

  test("a human's shell that once ran onboard gets nothing", async () => {
    expect(text("human")).not.toMatch(ANY_REMINDER);
    expect((await agents()).human).toMatchObject({ outcome: "no_agent_pane" });
  });

  test("an agent CLI with a REPL of its own in the foreground gets nothing, and waits", async () => {
    expect(text("runner")).not.toMatch(ANY_REMINDER);
    const detail = `pane ${server.agent("runner").paneId} runs ${REPL.program} in the foreground of claude`;
    expect((await agents()).runner).toMatchObject({ outcome: "waiting", detail });
  });

  test("an agent CLI whose shell took the terminal gets nothing", async () => {
    expect(text("subshell")).not.toMatch(ANY_REMINDER);
    const detail = `pane ${server.agent("subshell").paneId} runs bash, not an agent CLI`;
    expect((await agents()).subshell).toMatchObject({ outcome: "no_agent_pane", detail });
  });

  test("mailman status and the log say why, once, and what to do", async () => {
    const status = await am(["mailman", "status"], as("alice"));
    expect(status.stdout).toContain(`  left: no_agent_pane (pane ${server.agent("left").paneId} runs bash, not an agent CLI) since `);
    expect(occurrences(log(), /not reminding "left": .*runs bash, not an agent CLI; .*agent CLI/g)).toBe(1);
  });
});
