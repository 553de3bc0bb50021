/**
 * The doorbell: how an agent's hook decides "no mail" without starting agentmail. The rule is stated here once; the
 * shell that applies it is in the commands the hooks install (hooks/hook-commands.ts, its names typed against these:
 * the pointers and the files), store/local/doorbell.ts keeps the files, and the hooks' agentmail commands settle the bell.
 *
 * Each agent of a file store has a bell, `<bell dir>/bell` (store/local/layout.ts places the bell dir in the store):
 *
 *   rung     not empty: every append to the agent's mailbox, or to the queue of a role it holds, adds a byte (under
 *            the mailbox's lock, once the message is in the file), and so does joining a role; a bell made, or a pane
 *            pointed at another bell, starts rung (until agentmail has looked, nobody knows there is no mail)
 *   quiet    there and empty: agentmail last found nothing unread for the agent, and emptied it under the locks of
 *            the agent's mailbox and of its roles' queues (Store.doorbells.settle, run by `receive --hook` and
 *            `receive --after-tool`: actions/hook-mail.ts)
 *   missing  no hook has looked here yet, a ring failed (the bell is removed instead), or the store has no bells
 *            (Redis: another host's send cannot ring a file here)
 *
 * The hook's decision: the bell its pane points at is quiet → no mail, exit 0, and at the end of a turn the agent is
 * marked ready (`<bell dir>/ready`, written by the shell; its mtime is when). Anything else (no tmux, no pointer, a
 * rung or missing bell, a failed write) → agentmail starts, and decides itself: it shows the mail, or settles the bell.
 * Never a missed message: a send either lands before agentmail's look under those locks (the bell stays rung) or
 * rings after it.
 *
 * The shell finds the bell from its environment alone, through a pointer the hooks' agentmail commands keep (status,
 * onboard, receive --hook):
 *
 *   <tmux socket>.agentmail/<server pid><pane id>               the pane's pointer: a symlink to the agent's bell dir
 *   <tmux socket>.agentmail/<server pid>codex-<thread id>       a Codex thread's, for the hooks Codex runs in its
 *                                                               app-server daemon, whose $TMUX_PANE is another TUI's
 *
 * The server's pid is in the name because a restarted server numbers its panes from 0 again.
 */
import { join } from "node:path";

type Env = Record<string, string | undefined>;

/** The bell's file in an agent's bell dir: rung when not empty, quiet when empty. */
export const BELL_FILE = "bell";
/** The mark the Stop hook's shell writes when the bell is quiet: the agent is ready since its mtime. */
export const READY_FILE = "ready";
/** What the pointers' directory adds to the tmux socket's path. */
export const POINTERS_DIR = ".agentmail";
/** What a Codex thread's pointer has between the server's pid and the thread id. */
export const THREAD_POINTER = "codex-";

/**
 * A thread of Codex's app-server daemon, for a hook run there: its id (the hook input's `session_id`) and the `$TMUX`
 * the daemon gives every hook (the first TUI's), which is what the hook's shell finds the thread's pointer from.
 */
export interface HookThread {
  id: string;
  tmux: string;
}

/** A pointer: the directory it is made in, and its path. */
export interface Pointer {
  dir: string;
  path: string;
}

/** Thread ids are UUIDs: nothing else may become part of a pointer's name. */
const THREAD_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** `<socket>` and `<server pid>` of a `$TMUX` (`<socket>,<server pid>,<session>`), or null. */
function serverOf(tmux: string | undefined): { socket: string; pid: string } | null {
  if (!tmux?.startsWith("/")) return null;
  const first = tmux.indexOf(",");
  if (first === -1) return null;
  const rest = tmux.slice(first + 1);
  const second = rest.indexOf(",");
  return { socket: tmux.slice(0, first), pid: second === -1 ? rest : rest.slice(0, second) };
}

/**
 * The pane's pointer, as the hook's shell computes it: `${TMUX%%,*}.agentmail/<pid>$TMUX_PANE`. Null outside tmux or
 * for a relative socket path (the shell looks only at absolute ones).
 */
export function panePointer(env: Env): Pointer | null {
  const server = serverOf(env.TMUX);
  const pane = env.TMUX_PANE;
  if (server === null || !pane?.startsWith("%")) return null;
  const dir = `${server.socket}${POINTERS_DIR}`;
  return { dir, path: join(dir, server.pid + pane) };
}

/**
 * A Codex thread's pointer, as the hook's shell computes it: `${TMUX%%,*}.agentmail/<pid>codex-<thread id>`, with the
 * daemon's TMUX. Null for anything but a UUID thread id and an absolute socket path.
 */
export function threadPointer(thread: HookThread): Pointer | null {
  const server = serverOf(thread.tmux);
  if (server === null || !THREAD_ID.test(thread.id)) return null;
  const dir = `${server.socket}${POINTERS_DIR}`;
  return { dir, path: join(dir, `${server.pid}${THREAD_POINTER}${thread.id}`) };
}
