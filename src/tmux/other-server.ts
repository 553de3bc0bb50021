import { isDecimal } from "../core/decimal.ts";
import { AgentmailError } from "../core/errors.ts";
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
