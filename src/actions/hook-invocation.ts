/**
 * The invocation of a command the installed hooks run (status, onboard, receive --hook and --after-tool, guard,
 * release --auto): the caller's, except in Codex's app-server daemon, where the environment is the one of the pane
 * whose thread the hook serves (hooks/codex-daemon.ts). Null when that pane cannot be told: the hook does nothing.
 */
import { codexDaemonAncestor, paneEnvironment } from "../hooks/codex-daemon.ts";
import type { Invocation } from "./context.ts";

/** The longest hook input read: a post-tool hook's input holds the tool's whole output. */
const MAX_HOOK_INPUT = 64 * 1024 * 1024;

/** `input`: the hook's JSON when the caller read it already (the guard); else stdin is read, only in the daemon. */
export async function hookInvocation(input?: string): Promise<Invocation | null> {
  const cwd = process.cwd();
  const daemon = codexDaemonAncestor();
  if (daemon === null) return { cwd, env: process.env };
  let json = input;
  if (json === undefined) {
    const { readStdin } = await import("../input/stdin.ts");
    try {
      json = readStdin(MAX_HOOK_INPUT);
    } catch {
      json = "";
    }
  }
  const env = paneEnvironment(process.env, json, daemon.hookShell);
  return env === null ? null : { cwd, env };
}
