/**
 * Hooks that Codex CLI runs in its app-server daemon speak for the pane whose thread they serve, not for the pane of
 * the TUI that started the daemon. An interactive `codex` runs every thread's hooks in one daemon per CODEX_HOME,
 * with the environment of the first TUI: measured on 0.169.0, two TUIs in two panes, every hook saw the first pane's
 * TMUX_PANE. Here a stand-in daemon (a program named `codex`, run as `codex … app-server --listen unix://
 * --managed-daemon`, with the first pane's environment) runs the installed hook commands with a hook input naming
 * the thread's directory, while stand-in TUIs (programs named `codex` in each pane's environment and directory) run.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hookCommand } from "../../src/hooks/hook-commands.ts";
import { am, storedMessages } from "../support/e2e.ts";
import { BINARY, removeDir, tempRepo } from "../support/repo.ts";
import { TmuxServer } from "../support/tmux-server.ts";
import { killPid, waitFor } from "../support/workflow.ts";

let repo: ReturnType<typeof tempRepo>;
let server: TmuxServer;
/** Programs named codex, as /proc shows Codex's native binary: a shell for the daemon, a sleep for a TUI. */
let codexDaemon: string;
let codexTui: string;
let home: string;
const tuis: number[] = [];

const as = (name: string) => ({ env: server.agent(name).env, cwd: repo.dir });

/** A stand-in Codex TUI: a program named codex, idle, in `cwd` with `name`'s pane environment. */
function startTui(name: string, cwd: string): void {
  const child = Bun.spawn([codexTui, "600"], { env: { ...server.agent(name).env, HOME: home }, cwd, stdin: "ignore", stdout: "ignore" });
  tuis.push(child.pid);
}

/**
 * Runs `command` (an installed hook's) the way the daemon does: as its child, with the first pane's environment and
 * the hook input on stdin. Returns the hook's exit code and output.
 */
