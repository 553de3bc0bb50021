/**
 * Helpers for the end-to-end tests of the agent workflow (recipients, status, onboard, cleanup, receive --wait and
 * --hook, the mailman): run the compiled binary with a kill-on-timeout guard, wait for a condition (wait.ts, re-exported
 * here), and look at panes and daemon processes.
 */
import { afterAll, beforeAll } from "bun:test";
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { am } from "./e2e.ts";
import { tempRepo } from "./repo.ts";
import { TmuxServer } from "./tmux-server.ts";
import { waitFor } from "./wait.ts";

export {
  am,
  expectError,
  expectJsonError,
  expectSent,
  ID,
  oneJson,
  readText,
  shown,
  start,
  storedMessages,
  type Result,
} from "./e2e.ts";
export { sleep, waitFor, waitForTurns } from "./wait.ts";

type Env = Record<string, string>;

/** What the per-command end-to-end files share: set once the file's first beforeAll has run. */
export interface Session {
  repo: ReturnType<typeof tempRepo>;
  /** A private tmux server with windows alice, bob and carol, all in the repository. */
  server: TmuxServer;
  alice: Env;
  bob: Env;
  /** A directory outside any repository. */
  outside: string;
  /** Runs as `env`'s agent inside the repository. */
  inRepo(env: Env): { env: Env; cwd: string };
  /** Reads every unread message of an agent so a test starts from an empty inbox. */
  drain(env: Env): Promise<void>;
}

/** Starts the session before the calling test file's tests and stops it (and removes its directories) after them. */
export function sharedSession(): Session {
  const session = {
    inRepo: (env: Env) => ({ env, cwd: session.repo.dir }),
    async drain(env: Env) {
      for (let i = 0; i < 1000; i++) {
        const result = await am(["receive", "--json"], session.inRepo(env));
        if (result.stdout.trim() === "null" || result.code !== 0) return;
      }
    },
  } as Session;
  beforeAll(() => {
    session.repo = tempRepo();
    session.server = TmuxServer.start(["alice", "bob", "carol"], session.repo.dir);
    session.alice = session.server.agent("alice").env;
    session.bob = session.server.agent("bob").env;
    session.outside = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-nogit-")));
  });
  afterAll(() => {
    session.server?.stop();
    session.repo?.remove();
    if (session.outside) rmSync(session.outside, { recursive: true, force: true });
  });
  return session;
}

/**
 * Stops the store's mailman the way a user would, then kills any daemon pid the test saw (or status still names)
 * that outlived it, so no test leaves a mailman behind.
 */
export async function stopMailman(as: { env: Env; cwd: string }, pids: Set<number>): Promise<void> {
  try {
    const status = JSON.parse((await am(["mailman", "status", "--json"], as)).stdout) as { pid: number | null };
    if (status.pid) pids.add(status.pid);
  } catch {
    // Stop and kill below anyway.
  }
  await am(["mailman", "stop"], as);
  for (const pid of pids) if (alive(pid)) killPid(pid);
}

/** Whether a process with this pid exists (a zombie counts as gone). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

export function killPid(pid: number | null | undefined): void {
  if (!pid || pid <= 1 || pid === process.pid) return;
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Gone.
  }
}

/** How many times `needle` occurs in `text`. */
export function occurrences(text: string, needle: string | RegExp): number {
  if (typeof needle === "string") return text.split(needle).length - 1;
  return (text.match(new RegExp(needle.source, needle.flags.includes("g") ? needle.flags : needle.flags + "g")) ?? []).length;
}

/** The screen and the scrollback of an agent's pane (the reminder may have scrolled off the visible part). */
export function paneText(server: TmuxServer, name: string): string {
  return server.run(["capture-pane", "-p", "-J", "-S", "-", "-t", server.agent(name).paneId]);
}

/** Waits until an agent's pane shows a bash prompt, so text typed into it lands on an empty command line. */
export async function waitForPrompt(server: TmuxServer, name: string): Promise<void> {
  await waitFor(
    () => `a prompt in the pane of ${name}: ${JSON.stringify(server.capture(name))}`,
    () => /[$#] *$/.test(server.capture(name).trimEnd()),
  );
}

/** The pid a `mailman --daemon` (or `mailman status`) printed, or null. */
export function printedPid(text: string): number | null {
  const match = /pid (\d+)/.exec(text);
  return match ? Number(match[1]) : null;
}
