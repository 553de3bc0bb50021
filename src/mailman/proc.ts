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
