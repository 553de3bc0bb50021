/**
 * The Codex CLI adapter: the app-server daemon's control socket, where the TUI's thread lives (deliver.ts then
 * steers a running turn, or queues a new one). The pane's thread is the daemon's loaded, non-ephemeral thread whose
 * working directory is the TUI's. A thread names no process, so it is the pane's only when no other TUI of that
 * daemon works in that directory (on another tmux server, outside tmux, or still starting, its thread not loaded
 * yet): two TUIs of one daemon in one directory cannot be told apart, and are said so (identity/codex-daemon.ts
 * applies the same rule to the hooks the daemon runs).
 */
import { join } from "node:path";
import { CodexControl, controlSocketOf } from "./codex-control.ts";
import { cwdOf, environOf } from "./proc.ts";
import type { Found } from "../mail/route.ts";
import { processStart } from "./claude-inbox.ts";
import { codexTuisIn, terminalOf } from "../identity/codex-daemon.ts";

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
  const own = terminalOf(pid) ?? `pid ${pid}`;
  const others = codexTuisIn(cwd, home).filter((tui) => tui.terminal !== own).length;
  if (others > 0)
    return hooksOnly(
      `${others + 1} Codex CLIs work in ${cwd} with the daemon of ${home}, so which thread is pane ${paneId}'s cannot be told`,
    );
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