async function daemonHook(command: string, input: object): Promise<{ code: number; stdout: string; stderr: string }> {
  // As Codex does: the hook's command line run by a shell of its own, the hook input on its stdin.
  const script = `printf '%s' "$HOOK_INPUT" | sh -c "$HOOK_COMMAND"`;
  const child = Bun.spawn([codexDaemon, "-c", script, "app-server", "--listen", "unix://", "--managed-daemon"], {
    env: {
      ...server.agent("first").env,
      HOME: home,
      HOOK_INPUT: JSON.stringify(input),
      HOOK_COMMAND: command,
      PATH: `${join(BINARY, "..")}:/usr/bin:/bin`,
    },
    cwd: repo.dir,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

const statusOf = async (name: string) => JSON.parse((await am(["status", "--json"], as(name))).stdout).status as string | null;
const input = (cwd: string, event: string) => ({ session_id: "019a0000-0000-7000-8000-00000000000b", cwd, hook_event_name: event });

beforeAll(async () => {
  repo = tempRepo();
  home = join(repo.dir, "..", `${repo.dir.split("/").pop()}-home`);
  mkdirSync(home, { recursive: true });
  // Programs named codex: what /proc shows of Codex's native binary (its daemon runs a copy of it).
  for (const [dir, program] of [
    ["daemon", "bash"],
    ["tui", "sleep"],
  ]) {
    mkdirSync(join(repo.dir, ".stand-ins", dir!), { recursive: true });
    copyFileSync(realpathSync(Bun.which(program!)!), join(repo.dir, ".stand-ins", dir!, "codex"));
  }
  codexDaemon = join(repo.dir, ".stand-ins", "daemon", "codex");
  codexTui = join(repo.dir, ".stand-ins", "tui", "codex");
  mkdirSync(join(repo.dir, "second"), { recursive: true });
  server = TmuxServer.start(["first", "second", "third", "sender"], repo.dir);
  startTui("first", repo.dir);
  startTui("second", join(repo.dir, "second"));
});

afterAll(() => {
  for (const pid of tuis) killPid(pid);
  server?.stop();
  if (home) removeDir(home);
  repo?.remove();
});

describe("hooks run in Codex's app-server daemon", () => {
  test("the status hook of the second TUI's thread sets the second agent's status, not the first's", async () => {
    const hook = await daemonHook("agentmail status ready", input(join(repo.dir, "second"), "SessionStart"));
    expect(hook).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(await statusOf("second")).toBe("ready");
    expect(await statusOf("first")).toBeNull();
  });

  test("the end-of-turn hook delivers the second agent's mail to the second thread, and none of the first's", async () => {
    const forFirst = (await am(["send", "first", "not for the second"], as("sender"))).stdout.trim();
    const forSecond = (await am(["send", "second", "for the second"], as("sender"))).stdout.trim();
    const hook = await daemonHook("agentmail receive --hook", input(join(repo.dir, "second"), "Stop"));
    expect(hook.code).toBe(2);
    expect(hook.stderr).toContain(`ID: ${forSecond}\n`);
    expect(hook.stderr).not.toContain(forFirst);
    const first = storedMessages(join(repo.mailDir, "first.jsonl"));
    expect(first.map((message) => message.read_flag)).toEqual([false]);
  });

  test("the end-of-turn hook's second command (status ready, after receive --hook read the input) acts for the same pane", async () => {
    expect((await am(["status", "work"], as("second"))).code).toBe(0);
    const hook = await daemonHook("agentmail receive --hook && agentmail status ready", input(join(repo.dir, "second"), "Stop"));
    expect(hook).toMatchObject({ code: 0, stderr: "" });
    expect(await statusOf("second")).toBe("ready");
    expect(await statusOf("first")).toBeNull();
  });

  test("the installed end-of-turn hook looks at the thread's doorbell: agentmail starts only when the second agent has mail", async () => {
    const log = join(repo.dir, "starts.log");
    const wrapper = join(repo.dir, "agentmail-logged");
    writeFileSync(wrapper, `#!/bin/sh\necho "$*" >> '${log}'\nexec '${BINARY}' "$@"\n`);
    chmodSync(wrapper, 0o755);
    const starts = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean).length : 0);
    // A thread no hook ran for yet.
    const session_id = "019a0000-0000-7000-8000-0000000000cd";
    const hookInput = (event: string) => ({ ...input(join(repo.dir, "second"), event), session_id, last_assistant_message: "Done." });
    const stop = () => daemonHook(hookCommand.deliveryInDaemon(wrapper), hookInput("Stop"));
    const tool = () => daemonHook(hookCommand.afterTool(wrapper, "codex"), hookInput("PostToolUse"));
    // No pointer for the thread yet: agentmail starts, finds nothing, and points the thread at the second agent's bell.
    expect(await stop()).toMatchObject({ code: 0, stderr: "" });
    expect(starts()).toBe(1);
    expect(await statusOf("second")).toBe("ready");
    expect((await am(["status", "work"], as("second"))).code).toBe(0);
    // Quiet: neither hook starts agentmail, and the end of the turn marks the second agent ready, not the first.
    expect(await tool()).toMatchObject({ code: 0, stdout: "" });
    expect(await stop()).toMatchObject({ code: 0, stderr: "" });
    expect(starts()).toBe(1);
    expect(await statusOf("second")).toBe("ready");
    expect(await statusOf("first")).toBeNull();
    // A send to the second agent rings its bell: the next hook starts agentmail and delivers it to this thread.
    const id = (await am(["send", "second", "rung"], as("sender"))).stdout.trim();
    const delivered = await stop();
    expect(delivered.code).toBe(2);
    expect(delivered.stderr).toContain(`ID: ${id}\n`);
    expect(starts()).toBe(2);
    // It found nothing more unread and quieted the bell: the next turn's hook starts nothing.
    expect(await stop()).toMatchObject({ code: 0, stderr: "" });
    expect(starts()).toBe(2);
  });

  test("with two TUIs of one daemon in the same directory, the hook cannot tell whose thread it is and does nothing", async () => {
    startTui("third", join(repo.dir, "second"));
    await waitFor("the three stand-in TUIs to run", () => tuis.length === 3);
    const hook = await daemonHook("agentmail status work", input(join(repo.dir, "second"), "UserPromptSubmit"));
    expect(hook).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(await statusOf("second")).toBe("ready");
    expect(await statusOf("third")).toBeNull();
    expect(await statusOf("first")).toBeNull();
  });

  test("outside the daemon (a headless codex exec runs its hooks itself), TMUX_PANE is trusted as before", async () => {
    const result = await am(["status", "work"], as("first"));
    expect(result.code).toBe(0);
    expect(await statusOf("first")).toBe("work");
  });
});
