/**
 * Nothing started by hand: the store's mailman is brought up when none runs, so mail reaches an idle agent through its
 * agent CLI's channel with no step beyond `hooks install`. Two moments do it, whichever comes first:
 *
 *   an agent's session start   `onboard`, which every SessionStart hook runs: Claude Code and Gemini CLI run it as the
 *                              session starts; Codex CLI only with its first turn
 *   a send                     when none runs, agentmail's hooks are installed for Claude Code or Codex CLI, and a
 *                              recipient's window holds such an agent CLI: a Codex TUI that never had a turn, a session
 *                              started before the hooks were installed; a few reads, and one tmux call once they say yes
 *
 * Not when it was stopped by hand (`mailman stop`): it stays stopped until started by hand. Spawned in the background
 * and never waited for; the mailman's own registration decides when two start at once. Why a mailman rather than
 * `send` framing along a route it found itself: Claude Code tells of a frame it did not put before the model only
 * through receipts to a socket someone listens on, up to 5 s late (held, dropped), which a send cannot wait for; the
 * mailman listens, marks read after that grace, keeps holding sessions out, and verifies the routes later sends use.
 */
import { mailmanEnvironment, selfCommand, spawnMailman } from "./daemon.ts";
import { mailmanWanted, type Starter } from "./files.ts";
import { paneAgent } from "./typing-gate.ts";
import { foregroundOf, listAllPanes } from "../tmux/windows.ts";

type Env = Record<string, string | undefined>;

/** The default settings (the daemon's own defaults): `--interval 60 --sweep 5`. */
const DEFAULT_ARGS = ["--interval", "60", "--sweep", "5"];

/** Brings up the mailman of the store at `root` when it is wanted; returns whether it did. Never fails. */
export function bringUpMailman(root: string, env: Env, starter: Starter, self: string[] = selfCommand()): boolean {
  try {
    if (!mailmanWanted(root)) return false;
    spawnMailman(root, DEFAULT_ARGS, mailmanEnvironment(env, starter), self);
    return true;
  } catch {
    return false;
  }
}

/** Whether a window named in `names` has a pane an agent CLI with a channel of its own holds (one tmux call). */
export async function agentCliAmong(names: ReadonlySet<string>, env: Env): Promise<boolean> {
  const panes = await listAllPanes(env);
  for (const pane of panes ?? []) {
    if (!names.has(pane.windowName)) continue;
    const agent = paneAgent(foregroundOf(pane));
    if (agent === "claude" || agent === "codex") return true;
  }
  return false;
}
