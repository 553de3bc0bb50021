/**
 * Who holds a pane's terminal, read from /proc, and which agent CLI a process is: what the typing gate
 * (mailman/typing-gate.ts) judges before a key is sent into a pane.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { AGENTS, type AgentName } from "../mail/agents.ts";

/** A process as /proc shows it. */
export interface ProcessView {
  /** Its pid, where its cwd and environment are read (the mailman finds the agent CLI's own channel from them). */
  pid?: number;
  /** The executable file it runs (`/proc/PID/exe`), which the process cannot rename; null when unreadable. */
  exe: string | null;
  /** Its command line (`/proc/PID/cmdline`), which a process may rewrite (its process title). */
  argv: readonly string[];
  /** Its short name (`/proc/PID/comm`). */
  comm: string;
}

/** Who holds a pane's terminal: its foreground process group. */
export interface ForegroundView {
  /** The group's leader: the program the terminal was handed to. */
  leader: ProcessView;
  /**
   * The group's other processes whose standard input is the pane's terminal: they read the keys too. Looked for only
   * when the leader is an agent CLI (otherwise the pane is refused whoever reads).
   */
  readers: readonly ProcessView[];
}

/** The agent CLIs agentmail knows: what may be typed into, and what has a delivery adapter (mailman/adapters.ts). */
export type AgentCli = AgentName;
const AGENT_CLIS = new Set<string>(AGENTS);
const isAgentCli = (name: string): name is AgentCli => AGENT_CLIS.has(name);
/** Agent CLIs that are scripts run by one of these: Codex from npm (`node …/codex.js`), Gemini CLI (`node …/gemini`). */
const INTERPRETERS = new Set(["node", "nodejs", "bun", "deno"]);

export const baseName = (path: string): string => path.slice(path.lastIndexOf("/") + 1);
/** The kernel marks the executable of a process whose file was replaced since (an agent CLI that updated itself). */
const withoutDeleted = (path: string): string => path.replace(/ \(deleted\)$/, "");
const programName = (path: string): string => baseName(withoutDeleted(path)).replace(/\.(exe|[cm]?js)$/, "");

/**
 * The agent CLI a process is, or null. Its executable decides: one named `claude`, `codex` or `gemini` (the native
 * binaries; npm's Claude Code installs `bin/claude.exe`), or one in Claude Code's native install, named for its
 * version (`~/.local/share/claude/versions/2.1.3`). For an interpreter (node, bun, deno), the script it runs
 * (`node …/codex.js`), or its process title when it has rewritten its whole command line (Claude Code from npm
 * titles itself `claude`). A shell, python or an editor is never one, whatever it calls itself.
 */
export function agentCli(process: ProcessView): AgentCli | null {
  if (process.exe === null) return null;
  const executable = programName(process.exe);
  if (isAgentCli(executable)) return executable;
  if (/\/claude\/versions\/[^/]+$/.test(withoutDeleted(process.exe))) return "claude";
  if (!INTERPRETERS.has(executable)) return null;
  const [first = "", ...rest] = process.argv;
  const script = rest.length === 0 ? first : rest.find((arg) => !arg.startsWith("-"));
  const name = script === undefined ? "" : programName(script);
  return isAgentCli(name) ? name : null;
}

/** The fields of `/proc/PID/stat` after the parenthesised command name, which may hold spaces and parentheses. */
function statFields(pid: number | string): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

function readProcess(pid: number | string): ProcessView | null {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    while (argv.length > 0 && argv[argv.length - 1] === "") argv.pop();
    const comm = readFileSync(`/proc/${pid}/comm`, "utf8").replace(/\n$/, "");
    let exe: string | null = null;
    try {
      exe = readlinkSync(`/proc/${pid}/exe`);
    } catch {
      // Another user's process, or a zombie: no executable to judge it by.
    }
    return { pid: Number(pid), exe, argv, comm };
  } catch {
    return null;
  }
}

/** The processes of a group, other than its leader, whose standard input is `tty`. */
function terminalReaders(group: number, tty: string): ProcessView[] {
  const readers: ProcessView[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === group) continue;
    try {
      if (Number(statFields(entry)[2]) !== group || readlinkSync(`/proc/${entry}/fd/0`) !== tty) continue;
    } catch {
      continue;
    }
    const reader = readProcess(entry);
    if (reader) readers.push(reader);
  }
  return readers;
}

/**
 * Who holds a pane's terminal, from /proc: the pane's first process (`#{pane_pid}`) names its terminal's foreground
 * process group (field 8 of its stat), whose leader is read, and, when the leader is an agent CLI, the group's other
 * processes that read the terminal (`#{pane_tty}`), found by a scan of /proc. Null off Linux, or when the processes
 * are gone.
 */
export function readForeground(panePid: number, tty: string): ForegroundView | null {
  if (!Number.isInteger(panePid) || panePid <= 0) return null;
  try {
    const group = Number(statFields(panePid)[5]);
    if (!Number.isInteger(group) || group <= 0) return null;
    const leader = readProcess(group);
    if (!leader) return null;
    // The other readers matter only behind an agent CLI (anything else is refused whoever reads): no /proc scan else.
    return { leader, readers: agentCli(leader) === null ? [] : terminalReaders(group, tty) };
  } catch {
    return null;
  }
}
