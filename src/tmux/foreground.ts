import { readFileSync } from "node:fs";

/**
 * The command line of the program in a pane's foreground, from /proc: the pane's first process (`#{pane_pid}`)
 * names the terminal's foreground process group (field 8 of its stat), whose leader's argv is read. tmux shows only
 * the program's name, which for `node …/codex` is `node`. Null off Linux or when the processes are gone.
 */
export function foregroundCommandLine(panePid: number): string[] | null {
  if (!Number.isInteger(panePid) || panePid <= 0) return null;
  try {
    const stat = readFileSync(`/proc/${panePid}/stat`, "utf8");
    const group = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[5]);
    if (!Number.isInteger(group) || group <= 0) return null;
    const argv = readFileSync(`/proc/${group}/cmdline`, "utf8").split("\0");
    while (argv.length > 0 && argv[argv.length - 1] === "") argv.pop();
    return argv.length > 0 ? argv : null;
  } catch {
    return null;
  }
}
