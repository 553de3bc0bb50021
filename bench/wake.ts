/**
 * What "nothing started by hand" and Codex CLI's doorbell cost, against a build of another revision (bc43e3d, the one
 * before them, by default), in one run, round-robin, in a private tmux server and a throwaway repository:
 *
 *   send          to a window running a shell: with no mailman and no hooks installed (the send looks at the mailman's
 *                 pid file and the agents' settings), with Claude Code's hooks installed and no mailman (it then asks
 *                 tmux which agent CLI holds the recipient's window), and with a mailman running (the pid file only);
 *                 each against the other build's send in the same state
 *   Stop hook     with no mail, as the agent CLIs run it: Claude Code's (`sh -c` with the pane's TMUX and TMUX_PANE,
 *                 the pane's doorbell quiet); Codex CLI's, run the way its app-server daemon runs hooks (a process
 *                 named codex, `… app-server`, with the first TUI's environment, the hook input on stdin, a stand-in
 *                 TUI in the thread's directory), this build's command (the thread's doorbell quiet) and the other
 *                 build's (`agentmail receive --hook --ready`, which finds the pane itself); and an empty hook run the
 *                 same two ways, the floor
 *
 * Run:  npm run bench:wake [-- --before=<rev>]   (BENCH_ROUNDS=100)
 */
