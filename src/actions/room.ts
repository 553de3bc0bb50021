/**
 * Opens the mail room (src/room) for the person's views: the store (and, for a room of every project, the other
 * projects' stores), and what tmux, the claims and the mailman say of each agent.
 */
import { paneAgent } from "../mailman/typing-gate.ts";
import type { PaneFacts } from "../room/agents.ts";
import type { ClaimRow, MailmanView } from "../room/model.ts";
import { enterView, type ViewMark } from "../room/person-views.ts";
import { type AgentFacts, namesIn, type OtherProject, Room, UNKNOWN_PANE } from "../room/room.ts";
import { thresholdsOf } from "../room/thresholds.ts";
import { storeAt } from "../identity/caller.ts";
import { agentHost, type Invocation, tmuxServerOf } from "../identity/invocation.ts";
import { personView, roomSockets } from "../identity/person.ts";
import { namespaceProject, projectOf, type Project } from "../identity/projects.ts";
import { findRepository } from "../store/paths.ts";
import { HOSTNAME } from "../store/durable/process-identity.ts";
import type { AgentEntry, Store } from "../store/store.ts";
import { panesOn, socketOf } from "../tmux/servers.ts";
import { foregroundOf, type Pane } from "../tmux/windows.ts";
import { judgedClaims } from "./claims.ts";
import { registerHuman } from "./human.ts";
import { mailmanStatus } from "./mailman.ts";

/** How often a view renews the person's registration (cleanup's --stale-hours is counted in hours). */
const RENEW_MS = 15 * 60_000;
const presences = new WeakMap<Room, { renew: ReturnType<typeof setInterval>; mark: ViewMark }>();

/** Reminder outcomes that mean the mailman reaches the agent; any other is shown as why not. */
const REACHED = new Set(["reminded", "waiting"]);

/** What a pane's foreground is when no program runs in it: a shell, which no mail can be put before. */
const SHELLS = new Set(["bash", "zsh", "sh", "dash", "fish", "ksh", "mksh", "tcsh", "csh", "ash"]);

/** A store the room follows and how it names its agents (`name@project` for another project's). */
interface Followed {
  store: Store;
  project: string | null;
  shown(name: string): string;
}

/** What the panes of this machine's room servers say of a registered agent's pane. */
function paneFacts(entry: AgentEntry, servers: ReadonlyMap<string, Map<string, Pane> | "gone" | null>, own: string | null): PaneFacts {
  const host = entry.tmux_host ?? entry.claim_host;
  if (entry.pane === "person" || (host !== undefined && host !== HOSTNAME)) return UNKNOWN_PANE;
  const server = entry.tmux_server ?? entry.claim_server ?? own;
  const socket = server === null ? null : socketOf(server);
  const panes = socket === null ? null : (servers.get(socket) ?? null);
  if (panes === null) return UNKNOWN_PANE;
  const pane = panes === "gone" ? undefined : panes.get(entry.pane);
  if (pane === undefined) return { cli: null, open: false, shell: null };
  const foreground = foregroundOf(pane);
  const cli = paneAgent(foreground);
  const comm = foreground?.leader.comm ?? "";
  return { cli, open: true, shell: cli === null && SHELLS.has(comm) ? comm : null };
}

/** The facts of the room (AgentFacts): panes, the mailman's reach and state, every claim judged. */
async function agentFacts(invocation: Invocation, followed: readonly Followed[]): Promise<AgentFacts> {
  const { env } = invocation;
  const statuses: AgentEntry[] = [];
  for (const each of followed) statuses.push(...(await each.store.statuses().catch(() => [])));
  const servers = new Map<string, Map<string, Pane> | "gone" | null>();
  await Promise.all(
    roomSockets(env, statuses).map(async (socket) => {
      const panes = await panesOn(socket, env);
      servers.set(socket, panes === null || panes === "gone" ? panes : new Map(panes.map((pane) => [pane.paneId, pane])));
    }),
  );
  const claims: ClaimRow[] = [];
  for (const each of followed) {
    try {
      for (const claim of (await judgedClaims(each.store)).claims) {
        claims.push({
          id: claim.id,
          path: claim.path,
          holder: each.shown(claim.holder),
          project: each.project,
          shared: claim.shared,
          reason: claim.reason ?? null,
          claimed_at: claim.claimed_at,
          expires_at: claim.expires_at,
          waiters: claim.waiters.map(each.shown),
          state: claim.state,
          why: claim.why ?? null,
          holder_gone: claim.state === "ended" && claim.why !== "expired",
        });
      }
    } catch {
      // Claims that cannot be read are not shown: doctor says why.
    }
  }
  let status: ReturnType<typeof mailmanStatus> | null = null;
  try {
    status = mailmanStatus(invocation);
  } catch {
    // No store on this machine to hold a mailman (outside a repository on a Redis store): agents pull their mail.
  }
  const outcomes = new Map((status?.agents ?? []).map((agent) => [agent.name, agent.outcome]));
  const mailman: MailmanView | null = status && {
    running: status.running,
    pid: status.pid,
    since: status.since,
    last_sweep_at: status.last_sweep_at,
    last_failure: status.last_failure,
    last_failure_at: status.last_failure_at,
  };
  const own = tmuxServerOf(env);
  return {
    pane: (entry) => paneFacts(entry, servers, own),
    reach(name) {
      if (!status?.running) return "pull";
      const outcome = outcomes.get(name);
      return outcome === undefined || REACHED.has(outcome) ? "mailman" : `mailman: ${outcome.replaceAll("_", " ")}`;
    },
    claims,
    mailman,
  };
}

