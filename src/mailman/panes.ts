/**
 * The panes whose agents the mailman serves, and doctor's delivery lines describe: the tmux server's panes that work
 * in this project (identity/projects.ts, the rule `send` and `recipients` apply to windows). Another project's
 * window of the same name on the same server is never framed, typed into, kept as a route or listed as this
 * project's agent.
 */
import { worksHere, type ProjectBoundary } from "../identity/projects.ts";
import { foregroundOf, listAllPanes, type Pane } from "../tmux/windows.ts";
import { descendsFrom } from "./proc.ts";
import type { Route } from "../mail/route.ts";
import { readForeground, type ForegroundView } from "../tmux/foreground.ts";
import { paneAgent } from "./typing-gate.ts";

type Env = Record<string, string | undefined>;

/** This project's panes of the tmux server the environment names; null when there is no server to ask. */
export async function projectPanes(env: Env, project: ProjectBoundary | null): Promise<Pane[] | null> {
  const panes = await listAllPanes(env);
  if (panes === null) return null;
  return panes.filter((pane) => worksHere(project, pane.path));
}

/**
 * Whether a route found earlier (by this mailman or one before it) still leads into `agent`'s window among `panes`:
 * its process is the foreground process of one of the agent's panes, or runs under it. Pane ids alone repeat
 * across tmux servers, and a route kept from before may lead into another project's pane.
 */
export function routeInPanes(agent: string, route: Route, panes: readonly Pane[]): boolean {
  if (typeof route.pid !== "number") return false;
  for (const pane of panes) {
    if (pane.windowName !== agent || pane.paneId !== route.pane) continue;
    const leader = readForeground(pane.panePid, pane.tty)?.leader.pid;
    if (leader !== undefined && descendsFrom(route.pid, leader)) return true;
  }
  return false;
}

/** A pane with who holds its terminal: the foreground process, and the agent CLI that is (null: none). */
export type SeenPane = Pane & { foreground: ForegroundView | null; agent: string | null };

/** The panes of `name`'s window among `panes`, each with who holds its terminal (none: no window of that name). */
export function panesOf(panes: readonly Pane[], name: string): SeenPane[] {
  const seen: SeenPane[] = [];
  for (const pane of panes) {
    if (pane.windowName !== name) continue;
    const foreground = foregroundOf(pane);
    seen.push({ ...pane, foreground, agent: paneAgent(foreground) });
  }
  return seen;
}
