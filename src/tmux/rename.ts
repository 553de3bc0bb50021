import { AgentmailError } from "../mail/errors.ts";
import { displayName } from "../mail/names.ts";
import { newMarker } from "./caller.ts";
import { tmux } from "./client.ts";

type Env = Record<string, string | undefined>;

/**
 * A name as tmux's rename-window must be given it to store it unchanged: tmux expands formats in the new name
 * (`#{pane_id}`, and `#(command)` would run a shell command), so each run of `#` is doubled, except a run right
 * before `[`, which tmux keeps as it is (a style, tmux 3.3 format_expand; `agentmail name` refuses names holding
 * `#[`, but a window renamed with plain tmux may hold one); and an argument ending in `;` ends a command, unless the
 * `;` is escaped as `\;`.
 */
export function tmuxLiteral(name: string): string {
  const escaped = name.replace(/#+/g, (run: string, at: number) => (name[at + run.length] === "[" ? run : run + run));
  return escaped.endsWith(";") ? `${escaped.slice(0, -1)}\\;` : escaped;
}

/**
 * Names a window, addressed by its id (`@N`, never by name: `2`, `-x` or `a.b` would hit another window), and pins
 * the name: automatic-rename off (tmux would rename it after the program in it) and allow-rename off (the program
 * could rename it with an escape sequence). One tmux call; returns the name as tmux now has it.
 */
export async function pinWindowName(windowId: string, name: string, env: Env): Promise<string> {
  const marker = newMarker();
  const result = await tmux(
    [
      "rename-window",
      "-t",
      windowId,
      "--",
      tmuxLiteral(name),
      ";",
      "set-option",
      "-w",
      "-t",
      windowId,
      "automatic-rename",
      "off",
      ";",
      "set-option",
      "-w",
      "-t",
      windowId,
      "allow-rename",
      "off",
      ";",
      "display-message",
      "-p",
      "-t",
      windowId,
      `${marker}#{window_name}`,
    ],
    env,
  );
  if (result.code !== 0 || !result.stdout.startsWith(marker)) {
    const reason = result.stderr.trim().split("\n")[0] || `exit ${result.code}`;
    const why = `tmux could not rename your window ${windowId} (${displayName(reason)})`;
    throw new AgentmailError("io", `${why}; check that it still exists, then retry`);
  }
  return result.stdout.slice(marker.length).replace(/\n$/, "");
}

/**
 * Gives a window back the name it had (and tmux's automatic renaming, when it had that): what a refused
 * `agentmail name` leaves, so a refusal changes nothing. Best effort: the refusal is what the caller reports.
 */
export async function restoreWindowName(windowId: string, name: string, auto: boolean, env: Env): Promise<void> {
  const args = ["rename-window", "-t", windowId, "--", tmuxLiteral(name)];
  if (auto) args.push(";", "set-option", "-w", "-t", windowId, "automatic-rename", "on");
  await tmux(args, env).catch(() => {});
}
