import { readFileSync } from "node:fs";

export function procHostname(path = "/proc/sys/kernel/hostname"): string | null {
  try {
    return readFileSync(path, "utf8").trim() || null;
  } catch {
    return null;
  }
}

/**
 * This machine's name, for lock files and the mailman's pid file. On Linux it is read from /proc, because loading
 * node:os costs ~0.2 ms on every send and receive; elsewhere node:os is loaded only then.
 */
export const HOSTNAME: string = procHostname() ?? (await import("node:os")).hostname();

/** The host an agent runs on, as the registry records it: AGENTMAIL_HOST (two hosts in one test), else the machine's name. */
export const agentHost = (env: Record<string, string | undefined>): string => env.AGENTMAIL_HOST?.trim() || HOSTNAME;
