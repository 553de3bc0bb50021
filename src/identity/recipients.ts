/**
 * Whom the caller can write to: the windows of its tmux session, less those `.agentmailignore` hides; the agents
 * registered from other hosts; the agents that hold an AGENTMAIL_NAME claim on this tmux server (name-claims.ts);
 * and, for listing, the groups and roles.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { addressProblem, roleAddress, type Address } from "../mail/addresses.ts";
import type { Window } from "../mail/copy-plan.ts";
import { PERSON_PANE } from "../store/store.ts";
import type { AgentEntry, MembershipKind, Memberships, NameClaims, Store } from "../store/store.ts";
import { namespaceProject, type Project, type ProjectWindow } from "./projects.ts";
import type { CallerContext } from "./caller.ts";
import { activeClaim } from "./name-claims.ts";

type Env = Record<string, string | undefined>;

/**
 * Names listed in `.agentmailignore` at the repository's top level (one per line; blank lines and `#` comments
 * ignored): windows hidden from `recipients` and refused by `send`.
 */
export function ignoredNames(workTree: string | null): Set<string> {
  if (!workTree) return new Set();
  let text: string;
  try {
    text = readFileSync(join(workTree, ".agentmailignore"), "utf8");
  } catch {
    return new Set();
  }
  return new Set(
    text
      .split("\n")
      .map((line) => line.replace(/\r$/, ""))
      .filter((line) => line.trim() !== "" && !line.trimStart().startsWith("#")),
  );
}

export interface Recipient {
  name: string;
  you: boolean;
  /** tmux chose the name (automatic-rename): it changes with the program in the window; `agentmail name` pins one. */
  auto: boolean;
  /** Its status (`agentmail status`), when it is registered; listed by `recipients` (addressBook). */
  status?: string | null;
  /** When it last ran an agentmail command (ISO 8601), when it is registered. */
  last_seen?: string | null;
  /** The person who runs the agents (registered by `watch` or `web`, no window): addressable by name all the same. */
  person?: boolean;
}

/** Another project's agent, as `recipients --all` lists it: addressed as `name@project`. */
export interface ProjectAgent extends Recipient {
  project: string;
}

/** An agent registered in the store from another host: addressable by name, though no window here has it. */
export interface RemoteAgent extends Recipient {
  host: string;
  last_seen: string | null;
}

/**
 * The store's registered agents of other hosts that no window of the caller's session is named after (on the file
 * store, agents registered by another machine sharing it, which is rare).
 */
export async function agentsElsewhere(context: CallerContext): Promise<RemoteAgent[]> {
  const here = context.host;
  const windows = new Set(context.caller.windows.map((window) => window.name));
  const seen = new Set<string>();
  const agents: RemoteAgent[] = [];
  for (const entry of await context.store.statuses()) {
    if (entry.host === undefined || entry.host === here || windows.has(entry.name) || seen.has(entry.name)) continue;
    seen.add(entry.name);
    agents.push({ name: entry.name, you: false, auto: false, host: entry.host, last_seen: entry.last_seen ?? null });
  }
  return agents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Whom a message can be addressed to: the caller's windows, and on a store shared by hosts (not the file store,
 * whose rule stays the windows alone) the agents registered from other hosts, so `send NAME`, `@all` and groups
 * reach them.
 */
export async function addressableWindows(context: CallerContext): Promise<Recipient[]> {
  const windows = recipientsOf(context);
  if (!context.store.sharedAcrossHosts) return windows;
  return [...windows, ...(await agentsElsewhere(context))];
}

/**
 * The windows of the caller's session that can be written to: `.agentmailignore` hides others, never the caller. A
 * window whose name would read as another address (`role:triage`, `a,b`, `@x`) is none: see addressProblem.
 */
export function recipientsOf({ caller, workTree }: CallerContext): Recipient[] {
  const ignored = ignoredNames(workTree);
  const seen = new Set<string>();
  const recipients: Recipient[] = [];
  for (const window of caller.windows) {
    const you = window.id === caller.windowId;
    if ((!you && ignored.has(window.name)) || seen.has(window.name) || addressProblem(window.name) !== null) continue;
    seen.add(window.name);
    recipients.push({ name: window.name, you, auto: window.auto });
  }
  return recipients;
}

/**
 * The agents among `addresses` that hold a claim on this tmux server and that `.agentmailignore` does not hide,
 * as windows to address: mail to a claimed name is read by its claimant alone, wherever its window is now.
 */
export function claimedRecipients(
  claims: NameClaims | null,
  workTree: string | null,
  addresses: readonly Address[],
  env: Env,
  caller: string,
): Window[] {
  const claimed: Window[] = [];
  let ignored: Set<string> | null = null;
  for (const address of addresses) {
    if (address.kind !== "agent" || address.project !== undefined || activeClaim(claims, address.name, env) === null) continue;
    ignored ??= ignoredNames(workTree);
    if (address.name !== caller && ignored.has(address.name)) continue;
    claimed.push({ name: address.name, you: address.name === caller, auto: false });
  }
  return claimed;
}

