import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { agentCli, type ForegroundView, type ProcessView } from "../core/typing-gate.ts";

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