import { copyFileSync, mkdirSync, realpathSync, rmSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { hookCommand } from "../src/hooks/hook-commands.ts";
import { BINARY, tempRepo } from "../test/support/repo.ts";
import { TmuxServer } from "../test/support/tmux-server.ts";
import { buildRevision } from "./revision.ts";
import { summarize, timedSpawn, type Run } from "./timing.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 100);
const WARMUP = 5;
const beforeRev = process.argv.find((arg) => arg.startsWith("--before="))?.slice("--before=".length) ?? "bc43e3d";

const before = buildRevision(beforeRev);
// Fresh copies side by side: a binary that sat in the page cache a while runs measurably slower (bench/startup-ab.ts).
const copies = join(before.dir, "copies");
mkdirSync(copies);
const builds = { before: join(copies, "before"), after: join(copies, "after") };
copyFileSync(before.binary, builds.before);
copyFileSync(BINARY, builds.after);

const repo = tempRepo();
const server = TmuxServer.start(["alice", "shell", "claude", "first", "second"], repo.dir);
/** The agent of window `name`, with `extra` in its environment. */
const env = (name: string, extra: Record<string, string> = {}) => ({ ...server.agent(name), env: { ...server.agent(name).env, ...extra } });
const samples = new Map<string, Run[]>();
const record = (label: string, run: Run) => {
  if (run.code !== 0 && run.code !== 2) throw new Error(`${label} failed (${run.code}): ${run.stderr}`);
  samples.set(label, [...(samples.get(label) ?? []), run]);
};

/** Runs `cases` round-robin, ROUNDS times after WARMUP untimed rounds. */
async function rounds(cases: [string, () => Promise<Run>][]): Promise<void> {
  for (let round = 0; round < WARMUP + ROUNDS; round++)
    for (const [label, run] of cases) {
      const sample = await run();
      if (round >= WARMUP) record(label, sample);
    }
}

const send = (binary: string) => timedSpawn([binary, "send", "shell", "hello there"], env("alice"), repo.dir);

// Stand-ins for Codex CLI: a daemon (bash named codex, run as `codex -c <script> app-server …`) and a TUI (sleep named
// codex) in the thread's directory, with the pane's environment: what identity/codex-daemon.ts looks for.
const standIns = join(repo.dir, ".stand-ins");
for (const [dir, program] of [
  ["daemon", "bash"],
  ["tui", "sleep"],
] as const) {
  mkdirSync(join(standIns, dir), { recursive: true });
  copyFileSync(realpathSync(Bun.which(program)!), join(standIns, dir, "codex"));
}
const threadDir = join(repo.dir, "second");
mkdirSync(threadDir, { recursive: true });
const tui = Bun.spawn([join(standIns, "tui", "codex"), "3600"], { env: server.agent("second").env, cwd: threadDir, stdin: "ignore" });
const thread = "019a0000-0000-7000-8000-0000000000ab";
const input = JSON.stringify({
  session_id: thread,
  turn_id: "019a0000-0000-7000-8000-0000000000ac",
  cwd: threadDir,
  hook_event_name: "Stop",
  stop_hook_active: false,
  last_assistant_message: "Done: the change is in, the tests pass. ".repeat(30),
});
/** A hook command run the way Codex's daemon runs it: its shell, the first TUI's environment, the input on stdin. */
const inDaemon = (command: string) =>
  timedSpawn(
    [join(standIns, "daemon", "codex"), "-c", 'printf %s "$HOOK_INPUT" | sh -c "$HOOK_COMMAND"', "app-server", "--listen", "unix://"],
    env("first", { HOOK_INPUT: input, HOOK_COMMAND: command }),
    repo.dir,
  );
const inPane = (command: string) => timedSpawn(["sh", "-c", command], env("claude"), repo.dir);

try {
  console.log(
    `load average ${loadavg()
      .map((load) => load.toFixed(1))
      .join(" ")}; ${ROUNDS} rounds; before = ${beforeRev}`,
  );
  for (const name of ["alice", "shell", "claude", "second"]) {
    const status = await timedSpawn([builds.after, "status", "ready"], env(name), repo.dir);
    if (status.code !== 0) throw new Error(`status ready failed for ${name}: ${status.stderr}`);
  }
  await rounds([
    ["send, no mailman, no hooks: before", () => send(builds.before)],
    ["send, no mailman, no hooks: after", () => send(builds.after)],
  ]);
  const install = await timedSpawn([builds.after, "hooks", "install", "claude"], env("alice"), repo.dir);
  if (install.code !== 0) throw new Error(`hooks install failed: ${install.stderr}`);
  await rounds([
    ["send, no mailman, hooks installed: before", () => send(builds.before)],
    ["send, no mailman, hooks installed: after", () => send(builds.after)],
  ]);
  const mailman = await timedSpawn([builds.after, "mailman", "--daemon"], env("alice"), repo.dir);
  if (mailman.code !== 0) throw new Error(`the mailman did not start: ${mailman.stderr}`);
  await rounds([
    ["send, a mailman running: before", () => send(builds.before)],
    ["send, a mailman running: after", () => send(builds.after)],
  ]);
  await timedSpawn([builds.after, "mailman", "stop"], env("alice"), repo.dir);

  // The hooks: each bell is made quiet by a first run that finds no mail (and points the pane, or the thread).
  const claudeHook = hookCommand.delivery(builds.after);
  const codexHook = hookCommand.deliveryInDaemon(builds.after);
  const codexHookBefore = `${builds.before} receive --hook --ready`;
  await inPane(claudeHook);
  await inDaemon(codexHook);
  await inDaemon(codexHook);
  await rounds([
    ["Stop hook, no mail: empty hook in a pane (floor)", () => inPane("true")],
    ["Stop hook, no mail: Claude Code's", () => inPane(claudeHook)],
    ["Stop hook, no mail: empty hook in Codex's daemon (floor)", () => inDaemon("true")],
    ["Stop hook, no mail: Codex CLI's, after (the thread's doorbell)", () => inDaemon(codexHook)],
    ["Stop hook, no mail: Codex CLI's, before (agentmail finds the pane)", () => inDaemon(codexHookBefore)],
  ]);
} finally {
  tui.kill(9);
  server.stop();
  repo.remove();
  rmSync(before.dir, { recursive: true, force: true });
}

const median = (label: string) => summarize((samples.get(label) ?? []).map((run) => run.ms)).median;
const cpu = (label: string) => summarize((samples.get(label) ?? []).map((run) => run.cpuMs)).median;
for (const label of samples.keys())
  console.log(`${label.padEnd(70)} ${median(label).toFixed(2).padStart(7)} ms wall, ${cpu(label).toFixed(2).padStart(6)} ms CPU`);
const ratio = (a: string, b: string) => `${(median(a) / median(b)).toFixed(2)}x wall, ${(cpu(a) / cpu(b)).toFixed(2)}x CPU`;
for (const state of ["no mailman, no hooks", "no mailman, hooks installed", "a mailman running"])
  console.log(`send (${state}), after / before: ${ratio(`send, ${state}: after`, `send, ${state}: before`)}`);
console.log(
  `Codex CLI's Stop hook, after / before: ${ratio("Stop hook, no mail: Codex CLI's, after (the thread's doorbell)", "Stop hook, no mail: Codex CLI's, before (agentmail finds the pane)")}`,
);
console.log(
  `Codex CLI's Stop hook (after) / Claude Code's: ${ratio("Stop hook, no mail: Codex CLI's, after (the thread's doorbell)", "Stop hook, no mail: Claude Code's")}`,
);
console.log(
  `Codex CLI's Stop hook (before) / Claude Code's: ${ratio("Stop hook, no mail: Codex CLI's, before (agentmail finds the pane)", "Stop hook, no mail: Claude Code's")}`,
);
