import { addressProblem } from "../core/addresses.ts";
import { AgentmailError, errorWithNextStep } from "../core/errors.ts";
import { displayName } from "../core/names.ts";
import { agentHost, HOSTNAME } from "../store/host.ts";
import { ignoredNames } from "../store/ignore.ts";
import { fileStoreAt, openStore, openStoreAndRoot } from "../store/open.ts";
import { findRepository, mailRoot } from "../store/paths.ts";
import type { AgentEntry, Store } from "../store/store.ts";
import { resolveCaller, sameNamedWindows, type Caller } from "../tmux/caller.ts";
import { paneAliveOn } from "../tmux/other-server.ts";
import {
  namedInEnvironment,
  requireClaimStillHeld,
  requireNoClaimElsewhere,
  requireTmuxAgrees,
  tmuxServerOf,
  trustedName,
} from "./identity.ts";

type Env = Record<string, string | undefined>;

/** Where an action runs: the caller's working directory and environment (the CLI's own, or an MCP client's). */
export interface Invocation {
  cwd: string;
  env: Env;
}

export const currentInvocation = (): Invocation => ({ cwd: process.cwd(), env: process.env });

/** The store a invocation means, for actions that need no caller (AGENTMAIL_URL's Redis store, else the file store). */
export const storeAt = (invocation: Invocation): Promise<Store> => openStore(invocation);

export interface CallerContext {
  store: Store;
  /** The file store's directory, where AGENTMAIL_NAME claims live; null on a shared store (see locateClaims). */
  claims: string | null;
  caller: Caller;
  /** The host the caller runs on (AGENTMAIL_HOST, else the machine's name). */
  host: string;
  /** The top of the caller's worktree, where `.agentmailignore` lives; null outside a repository. */
  workTree: string | null;
  /** The caller's environment: its AGENTMAIL_NAME and tmux server decide which claims count (identity.ts). */
  env: Env;
  /** The caller holds its AGENTMAIL_NAME claim from this pane, and caller.name is that name (identity.ts). */
  claimed: boolean;
}

/** A name another host's agent used this recently is still its own: that agent may be alive. */
export const NAME_HELD_MS = 10 * 60_000;

/**
 * Where AGENTMAIL_NAME claims live: the file store's directory (and the caller's worktree). Null on a shared
 * (Redis) store, which keeps no claims: there AGENTMAIL_NAME is checked against tmux on every call.
 */
export function locateClaims(invocation: Invocation): { root: string; workTree: string | null } | null {
  if (invocation.env.AGENTMAIL_URL) return null;
  const repository = findRepository(invocation.cwd, invocation.env);
  return { root: mailRoot(invocation.cwd, invocation.env, repository), workTree: repository?.workTree ?? null };
}

/**
 * The caller as tmux describes it, named as identity.ts says: a claim AGENTMAIL_NAME holds from this pane stays the
 * caller's name when its window is renamed; any other AGENTMAIL_NAME must agree with tmux (unless `agree` is false:
 * `agentmail name` is how a window comes to agree). Not yet recorded as present (see claimName).
 */
async function namedCaller(invocation: Invocation, caller: Caller, agree = true): Promise<CallerContext> {
  const repository = findRepository(invocation.cwd, invocation.env);
  // One lookup of the store's location (its checks stat the git dir): the file store's directory holds the claims.
  const { store, fileRoot: claims } = await openStoreAndRoot(invocation, repository);
  const claimed = claims === null || namedInEnvironment(invocation.env) === null ? null : trustedName(claims, invocation.env);
  if (claimed === null && agree) {
    requireAddressableName(caller.name);
    requireTmuxAgrees(invocation.env, caller.name);
  }
  return {
    store,
    claims,
    caller: claimed === null ? caller : { ...caller, name: claimed },
    host: agentHost(invocation.env),
    workTree: repository?.workTree ?? null,
    env: invocation.env,
    claimed: claimed !== null,
  };
}

/**
 * A window's name is an identity only if it addresses an agent (addressProblem in core/addresses.ts): a window
 * renamed with plain tmux to `role:triage` must not read the role's queue, nor `a,b` the mail of two agents.
 */
function requireAddressableName(name: string): void {
  const problem = addressProblem(name);
  if (problem === null) return;
  throw errorWithNextStep(
    "invalid_name",
    `your window is named "${displayName(name)}", which cannot be an agent's name: ${problem}`,
    "nameWindow",
  );
}

/**
 * Records that `name` runs a command in the caller's pane; refused when an agent of that name on another host ran
 * one lately, or when the name is registered from a pane of another tmux server (two servers over one repository
 * share its mail) that is alive: on this machine tmux is asked, on another one a command less than NAME_HELD_MS
 * ago counts. A pane gone (or offline) leaves the name to the caller.
 */
