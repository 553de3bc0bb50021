import { existsSync } from "node:fs";
import { tmux } from "./client.ts";

/**
 * The panes of the tmux server that `server` names (`$TMUX` without its session part: `<socket>,<server pid>`), for
 * telling whether a pane still exists: its pane ids; "gone" when that server is certainly not running any more (no
 * socket, a socket nobody answers on, or another server answering on it: a restarted server, whose pane ids start
 * again); null when it cannot be told (tmux missing or hung, an unexpected answer).
 */
export async function panesOfServer(server: string): Promise<Set<string> | "gone" | null> {
  const comma = server.lastIndexOf(",");
  if (comma <= 0) return null;
  const socket = server.slice(0, comma);
  const pid = server.slice(comma + 1);
  if (!existsSync(socket)) return "gone";
  let result: Awaited<ReturnType<typeof tmux>>;
  try {
    // -S names the socket: no $TMUX needed, and the caller's own server is not asked instead.
    result = await tmux(["-S", socket, "list-panes", "-a", "-F", "#{pid} #{pane_id}"], process.env);
  } catch {
    return null;
  }
  if (result.code !== 0) return /no server running|connection refused/i.test(result.stderr) ? "gone" : null;
  const panes = new Set<string>();
  for (const line of result.stdout.split("\n")) {
    const [answering, pane] = line.split(" ");
    if (!answering || !pane) continue;
    if (answering !== pid) return "gone";
    panes.add(pane);
  }
  return panes;
}
