/**
 * A private tmux server for tests and benchmarks: its own socket in a temp dir, no config file, windows running a
 * plain bash, and an environment per window that makes a spawned process "run in" that window's pane (TMUX and
 * TMUX_PANE). Only servers started here are ever killed.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Agent {
  name: string;
  paneId: string;
  windowId: string;
  env: Record<string, string>;
}

function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && key !== "TMUX" && key !== "TMUX_PANE" && key !== "AGENTMAIL_NAME") env[key] = value;
  }
  return env;
}

export class TmuxServer {
  readonly dir: string;
  readonly socket: string;
  readonly session = "agents";
  private serverPid = 0;
  readonly agents = new Map<string, Agent>();

  private constructor(dir: string) {
    this.dir = dir;
    this.socket = join(dir, "sock");
  }

  /** Starts a server whose first window is `names[0]`; the rest are added in order. */
  static start(names: string[], cwd: string): TmuxServer {
    const server = new TmuxServer(mkdtempSync(join(tmpdir(), "agentmail-tmux-")));
    const [first, ...rest] = names;
    server.run(["new-session", "-d", "-s", server.session, "-n", first!, "-x", "200", "-y", "50", "-c", cwd, "bash --norc --noprofile -i"]);
    server.serverPid = Number(server.run(["display-message", "-p", "#{pid}"]).trim());
    server.register(first!);
    for (const name of rest) server.addWindow(name, cwd);
    return server;
  }

  /** Runs a tmux command against this server only. */
  run(args: string[]): string {
    const result = Bun.spawnSync(["tmux", "-S", this.socket, "-f", "/dev/null", ...args], { env: baseEnv(), stdin: "ignore" });
    if (result.exitCode !== 0) throw new Error(`tmux ${args.join(" ")}: ${result.stderr.toString()}`);
    return result.stdout.toString();
  }

  addWindow(name: string, cwd: string): Agent {
    const { windowId, paneId } = this.newWindow(cwd, name);
    return this.remember(name, windowId, paneId);
  }

  /** A window without -n, so tmux names it itself (after the program in it), as a user's unnamed window. */
  addUnnamedWindow(cwd: string): { windowId: string; paneId: string } {
    return this.newWindow(cwd);
  }

  private newWindow(cwd: string, name?: string): { windowId: string; paneId: string } {
    const named = name === undefined ? [] : ["-n", name];
    const format = "#{window_id} #{pane_id}";
    const line = this.run([
      "new-window",
      "-d",
      "-P",
      "-F",
      format,
      "-t",
      `${this.session}:`,
      ...named,
      "-c",
      cwd,
      "bash --norc --noprofile -i",
    ]);
    const [windowId, paneId] = line.trim().split(" ") as [string, string];
    return { windowId, paneId };
  }

  private register(name: string): void {
    const line = this.run(["list-panes", "-t", `${this.session}:^`, "-F", "#{window_id} #{pane_id}"]);
    const [windowId, paneId] = line.trim().split(" ");
    this.remember(name, windowId!, paneId!);
  }

  private remember(name: string, windowId: string, paneId: string): Agent {
    const agent: Agent = { name, paneId, windowId, env: { ...baseEnv(), TMUX: `${this.socket},${this.serverPid},0`, TMUX_PANE: paneId } };
    this.agents.set(name, agent);
    return agent;
  }

  agent(name: string): Agent {
    const agent = this.agents.get(name);
    if (!agent) throw new Error(`no agent ${name}`);
    return agent;
  }

  /** An agent's environment with AGENTMAIL_NAME set to its window's name. */
  named(name: string): Record<string, string> {
    return { ...this.agent(name).env, AGENTMAIL_NAME: name };
  }

  /** The agents claim their names as their SessionStart hook does: `status ready` with AGENTMAIL_NAME, in their panes. */
  claimNames(binary: string, names: string[], cwd: string): void {
    for (const name of names) {
      const claim = Bun.spawnSync([binary, "status", "ready"], { env: this.named(name), cwd });
      if (claim.exitCode !== 0) throw new Error(`${name} could not claim its name: ${claim.stderr.toString().trim()}`);
    }
  }

  /** The screen of an agent's pane, as a person would read it. */
  capture(name: string): string {
    return this.run(["capture-pane", "-p", "-J", "-t", this.agent(name).paneId]);
  }

  /**
   * Kills the server, then waits for every process its panes started to end (at most 10 s, then SIGKILL): some write
   * as they go (Claude Code its transcripts, vim its swap file), and a test removes their directories next.
   */
  stop(): void {
    // Also what left the server's tree but runs for it (a mailman an agent's session start brought up, detached).
    const started = this.serverPid > 0 ? [...descendantsOf(this.serverPid), ...carryingSocket(this.socket)] : [];
    try {
      this.run(["kill-server"]);
    } catch {
      // Already gone.
    }
    waitUntilGone(started, 10_000);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

interface ProcessEntry {
  pid: number;
  ppid: number;
  /** Clock ticks since boot when it started: tells the process from a later one given its pid. */
  start: string;
  state: string;
}

function processEntry(pid: number): ProcessEntry | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may hold spaces and parentheses: the fields start after its last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { pid, ppid: Number(fields[1]), start: fields[19]!, state: fields[0]! };
  } catch {
    return null;
  }
}

/** The processes below `root` (its children, theirs, …), read from /proc. */
function descendantsOf(root: number): ProcessEntry[] {
  const children = new Map<number, ProcessEntry[]>();
  for (const name of readdirSync("/proc")) {
    const entry = /^\d+$/.test(name) ? processEntry(Number(name)) : null;
    if (entry) children.set(entry.ppid, [...(children.get(entry.ppid) ?? []), entry]);
  }
  const found: ProcessEntry[] = [];
  for (let queue = [root]; queue.length > 0; ) {
    for (const child of children.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child.pid);
    }
  }
  return found;
}

/** The processes whose environment names `socket` as their tmux server (TMUX=<socket>,…), read from /proc. */
function carryingSocket(socket: string): ProcessEntry[] {
  const found: ProcessEntry[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (!`\0${readFileSync(`/proc/${name}/environ`, "utf8")}`.includes(`\0TMUX=${socket},`)) continue;
    } catch {
      continue;
    }
    const entry = processEntry(Number(name));
    if (entry) found.push(entry);
  }
  return found;
}

/** Still running: the same process (same start), not a zombie nobody has reaped yet. */
function running(entry: ProcessEntry): boolean {
  const now = processEntry(entry.pid);
  return now !== null && now.start === entry.start && now.state !== "Z" && now.state !== "X";
}

function waitUntilGone(entries: ProcessEntry[], timeoutMs: number): void {
  const deadline = Date.now() + timeoutMs;
  let left = entries.filter(running);
  while (left.length > 0 && Date.now() < deadline) {
    Bun.sleepSync(20);
    left = left.filter(running);
  }
  for (const entry of left) {
    try {
      process.kill(entry.pid, "SIGKILL");
    } catch {
      // Ended meanwhile.
    }
  }
}

/** An environment outside tmux: the inherited TMUX and TMUX_PANE removed. */
export function outsideTmuxEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { ...baseEnv(), ...extra };
}
