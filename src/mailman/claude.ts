/**
 * The Claude Code adapter: the session's own inbox socket, found through its registry entry for the process that
 * holds the pane's terminal (claude-inbox.ts: never by pane id alone).
 */
import { join } from "node:path";
import { frameLine, sendFrame, sessionOfProcess } from "./claude-inbox.ts";
import { environOf } from "./proc.ts";
import type { Found, Route, Sent } from "../mail/route.ts";

/** Its config directory, read from its own environment: a session started with another HOME is still found. */
export function claudeConfigDir(pid: number, fallback: Record<string, string | undefined>): string | null {
  const env = environOf(pid);
  const home = env.HOME ?? fallback.HOME;
  return env.CLAUDE_CONFIG_DIR || (home ? join(home, ".claude") : null);
}

export function findClaude(pid: number, paneId: string, env: Record<string, string | undefined>): Found {
  const configDir = claudeConfigDir(pid, env);
  const session = configDir === null ? null : sessionOfProcess(configDir, pid, paneId);
  if (session?.messagingSocketPath)
    return {
      route: {
        channel: "claude-inbox",
        pane: paneId,
        socket: session.messagingSocketPath,
        pid: session.pid,
        procStart: session.procStart,
        status: session.status,
      },
    };
  const why = session
    ? `Claude Code ${session.version ?? ""} in pane ${paneId} has no inbox (older than 2.1.332, or CLAUDE_CODE_HARBOR_KITE=0)`
    : `no Claude Code session registry entry is the process in pane ${paneId} (pid ${pid}, under ${configDir ?? "an unknown config dir"})`;
  return { route: null, none: { reason: `${why.replace(/ {2}/g, " ")}; its hooks bring the mail`, hooks: true } };
}

/**
 * One frame to the session. `from`: a socket this process listens on for receipts, and `msgId` the UUID they will
 * carry; without them Claude sends none.
 */
export async function sendToClaude(
  route: Extract<Route, { channel: "claude-inbox" }>,
  text: string,
  receipts?: { from: string; msgId: string },
  timeoutMs?: number,
): Promise<Sent> {
  try {
    await sendFrame(route.socket, frameLine(text, receipts ?? {}), timeoutMs);
    return { ok: true, channel: "claude-inbox", detail: `session ${route.pid} (${route.status ?? "status unknown"})` };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A socket whose session died refuses, or is gone: find the route again before the next try.
    return {
      ok: false,
      reason: `Claude Code's inbox ${route.socket} did not take the frame (${code ?? (error as Error).message})`,
      retry: false,
    };
  }
}
