/**
 * The hook commands as Codex CLI's app-server daemon runs them, in process: the test process plays the hook, its
 * parent the daemon (process.ppid names a stand-in daemon: a program named `codex` run as `codex … app-server --listen
 * unix:// --managed-daemon`, with the first pane's environment, as test/scenarios/codex-daemon-hooks.test.ts runs it),
 * the hook's JSON on stdin (test/support/stdin.ts). Stand-in TUIs (programs named `codex`) run in each pane's
 * environment and directory. A hook speaks for the pane whose thread it serves, or for nobody.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runInProcess } from "../../support/in-process.ts";
import { tempRepo } from "../../support/repo.ts";
import { withStdin } from "../../support/stdin.ts";
import { TmuxServer } from "../../support/tmux-server.ts";
import { waitFor } from "../../support/workflow.ts";

let repo: ReturnType<typeof tempRepo>;
let server: TmuxServer;
let scratch: string;
let home: string;
/** Where the hook's commands leave what they found for the next command of the same hook (XDG_RUNTIME_DIR). */
let runtime: string;
let daemon: ReturnType<typeof Bun.spawn>;
const children: ReturnType<typeof Bun.spawn>[] = [];

/** `program` copied under the name codex: what /proc shows of Codex's native binary. */
function namedCodex(program: string): string {
  const dir = join(scratch, program);
  mkdirSync(dir, { recursive: true });
  copyFileSync(realpathSync(Bun.which(program)!), join(dir, "codex"));
  return join(dir, "codex");
}

/** Starts `argv` and returns once /proc shows it runs (before its exec, /proc shows this process). */
async function running(argv: string[], env: Record<string, string>, cwd: string): Promise<ReturnType<typeof Bun.spawn>> {
  const child = Bun.spawn(argv, { env, cwd, stdin: "ignore", stdout: "ignore", stderr: "ignore" });
  children.push(child);
  const last = `${argv.at(-1)}\0`;
  await waitFor(`${argv.join(" ")} to run`, () => {
    try {
      return readFileSync(`/proc/${child.pid}/cmdline`, "utf8").endsWith(last);
    } catch {
      return false;
    }
  });
  return child;
}

const startTui = (name: string, cwd: string) =>
  running([join(scratch, "sleep", "codex"), "600"], { ...server.agent(name).env, HOME: home }, cwd);

/** Runs `argv` as a hook command the daemon runs: its parent the daemon, its environment the first pane's, `input` on stdin. */
async function inDaemon(argv: string[], input: string | Uint8Array, runtimeDir = runtime) {
  const ppid = Object.getOwnPropertyDescriptor(process, "ppid");
  Object.defineProperty(process, "ppid", { value: daemon.pid, configurable: true });
  try {
    const env = { ...server.agent("first").env, HOME: home, XDG_RUNTIME_DIR: runtimeDir };
    return await withStdin(input, () => runInProcess(argv, { env, cwd: repo.dir }));
  } finally {
    if (ppid) Object.defineProperty(process, "ppid", ppid);
    else delete (process as { ppid?: number }).ppid;
  }
}

const hookInput = (cwd: string, event: string) =>
  JSON.stringify({ session_id: "019a0000-0000-7000-8000-00000000000b", cwd, hook_event_name: event });
const outside = (name: string, argv: string[]) => runInProcess(argv, { env: server.agent(name).env, cwd: repo.dir });
const statusOf = async (name: string) => JSON.parse((await outside(name, ["status", "--json"])).stdout).status as string | null;
const secondDir = () => join(repo.dir, "second");