export async function claimName(context: CallerContext, name: string): Promise<void> {
  const { store, caller, env } = context;
  const server = tmuxServerOf(env);
  const presence = { name, host: context.host, pane: caller.paneId, tmux: server === null ? undefined : { server, host: HOSTNAME } };
  let touched = await store.touch(presence, NAME_HELD_MS);
  if (!touched.accepted && touched.liveness) {
    const { holder } = touched;
    if (holder.tmux_server !== undefined && (await paneAliveOn(holder.tmux_server, holder.pane, env))) {
      throw nameOnOtherServer(name, holder as AgentEntry & { tmux_server: string });
    }
    touched = await store.touch(presence, NAME_HELD_MS, true);
  }
  if (!touched.accepted) throw nameHeldElsewhere(name, touched.holder);
}

/**
 * Whether `name` is registered from a pane of another tmux server that is alive (as claimName decides, without
 * recording anything): its mail is that agent's.
 */
export async function livesElsewhere(context: CallerContext, name: string): Promise<boolean> {
  const server = tmuxServerOf(context.env);
  const record = await context.store.status(name);
  if (server === null || record?.tmux_server === undefined || record.status === "offline") return false;
  if (record.tmux_server === server && record.tmux_host === HOSTNAME) return false;
  if (record.tmux_host !== HOSTNAME) return Date.now() - Date.parse(record.last_seen ?? record.updated_at) < NAME_HELD_MS;
  return paneAliveOn(record.tmux_server, record.pane, context.env);
}

/** The name belongs to a live agent of another tmux server over the same mail. */
function nameOnOtherServer(name: string, holder: AgentEntry & { tmux_server: string }): AgentmailError {
  const reason =
    `the name "${displayName(name)}" belongs to the agent in pane ${displayName(holder.pane)} of another tmux server ` +
    `(${displayName(holder.tmux_server)}) that shares this mail, and it is still running`;
  return errorWithNextStep("name_taken", reason, "pickOtherName");
}

/**
 * The store and the caller's identity: what every mail action needs first. A name another pane claims is not the
 * caller's: only the claimant sends and reads as it (see identity.ts); nor is a name another host's agent uses.
 */
export async function whoAmI(invocation: Invocation): Promise<CallerContext> {
  const context = await namedCaller(invocation, await resolveCaller(invocation.env));
  if (!context.claimed) requireNoClaimElsewhere(context.claims, context.caller.name, invocation.env);
  await claimName(context, context.caller.name);
  return context;
}

/** whoAmI for registering (status, onboard): registering from a window of a name takes another pane's claim over. */
export async function whoRegisters(invocation: Invocation, caller?: Caller): Promise<CallerContext> {
  const context = await namedCaller(invocation, caller ?? (await resolveCaller(invocation.env)));
  await claimName(context, context.caller.name);
  return context;
}

/**
 * whoAmI for `agentmail name`, which renames the window: neither another pane's claim nor AGENTMAIL_NAME stops it,
 * and the caller is recorded under its new name, not the old one.
 */
export function whoNames(invocation: Invocation): Promise<CallerContext> {
  return resolveCaller(invocation.env).then((caller) => namedCaller(invocation, caller, false));
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

/** Who reads a mailbox: its name, and a check run again under the mailbox's receive lock before a message is shown. */
export interface Receiver {
  store: Store;
  workTree: string | null;
  caller: { name: string; paneId: string };
  /** Throws when the caller no longer holds the name (a claim moved meanwhile): then nothing is taken. */
  confirm(): void;
  /** What tmux said about the caller, when it was asked (a claimed name is not): a later step reuses it. */
  tmux?: Caller;
}

/**
 * Who reads the caller's own mailbox. A caller holding its AGENTMAIL_NAME claim from this pane needs no tmux call.
 * Otherwise tmux is asked, and the name must belong to the caller's window alone and to no other pane's claim.
 */
export async function whoReceives(invocation: Invocation): Promise<Receiver> {
  const claims = namedInEnvironment(invocation.env) === null ? null : locateClaims(invocation);
  if (claims !== null) {
    const name = trustedName(claims.root, invocation.env);
    if (name !== null) {
      const confirm = () => requireClaimStillHeld(claims.root, name, invocation.env);
      return { store: fileStoreAt(claims.root), workTree: claims.workTree, caller: { name, paneId: invocation.env.TMUX_PANE! }, confirm };
    }
  }
  const { store, claims: root, workTree, caller, claimed } = await whoAmI(invocation);
  if (!claimed) requireOneWindowNamed(caller, caller.name);
  const confirm =
    claimed && root !== null
      ? () => requireClaimStillHeld(root, caller.name, invocation.env)
      : () => requireNoClaimElsewhere(root, caller.name, invocation.env);
  return { store, workTree, caller, confirm, tmux: caller };
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
