import { AgentmailError } from "../core/errors.ts";
import { displayName } from "../core/names.ts";
import { agentHost } from "../store/host.ts";
import { ignoredNames } from "../store/ignore.ts";
import { openStore } from "../store/open.ts";
import { findRepository } from "../store/paths.ts";
import type { AgentEntry, Store } from "../store/store.ts";
import { resolveCaller, sameNamedWindows, type Caller } from "../tmux/caller.ts";

type Env = Record<string, string | undefined>;

/** Where an action runs: the caller's working directory and environment (the CLI's own, or an MCP client's). */
export interface Invocation {
  cwd: string;
  env: Env;
}

export const currentInvocation = (): Invocation => ({ cwd: process.cwd(), env: process.env });

/** The store a place means, for actions that need no caller (AGENTMAIL_URL's Redis store, else the file store). */
export const storeAt = (place: Invocation): Promise<Store> => openStore(place);

export interface CallerContext {
  store: Store;
  caller: Caller;
  /** The host the caller runs on (AGENTMAIL_HOST, else the machine's name). */
  host: string;
  /** The top of the caller's worktree, where `.agentmailignore` lives; null outside a repository. */
  workTree: string | null;
}

/** A name another host's agent used this recently is still its own: that agent may be alive. */
export const NAME_HELD_MS = 10 * 60_000;

/** The store and the caller's identity, not yet recorded as present (`agentmail name` records the new name). */
export async function whoAmIUnrecorded(place: Invocation): Promise<CallerContext> {
  const caller = await resolveCaller(place.env);
  const repository = findRepository(place.cwd, place.env);
  const store = await openStore(place, repository);
  return { store, caller, host: agentHost(place.env), workTree: repository?.workTree ?? null };
}

/**
 * Records that `name` runs a command in the caller's pane; refused when an agent of that name on another host ran
 * one lately (the file store keeps no presence and always accepts, without I/O).
 */
export async function claimName(context: CallerContext, name: string): Promise<void> {
  const touched = await context.store.touch({ name, host: context.host, pane: context.caller.paneId }, NAME_HELD_MS);
  if (!touched.accepted) throw nameHeldElsewhere(name, touched.holder);
}

/** The store and the caller's identity: what every mail action needs first. Its name must not be another host's. */
export async function whoAmI(place: Invocation): Promise<CallerContext> {
  const context = await whoAmIUnrecorded(place);
  await claimName(context, context.caller.name);
  return context;
}

/** The name belongs to a live agent of another host: one name means one agent (one mailbox) everywhere. */
function nameHeldElsewhere(name: string, holder: AgentEntry): AgentmailError {
  const seen = holder.last_seen ? `, last seen ${holder.last_seen}` : "";
  const reason = `the name "${displayName(name)}" belongs to an agent on host ${displayName(holder.host ?? "?")} (pane ${holder.pane}${seen})`;
  const fix = "pick another: agentmail name <new-name> (or rename this window: tmux rename-window <new-name>)";
  return new AgentmailError("name_taken", `${reason}; ${fix}`);
}

/**
 * Within one store a name means one agent. Windows that share a name anywhere on the tmux server (two sessions over
 * one repository, or one session) would share one mailbox, and each could take the other's mail: refuse, naming the
 * panes and suggesting to rename the newest.
 */
export function requireOneWindowNamed(caller: Caller, name: string): void {
  const holders = sameNamedWindows(caller, name);
  if (holders.length < 2) return;
  const panes = holders.map((window) => `${window.paneId} in session ${displayName(window.sessionName)}`).join(", ");
  const newest = holders[holders.length - 1]!;
  const rename = `tmux rename-window -t ${newest.paneId} <new-name>`;
  const reason = `${holders.length} windows are named "${displayName(name)}" (panes ${panes})`;
  throw new AgentmailError("duplicate_name", `${reason}; rename one: ${rename}`);
}

/** whoAmI for reading the caller's own mailbox: its name must belong to its window alone. */
export async function whoReceives(place: Invocation): Promise<CallerContext> {
  const agent = await whoAmI(place);
  requireOneWindowNamed(agent.caller, agent.caller.name);
  return agent;
}

export interface Recipient {
  name: string;
  you: boolean;
  /** tmux chose the name (automatic-rename): it changes with the program in the window; `agentmail name` pins one. */
  auto: boolean;
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
  if (context.store.engine === "file") return windows;
  return [...windows, ...(await agentsElsewhere(context))];
}

/** The windows of the caller's session that can be written to: `.agentmailignore` hides others, never the caller. */
export function recipientsOf({ caller, workTree }: CallerContext): Recipient[] {
  const ignored = ignoredNames(workTree);
  const seen = new Set<string>();
  const recipients: Recipient[] = [];
  for (const window of caller.windows) {
    const you = window.id === caller.windowId;
    if ((!you && ignored.has(window.name)) || seen.has(window.name)) continue;
    seen.add(window.name);
    recipients.push({ name: window.name, you, auto: window.auto });
  }
  return recipients;
}
