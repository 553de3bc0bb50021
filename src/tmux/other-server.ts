/** Asking another tmux server (its socket named, not $TMUX) about its panes: a claim's or a name's holder may live there. */
import { existsSync } from "node:fs";
import { isDecimal } from "../mail/ids.ts";
import { AgentmailError } from "../mail/errors.ts";
import { tmux } from "./client.ts";

type Env = Record<string, string | undefined>;

/**
 * Whether `pane` still lives on the tmux server `server` (`$TMUX` without its session part: `<socket>,<server pid>`,
 * as the registry records it), asked of that server through its socket. A server restarted on the same socket (its
 * pid differs: pane ids start again), a socket nobody answers on, or a pane gone: not alive. A server that does not
 * answer in time may be alive: counted alive, so a hung server's agent never loses its name (and mail) to another.
 * The server and pane come from the store, hostile input: they reach tmux as argv words, checked for form first.
 */
export async function paneAliveOn(server: string, pane: string, env: Env): Promise<boolean> {
  const comma = server.lastIndexOf(",");
  const socket = server.slice(0, comma);
  const pid = server.slice(comma + 1);
  if (comma < 1 || !isDecimal(pid) || pane[0] !== "%" || !isDecimal(pane.slice(1))) return false;
  try {
    // For a pane that is gone display-message still succeeds, with the pane's fields empty.
    const result = await tmux(["-S", socket, "display-message", "-p", "-t", pane, "#{pid} #{pane_id}"], env);
    return result.code === 0 && result.stdout.trim() === `${pid} ${pane}`;
  } catch (error) {
    if (error instanceof AgentmailError) return true;
    throw error;
  }
}

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
