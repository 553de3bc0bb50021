/**
 * The Codex CLI adapter: the app-server daemon's control socket, where the TUI's thread lives. While a turn runs,
 * `turn/steer` puts the mail in the running turn (the model reads it after the running tool's output); otherwise
 * `thread/queue/add` starts a turn with it. The pane's thread is the daemon's loaded, non-ephemeral thread whose
 * working directory is the TUI's: two TUIs of one daemon in one directory cannot be told apart, and are said so.
 */
import { join } from "node:path";
import { CodexControl, controlSocketOf, RpcError } from "./codex-control.ts";
import { cwdOf, environOf } from "./proc.ts";
import type { Found, Route, Sent } from "../core/route.ts";
import { processStart } from "./claude-inbox.ts";

export function codexHomeOf(pid: number, fallback: Record<string, string | undefined>): string | null {
  const env = environOf(pid);
  const home = env.HOME ?? fallback.HOME;
  return env.CODEX_HOME || (home ? join(home, ".codex") : null);
}

const hooksOnly = (reason: string): Found => ({ route: null, none: { reason: `${reason}; its hooks bring the mail`, hooks: true } });

export async function findCodex(pid: number, paneId: string, env: Record<string, string | undefined>): Promise<Found> {
  const home = codexHomeOf(pid, env);
  const cwd = cwdOf(pid);
  if (home === null || cwd === null) return hooksOnly(`cannot read the Codex CLI process ${pid} in pane ${paneId}`);
  const control = controlSocketOf(home);
  let client: CodexControl;
  try {
    client = await CodexControl.open(control);
  } catch (error) {
    return hooksOnly(`no Codex app-server daemon answers at ${control} (${(error as Error).message})`);
  }
  try {
    const threads = (await client.loadedThreads()).filter((thread) => thread.cwd === cwd && thread.ephemeral !== true);
    if (threads.length === 1)
      return {
        route: {
          channel: "codex-control",
          pane: paneId,
          control,
          threadId: threads[0]!.id,
          pid,
          procStart: processStart(pid) ?? undefined,
        },
      };
    if (threads.length === 0) return hooksOnly(`the Codex daemon of ${home} has no thread loaded in ${cwd}`);
    return hooksOnly(`${threads.length} Codex threads in ${cwd} share the daemon of ${home}, so which is pane ${paneId}'s cannot be told`);
  } catch (error) {
    return hooksOnly(`the Codex daemon at ${control} did not list its threads (${(error as Error).message})`);
  } finally {
    client.close();
  }
}

/** Steers the running turn, or queues a new one; the answer (turn id, queued submission id) is the detail. */
export async function sendToCodex(route: Extract<Route, { channel: "codex-control" }>, text: string): Promise<Sent> {
  let client: CodexControl;
  try {
    client = await CodexControl.open(route.control);
  } catch (error) {
    return { ok: false, reason: `the Codex daemon at ${route.control} did not answer (${(error as Error).message})`, retry: false };
  }
  try {
    const turnId = await client.activeTurn(route.threadId);
    if (turnId !== null) {
      try {
        const steered = await client.steer(route.threadId, turnId, text);
        return { ok: true, channel: "codex-steer", detail: `thread ${route.threadId}, turn ${steered.turnId}` };
      } catch (error) {
        // The turn ended between the two calls ("no active turn to steer"): queue instead.
        if (!(error instanceof RpcError && error.code === -32600)) throw error;
      }
    }
    const queued = await client.queue(route.threadId, text);
    return { ok: true, channel: "codex-queue", detail: `thread ${route.threadId}, queued ${queued.queuedSubmission.id}` };
  } catch (error) {
    return { ok: false, reason: `Codex did not take the mail on thread ${route.threadId} (${(error as Error).message})`, retry: false };
  } finally {
    client.close();
  }
}
