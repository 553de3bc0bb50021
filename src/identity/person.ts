/**
 * The person who runs the agents, seen from tmux. They have no agent's window (their views run outside tmux, or in
 * a pane of any session), so the windows that hold names are those of every tmux server of this machine where the
 * room's agents live: the view's own server (inside tmux), each server the store's agents registered from, and the
 * default one. Sorted by project as a window of the view's project sorts them (projects.ts), so a name resolves as
 * `agentmail send` resolves it from a window of this project: another project's window of the same name is that
 * project's agent, reached as `name@project`, never a reason to rename it.
 */
import { HOSTNAME } from "../store/durable/process-identity.ts";
import type { Repository } from "../store/paths.ts";
import type { AgentEntry } from "../store/store.ts";
import { resolveCaller, type Caller, type Window } from "../tmux/caller.ts";
import { defaultSocket, socketOf, windowsOn } from "../tmux/servers.ts";
import { namespacesOf } from "../store/open.ts";
import { type Invocation, tmuxServerOf } from "./invocation.ts";
import { sortWindows, type ProjectView } from "./projects.ts";

type Env = Record<string, string | undefined>;

/** The person as tmux sees them: this project's windows (every session, every server) as theirs to write to. */
export interface PersonView {
  caller: Caller;
  projects: ProjectView;
  /** The sockets of the servers looked at, the view's own first. */
  sockets: string[];
}

/**
 * The sockets of this machine's tmux servers where the room's agents live: the view's own (when inside tmux), each
 * one an agent registered from (its last registration, its pinned name, its AGENTMAIL_NAME claim), then the default.
 */
export function roomSockets(env: Env, statuses: readonly AgentEntry[]): string[] {
  const sockets = new Set<string>();
  const add = (server: string | undefined, host: string | undefined) => {
    if (server === undefined || (host !== undefined && host !== HOSTNAME)) return;
    const socket = socketOf(server);
    if (socket !== null) sockets.add(socket);
  };
  add(tmuxServerOf(env) ?? undefined, undefined);
  for (const entry of statuses) {
    add(entry.tmux_server, entry.tmux_host);
    add(entry.claim_server, entry.claim_host);
    add(entry.server, entry.host);
  }
  sockets.add(defaultSocket(env));
  return [...sockets];
}

/** The caller's own tmux view when inside tmux (their session's windows), else null. */
async function ownView(env: Env): Promise<Caller | null> {
  if (!env.TMUX || !env.TMUX_PANE) return null;
  try {
    return await resolveCaller(env);
  } catch {
    return null;
  }
}

/** The person's window id outside tmux (tmux's own ids start with "@"). */
const NO_WINDOW = "(outside tmux)";

/**
 * The person's view: the windows of every room server sorted by project (see the head of this file); this project's
 * windows, of every session, are the ones they write to. Window ids of other servers than their own are prefixed with
 * the server's place in `sockets`, since every server numbers its windows from @0.
 */
export async function personView(
  invocation: Invocation,
  repository: Repository | null,
  statuses: readonly AgentEntry[],
): Promise<PersonView> {
  const { env } = invocation;
  const own = await ownView(env);
  const sockets = roomSockets(env, statuses);
  const server = tmuxServerOf(env);
  const ownSocket = own && server !== null ? socketOf(server) : null;
  const serverWindows: Window[] = [...(own?.serverWindows ?? [])];
  const lists = await Promise.all(sockets.map((socket) => (socket === ownSocket ? null : windowsOn(socket, env))));
  lists.forEach((windows, index) => {
    // A window of another server whose pane's directory tmux does not give belongs to no project that can be told
    // (projects.ts keeps such a window in the caller's own project, which holds on the caller's own server only).
    for (const window of windows ?? []) if (window.path !== "") serverWindows.push({ ...window, id: `${index}:${window.id}` });
  });
  const unsorted: Caller = {
    paneId: own?.paneId ?? "",
    sessionId: own?.sessionId ?? "",
    // Outside tmux the person has no window: an id no window has, so neither a window of a server nor one made for
    // an agent known only by its registration (whose id is "") passes for the person's own.
    windowId: own?.windowId ?? NO_WINDOW,
    name: "",
    windows: [],
    serverWindows,
  };
  const namespaceOf = await namespacesOf(env);
  const { caller, projects } = sortWindows(unsorted, repository, env, namespaceOf);
  // Every session's windows of this project: the person watches the whole project, not one session of it.
  return { caller: { ...caller, windows: caller.serverWindows }, projects, sockets };
}