beforeAll(async () => {
  repo = tempRepo();
  scratch = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-hook-invocation-")));
  home = join(scratch, "home");
  runtime = join(scratch, "runtime");
  mkdirSync(home);
  mkdirSync(runtime);
  mkdirSync(secondDir());
  server = TmuxServer.start(["first", "second", "third", "sender"], repo.dir);
  namedCodex("sleep");
  const daemonEnv = { ...server.agent("first").env, HOME: home };
  // A shell named codex that stays a shell (`; :` keeps it from exec-ing the sleep).
  daemon = await running(
    [namedCodex("bash"), "-c", "sleep 600; :", "app-server", "--listen", "unix://", "--managed-daemon"],
    daemonEnv,
    repo.dir,
  );
  await startTui("first", repo.dir);
  await startTui("second", secondDir());
});

afterAll(() => {
  for (const child of children) child.kill(9);
  server?.stop();
  repo?.remove();
  rmSync(scratch, { recursive: true, force: true });
});

describe("hook commands run in Codex's app-server daemon", () => {
  test("status, its input naming the second TUI's directory, sets the second agent's status, not the first's (whose pane the daemon has)", async () => {
    const hook = await inDaemon(["status", "ready"], hookInput(secondDir(), "SessionStart"));
    expect(hook.code).toBe(0);
    expect(hook.stdout).toBe("");
    expect(await statusOf("second")).toBe("ready");
    expect(await statusOf("first")).toBeNull();
  });

  test("receive --hook shows the second thread its own mail, none of the first's; the hook's next command (input read already) acts for the same pane", async () => {
    const forFirst = (await outside("sender", ["send", "first", "not for the second"])).stdout.trim();
    const forSecond = (await outside("sender", ["send", "second", "for the second"])).stdout.trim();
    const hook = await inDaemon(["receive", "--hook"], hookInput(secondDir(), "Stop"));
    expect(hook.code).toBe(2);
    expect(hook.stderr).toContain(`ID: ${forSecond}\n`);
    expect(hook.stderr).not.toContain(forFirst);
    expect((await outside("first", ["receive", "--peek", "--json"])).stdout).toContain(forFirst);

    expect((await inDaemon(["status", "work"], "")).code).toBe(0);
    expect(await statusOf("second")).toBe("work");
    expect(await statusOf("first")).toBeNull();
  });

  test("input it cannot read (not UTF-8) counts as none: a later command of the hook acts for the pane found; a first one does nothing", async () => {
    const notUtf8 = new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]);
    expect(await inDaemon(["status", "ready"], notUtf8, join(scratch, "no-earlier-command"))).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(await statusOf("second")).toBe("work");
    expect((await inDaemon(["status", "ready"], notUtf8)).code).toBe(0);
    expect(await statusOf("second")).toBe("ready");
    expect(await statusOf("first")).toBeNull();
  });

  test("guard codex speaks for the thread's pane: the second thread may not edit what the first claimed; the first may", async () => {
    expect((await outside("first", ["claim", "second/held.ts"])).code).toBe(0);
    const write = (cwd: string) => JSON.stringify({ tool_name: "Write", tool_input: { file_path: "held.ts", content: "x" }, cwd });
    const denied = await inDaemon(["guard", "codex"], write(secondDir()));
    expect(denied.code).toBe(0);
    expect(JSON.parse(denied.stdout).hookSpecificOutput).toMatchObject({
      permissionDecision: "deny",
      permissionDecisionReason: expect.stringContaining("second/held.ts is claimed by first"),
    });
    const byHolder = { tool_name: "Write", tool_input: { file_path: "second/held.ts", content: "x" }, cwd: repo.dir };
    expect(await inDaemon(["guard", "codex"], JSON.stringify(byHolder))).toEqual({ code: 0, stdout: "", stderr: "" });
    expect((await outside("first", ["release"])).code).toBe(0);
  });

  test("with two TUIs of the daemon in one directory, whose thread it is cannot be told: the hook does nothing", async () => {
    await startTui("third", secondDir());
    expect(await inDaemon(["status", "offline"], hookInput(secondDir(), "UserPromptSubmit"))).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(await statusOf("second")).toBe("ready");
    expect(await statusOf("third")).toBeNull();
    expect(await statusOf("first")).toBeNull();
  });
});
