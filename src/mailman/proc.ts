/**
 * What delivery reads of an agent CLI's process in /proc (Linux; the same user's processes): its environment, where
 * its own config directory is named (CLAUDE_CONFIG_DIR, CODEX_HOME, HOME), and its working directory, which names
 * its Codex thread. Unreadable is empty: the caller then finds no channel and says so.
 */
import { readFileSync, readlinkSync } from "node:fs";

export function environOf(pid: number): Record<string, string> {
  const env: Record<string, string> = {};
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/environ`, "utf8");
  } catch {
    return env;
  }
  for (const entry of text.split("\0")) {
    const equals = entry.indexOf("=");
    if (equals > 0) env[entry.slice(0, equals)] = entry.slice(equals + 1);
  }
  return env;
}

export function cwdOf(pid: number): string | null {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return null;
  }
}

/** A process's parent pid from /proc, or 0 when it is gone. */
function parentOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) || 0;
  } catch {
    return 0;
  }
}

/** How far down a pane's foreground process an agent CLI's own process may be (a wrapper, a shim, the binary). */
const DESCENT = 8;

/** Whether `pid` is `ancestor` or runs under it (within a few generations). */
export function descendsFrom(pid: number, ancestor: number): boolean {
  for (let at = pid, depth = 0; at > 1 && depth <= DESCENT; at = parentOf(at), depth++) if (at === ancestor) return true;
  return false;
}
