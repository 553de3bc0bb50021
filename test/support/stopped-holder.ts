/**
 * Catching a process while it holds some of agentmail's locks, and stopping it there (SIGSTOP: what a VM pause or a
 * suspended laptop does to it), for tests of what others may do meanwhile. A lock is a symlink naming its holder's
 * pid (src/store/durable/lock.ts), so which ones it holds is read from the store, and stays true while it is stopped.
 */
import { lutimesSync, readFileSync, readlinkSync } from "node:fs";

/** The lock paths among `paths` that name `pid` as their holder now. */
export function heldBy(pid: number, paths: readonly string[]): string[] {
  return paths.filter((path) => {
    try {
      return readlinkSync(path).startsWith(`am1:${pid}:`);
    } catch {
      return false;
    }
  });
}

function state(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]!;
  } catch {
    return null;
  }
}

/**
 * Waits until the process holds exactly the locks `wanted` asks for (among `paths`), stops it, and returns the ones
 * it holds, stopped. It is polled and, when it had moved on by the time it stopped, let go and caught again. Throws,
 * saying so, if it ends first or does not get there within `deadlineMs`.
 */
export async function stopWhileHolding(
  pid: number,
  paths: readonly string[],
  wanted: (held: string[]) => boolean,
  deadlineMs = 60_000,
): Promise<string[]> {
  const deadline = Date.now() + deadlineMs;
  while (Date.now() < deadline) {
    const current = state(pid);
    if (current === null || current === "Z") throw new Error(`process ${pid} ended before it was seen holding the locks wanted`);
    if (!wanted(heldBy(pid, paths))) {
      await Bun.sleep(1);
      continue;
    }
    process.kill(pid, "SIGSTOP");
    while (state(pid) !== "T" && state(pid) !== null) await Bun.sleep(1);
    const held = heldBy(pid, paths);
    if (wanted(held)) return held;
    process.kill(pid, "SIGCONT");
  }
  throw new Error(`timed out after ${deadlineMs} ms waiting for process ${pid} to hold the locks wanted`);
}

/** Makes locks look `ms` old, as a pause that long would: lock rules that judge by age see them so. */
export function ageLocks(paths: readonly string[], ms: number): void {
  const then = new Date(Date.now() - ms);
  for (const path of paths) lutimesSync(path, then, then);
}
