/**
 * Where an action runs: the invocation (the caller's working directory and environment, the CLI's own or an MCP
 * client's), and what it tells of the caller's place: the host an agent is registered on, and the tmux server its
 * pane belongs to. Both are part of who an agent is: one name is one agent across hosts, and an AGENTMAIL_NAME
 * claim holds on one tmux server.
 */
import type { HookThread } from "../mail/doorbell.ts";
import { HOSTNAME } from "../store/durable/process-identity.ts";

type Env = Record<string, string | undefined>;

/** Where an action runs: the caller's working directory and environment (the CLI's own, or an MCP client's). */
export interface Invocation {
  cwd: string;
  env: Env;
  /**
   * A hook run in Codex's app-server daemon: the thread it serves, whose pointer to the agent's doorbell the hook's
   * commands keep (mail/doorbell.ts), so the next hook's shell finds the bell without agentmail.
   */
  codexThread?: HookThread;
}

export const currentInvocation = (): Invocation => ({ cwd: process.cwd(), env: process.env });

/** The host an agent runs on, as the registry records it: AGENTMAIL_HOST (two hosts in one test), else the machine's name. */
export const agentHost = (env: Env): string => env.AGENTMAIL_HOST?.trim() || HOSTNAME;

/** The tmux server a pane belongs to: `$TMUX` is `<socket>,<server pid>,<session>`; the session part is dropped. */
export function tmuxServerOf(env: Env): string | null {
  const tmux = env.TMUX ?? "";
  const comma = tmux.lastIndexOf(",");
  return comma > 0 ? tmux.slice(0, comma) : null;
}
