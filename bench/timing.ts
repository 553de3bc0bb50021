/** Spawning a command to exit with its pipes drained, and summarizing samples: what the benchmarks share. */
import { BINARY } from "../test/support/repo.ts";
import type { Agent } from "../test/support/tmux-server.ts";

export interface Run {
  ms: number;
  /** User + system CPU of the process and the children it reaped: steadier than wall time on a busy machine. */
  cpuMs: number;
  code: number;
  stdout: string;
  stderr: string;
}

/** Spawn to exit, with both pipes drained, so a command is charged for everything it writes. */
export async function timedSpawn(argv: string[], agent: Agent, cwd: string): Promise<Run> {
  const start = performance.now();
  const child = Bun.spawn(argv, { env: agent.env, cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { ms: performance.now() - start, cpuMs: Number(child.resourceUsage()?.cpuTime.total ?? 0) / 1000, code, stdout, stderr };
}

/** The tmux call agentmail makes to learn who is calling (src/tmux/caller.ts), with the same formats. */
export function lookupArgv(agent: Agent): string[] {
  const window =
    "AMmarker00window\t#{session_id}\t#{session_name}\t#{window_id}\t#{window_active}\t" +
    "#{?automatic-rename,1,0}\t#{pane_id}\t#{window_name}";
  const self = "AMmarker00self\t#{session_id}\t#{window_id}\t#{window_name}";
  return ["tmux", "display-message", "-p", "-t", agent.paneId, self, ";", "list-windows", "-a", "-F", window];
}

/** The floor: the least a command that must ask tmux who is calling can cost (agentmail's own tmux call + one start-up). */
export async function timedFloor(agent: Agent, cwd: string): Promise<Run> {
  const tmux = await timedSpawn(lookupArgv(agent), agent, cwd);
  const version = await timedSpawn([BINARY, "--version"], agent, cwd);
  return {
    ms: tmux.ms + version.ms,
    cpuMs: tmux.cpuMs + version.cpuMs,
    code: tmux.code || version.code,
    stdout: tmux.stdout + version.stdout,
    stderr: tmux.stderr + version.stderr,
  };
}

export interface Summary {
  runs: number;
  median: number;
  p90: number;
}

export function summarize(samples: number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  return { runs: sorted.length, median, p90: sorted[Math.ceil(sorted.length * 0.9) - 1]! };
}
