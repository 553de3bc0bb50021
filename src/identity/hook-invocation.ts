/**
 * The invocation of a command the installed hooks run (status, onboard, receive --hook and --after-tool, guard,
 * release --auto): the caller's, except in Codex's app-server daemon, where the environment is the one of the pane
 * whose thread the hook serves (codex-daemon.ts). Null when that pane cannot be told: the hook does nothing.
 */
import { codexDaemonAncestor, hookThreadId, paneEnvironment } from "./codex-daemon.ts";
import type { Invocation } from "./invocation.ts";

/**
 * `input` gives the hook's JSON (the caller reads stdin, or has read it already: the guard); it is asked for only in
 * the daemon, and one that fails counts as none.
 */
export async function hookInvocation(input: () => string | Promise<string>): Promise<Invocation | null> {
  const cwd = process.cwd();
  const daemon = codexDaemonAncestor();
  if (daemon === null) return { cwd, env: process.env };
  let json: string;
  try {
    json = await input();
  } catch {
    json = "";
  }
  const env = paneEnvironment(process.env, json, daemon.hookShell);
  if (env === null) return null;
  const thread = hookThreadId(json);
  // The daemon's own TMUX, which the hook's shell has: the thread's pointer is found from it (mail/doorbell.ts).
  return thread === null || !process.env.TMUX ? { cwd, env } : { cwd, env, codexThread: { id: thread, tmux: process.env.TMUX } };
}