export interface RoomSettings {
  /** The person comes in (a view that writes): registered so that agents can write to them. */
  register?: boolean;
  /** The other projects' stores, for a room of every project; and this project's name beside its own agents. */
  others?: readonly OtherProject[];
  project?: string | null;
}

/**
 * The other projects of a room of every project: each project with an agent's window on the tmux servers the room
 * looks at (identity/person.ts), and every other namespace the store knows (Store.otherNamespaces: on Redis a project
 * across hosts, whose agents may have no window here), its store opened as its agents open it (their repository's,
 * or on Redis their namespace); and this project's name. A store that cannot be opened is left out.
 */
export async function otherProjects(invocation: Invocation): Promise<{ project: string | null; others: OtherProject[] }> {
  const repository = findRepository(invocation.cwd, invocation.env);
  // Not closed: openRoom opens this same store next (a Redis store is kept for the process: store/open.ts).
  const store = await storeAt(invocation);
  const { projects } = await personView(invocation, repository, await store.statuses());
  const found = new Map<string, Project>();
  for (const window of projects.elsewhere) found.set(window.project.key, window.project);
  // A namespace the server cannot list now is only left out, as a store that cannot be opened is.
  for (const namespace of await store.otherNamespaces().catch(() => []))
    if (!found.has(namespace)) found.set(namespace, namespaceProject(namespace));
  const others: OtherProject[] = [];
  for (const project of found.values()) {
    try {
      others.push({ project: project.name, store: await store.projectStore(project) });
    } catch {
      // Its store cannot be opened from here: its agents are not in the room.
    }
  }
  const own = projects.own?.name ?? (repository ? projectOf(repository).name : null);
  return { project: own, others: others.sort((a, b) => (a.project < b.project ? -1 : a.project > b.project ? 1 : 0)) };
}

/**
 * The room of the store this invocation means (AGENTMAIL_URL's Redis store, else the repository's file store).
 * `register`: the person comes in, registered so that agents can write to them; refused, before anything is shown,
 * when an agent has their name.
 */
export async function openRoom(invocation: Invocation, human: string | null, settings: RoomSettings = {}): Promise<Room> {
  const store = await storeAt(invocation);
  const present = settings.register === true && human !== null;
  if (present) await registerHuman(invocation, store, human, "ready");
  const mark = present ? enterView(invocation.env, store.label, human) : null;
  const followed: Followed[] = [{ store, project: settings.project ?? null, shown: (name) => name }];
  for (const other of settings.others ?? []) {
    followed.push({
      store: other.store,
      project: other.project,
      shown: namesIn(other.project, settings.project),
    });
  }
  let healing = false;
  const room = await Room.open(store, {
    human,
    host: agentHost(invocation.env),
    facts: () => agentFacts(invocation, followed),
    thresholds: thresholdsOf(invocation.env),
    project: settings.project,
    others: settings.others,
    // Another view of the person that ended (on another host, where this one's mark is not seen) set them offline.
    onHuman: present
      ? (entry) => {
          if (entry?.status === "ready" || healing) return;
          healing = true;
          void registerHuman(invocation, store, human, "ready")
            .catch(() => {})
            .finally(() => (healing = false));
        }
      : undefined,
  }).catch((error) => {
    mark?.leave();
    throw error;
  });
  if (present) {
    // Renewed while the view runs, so `cleanup --stale-hours` does not forget a person who is there.
    const renew = setInterval(() => void registerHuman(invocation, store, human, "ready").catch(() => {}), RENEW_MS);
    renew.unref?.();
    presences.set(room, { renew, mark: mark! });
  }
  return room;
}

/**
 * The person leaves the room they came into: registered offline (mail to them still lands, for the next visit),
 * unless another of their views on this machine still runs (room/person-views.ts).
 */
export async function leaveRoom(invocation: Invocation, room: Room, human: string | null): Promise<void> {
  const presence = presences.get(room);
  clearInterval(presence?.renew);
  room.close();
  const last = presence?.mark.leave() ?? true;
  if (human !== null && last) await registerHuman(invocation, room.store, human, "offline").catch(() => {});
}