/** A group or a role as `recipients` and `list-recipients` show it: its address and its members. */
interface ListEntry {
  name: string;
  members: string[];
}

export type AddressEntry = Recipient | RemoteAgent | ProjectAgent | ListEntry;

/** The lists of one kind, or none when they cannot be read (doctor says why; listing must not fail on it). */
async function listsOf(agent: CallerContext, kind: MembershipKind): Promise<Memberships> {
  try {
    return await agent.store.memberships(kind);
  } catch {
    return new Map();
  }
}

/** What the address book's argument means, for `recipients --help` and the list-recipients tool's schema. */
export const RECIPIENTS_ARGUMENTS = {
  all: "Also list other projects' agents on this tmux server, as name@project",
} as const;

/**
 * Everything the caller can address: the windows of its session (its own marked, names tmux chose marked auto), the
 * agents registered from other hosts (with their host), each with its status and when last seen (when registered),
 * the people registered by watch or web (marked person);
 * with `all` the agents of other projects on the tmux server as `name@project`; then each group as `@NAME` and each
 * role as `role:ROLE`, with their members.
 */
export async function addressBook(agent: CallerContext, all = false): Promise<AddressEntry[]> {
  const agents: (Recipient | RemoteAgent | ProjectAgent)[] = [...recipientsOf(agent), ...(await agentsElsewhere(agent))];
  const registry = await registered(agent.store);
  withPresence(agents, registry);
  // The people who watch the room: no window has their name, and `send NAME` reaches them (actions/send.ts).
  const listed = new Set(agents.map((each) => each.name));
  for (const entry of registry.values()) {
    if (entry.pane !== PERSON_PANE || listed.has(entry.name)) continue;
    agents.push({
      name: entry.name,
      you: false,
      auto: false,
      person: true,
      status: entry.status,
      last_seen: entry.last_seen ?? entry.updated_at ?? null,
    });
  }
  if (all) agents.push(...(await otherProjectsAgents(agent)));
  const entries: AddressEntry[] = agents;
  for (const [name, members] of await listsOf(agent, "groups")) entries.push({ name: `@${name}`, members });
  for (const [role, members] of await listsOf(agent, "roles")) entries.push({ name: roleAddress(role), members });
  return entries;
}

/** The registry by name, or nothing when it cannot be read (listing must not fail on it). */
async function registered(store: Store): Promise<Map<string, AgentEntry>> {
  const byName = new Map<string, AgentEntry>();
  try {
    for (const entry of await store.statuses()) if (entry.pane !== PERSON_PANE || !byName.has(entry.name)) byName.set(entry.name, entry);
  } catch {
    // Listed without status: doctor says what is wrong with the registry.
  }
  return byName;
}

function withPresence(agents: Recipient[], registry: ReadonlyMap<string, AgentEntry>): void {
  for (const agent of agents) {
    const entry = registry.get(agent.name);
    agent.status = entry?.status ?? null;
    agent.last_seen = entry?.last_seen ?? entry?.updated_at ?? null;
  }
}

/**
 * The other projects' agents, each with its status in its own project's store: on the file store the windows of
 * other repositories on the caller's tmux server; on Redis also every other namespace's registered agents, wherever
 * they run (a namespace is a project across hosts, and most of its agents have no window on this server).
 */
async function otherProjectsAgents(agent: CallerContext): Promise<ProjectAgent[]> {
  const byProject = new Map<string, { project: Project; windows: ProjectWindow[] }>();
  for (const window of agent.projects.elsewhere) {
    if (addressProblem(window.name) !== null) continue;
    const entry = byProject.get(window.project.key) ?? { project: window.project, windows: [] };
    if (!entry.windows.some((each) => each.name === window.name)) entry.windows.push(window);
    byProject.set(window.project.key, entry);
  }
  let namespaces: string[] = [];
  try {
    namespaces = await agent.store.otherNamespaces();
  } catch {
    // Listed from the windows alone: the server said why to the command that failed first.
  }
  for (const namespace of namespaces)
    if (!byProject.has(namespace)) byProject.set(namespace, { project: namespaceProject(namespace), windows: [] });
  const listed: ProjectAgent[] = [];
  for (const { project, windows } of byProject.values()) {
    let registry = new Map<string, AgentEntry>();
    try {
      registry = await registered(await agent.store.projectStore(project));
    } catch {
      // Its store cannot be opened from here: listed without status.
    }
    const agents: ProjectAgent[] = windows.map((window) => ({ name: window.name, you: false, auto: window.auto, project: project.name }));
    // On a store of namespaces (Redis), the namespace's registered agents without a window here too.
    if (agent.store.namespace !== null) {
      for (const name of registry.keys()) {
        if (addressProblem(name) === null && !agents.some((each) => each.name === name)) {
          agents.push({ name, you: false, auto: false, project: project.name });
        }
      }
    }
    for (const each of agents) each.name = `${each.name}@${project.name}`;
    withPresence(agents, new Map([...registry].map(([name, entry]) => [`${name}@${project.name}`, entry])));
    listed.push(...agents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)));
  }
  return listed;
}
