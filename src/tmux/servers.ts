/**
 * The tmux servers of one machine, each asked through its socket (`-S`), never through $TMUX: the person's views
 * run outside tmux, or in another server than the agents they watch, and still see the agents' windows and panes.
 */
import { existsSync } from "node:fs";
import { tmux } from "./client.ts";
import { listWindowsArgs, newMarker, parseWindows, splitRecords, type Window } from "./caller.ts";
import { listAllPanes, type Pane } from "./windows.ts";

type Env = Record<string, string | undefined>;

/** The socket of a server as the registry names it (`$TMUX` without its session part: `<socket>,<server pid>`). */
export function socketOf(server: string): string | null {
  const comma = server.lastIndexOf(",");
  const socket = comma > 0 ? server.slice(0, comma) : server;
  return socket.startsWith("/") ? socket : null;
}

/** The socket tmux uses when none is named: `$TMUX_TMPDIR/tmux-<uid>/default`. */
export function defaultSocket(env: Env): string {
  const uid = typeof process.getuid === "function" ? process.getuid() : 0;
  return `${(env.TMUX_TMPDIR || "/tmp").replace(/\/+$/, "")}/tmux-${uid}/default`;
}

/** Every window of the server on `socket`, with where its pane works; null when no server answers there. */
export async function windowsOn(socket: string, env: Env): Promise<Window[] | null> {
  const marker = newMarker();
  try {
    const result = await tmux(["-S", socket, ...listWindowsArgs(marker)], env);
    if (result.code !== 0) return null;
    return await parseWindows(splitRecords(result.stdout, marker) ?? []);
  } catch {
    return null;
  }
}

/**
 * Every pane of the server on `socket`; `gone` when no server runs there (no socket, or nobody listening on it), null
 * when it cannot be told (tmux missing or hung).
 */
export async function panesOn(socket: string, env: Env): Promise<Pane[] | "gone" | null> {
  if (!existsSync(socket)) return "gone";
  const panes = await listAllPanes(env, socket);
  if (panes !== null) return panes;
  try {
    const result = await tmux(["-S", socket, "list-sessions"], env);
    return /no server running|connection refused|error connecting/i.test(result.stderr) ? "gone" : null;
  } catch {
    return null;
  }
}
