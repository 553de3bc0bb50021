/**
 * Who is calling: the store an invocation means and the caller's identity in it, resolved for a purpose. Every
 * action that acts as an agent starts here; the purpose decides how much is asked and what is refused:
 *
 *   mail       send, read, list, reply as the caller: the window's name (or the AGENTMAIL_NAME it claimed), refused
 *              when another pane claims that name or another host's agent holds it; recorded as present
 *   receive    take the caller's own mail: with an AGENTMAIL_NAME claim held from this pane no tmux call at all,
 *              otherwise as `mail`, the name held by one window only; `confirm` checks again under the receive lock
 *   register   status and onboard: as `mail`, but registering takes another pane's AGENTMAIL_NAME claim over
 *   rename     `agentmail name`: neither a claim nor AGENTMAIL_NAME stops it; recorded under the new name later
 *
 * What AGENTMAIL_NAME claims are: name-claims.ts. Whom the caller can write to: recipients.ts.
 */
import { addressProblem } from "../mail/addresses.ts";
import { AgentmailError, errorWithNextStep } from "../mail/errors.ts";
import { displayName } from "../mail/names.ts";
import { namespacesOf, openStore, storeKeepingNameClaims } from "../store/open.ts";
import { findRepository, type Repository } from "../store/paths.ts";
import { HOSTNAME } from "../store/durable/process-identity.ts";
import type { AgentEntry, NameClaims, Store } from "../store/store.ts";
import { resolveCaller, sameNamedWindows, type Caller } from "../tmux/caller.ts";
import { paneAliveOn } from "../tmux/other-server.ts";
import { agentHost, type Invocation, tmuxServerOf } from "./invocation.ts";
import { namedInEnvironment, requireClaimStillHeld, requireNoClaimElsewhere, requireTmuxAgrees, trustedName } from "./name-claims.ts";
import { NAME_HELD_MS } from "./presence.ts";
import { sortWindows, type ProjectView } from "./projects.ts";

type Env = Record<string, string | undefined>;

/** The store a invocation means, for actions that need no caller (AGENTMAIL_URL's Redis store, else the file store). */
export const storeAt = (invocation: Invocation): Promise<Store> => openStore(invocation);

export interface CallerContext {
  store: Store;
  /** The AGENTMAIL_NAME claims the store keeps (Store.nameClaims); null on a store that keeps none. */
  claims: NameClaims | null;
  caller: Caller;
  /** The host the caller runs on (AGENTMAIL_HOST, else the machine's name). */
  host: string;
  /** The top of the caller's worktree, where `.agentmailignore` lives; null outside a repository. */
  workTree: string | null;
  /** The caller's environment: its AGENTMAIL_NAME and tmux server decide which claims count (name-claims.ts). */
  env: Env;
  /** The caller holds its AGENTMAIL_NAME claim from this pane, and caller.name is that name (name-claims.ts). */
  claimed: boolean;
  /** The store's repository (null: none, or the store is not a repository's). */
  repository: Repository | null;
  /** The tmux server's windows of other projects, and outside every repository: `caller` holds this project's only. */
  projects: ProjectView;
}

/**
 * The caller as tmux describes it, named as name-claims.ts says: a claim AGENTMAIL_NAME holds from this pane stays the
 * caller's name when its window is renamed; any other AGENTMAIL_NAME must agree with tmux (unless `agree` is false:
 * `agentmail name` is how a window comes to agree). Not yet recorded as present (see claimName).
 */
async function namedCaller(invocation: Invocation, tmuxCaller: Caller, agree = true): Promise<CallerContext> {
  const repository = findRepository(invocation.cwd, invocation.env);
  // One lookup of the store's location (its checks stat the git dir).
  const store = await openStore(invocation, repository);
  const claims = store.nameClaims;
  // Other projects' windows neither hold this project's names nor get its mail (projects.ts).
  const namespaceOf = await namespacesOf(invocation.env);
  const { caller, projects } = sortWindows(tmuxCaller, repository, invocation.env, namespaceOf);
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
    repository,
    projects,
  };
}

/**
 * A window's name is an identity only if it addresses an agent (addressProblem in mail/addresses.ts): a window
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

/** The name belongs to a live agent of another tmux server over the same mail. */
function nameOnOtherServer(name: string, holder: AgentEntry & { tmux_server: string }): AgentmailError {
  const reason =
    `the name "${displayName(name)}" belongs to the agent in pane ${displayName(holder.pane)} of another tmux server ` +
    `(${displayName(holder.tmux_server)}) that shares this mail, and it is still running`;
  return errorWithNextStep("name_taken", reason, "pickOtherName");
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

/** What the caller is resolved for: see the head of this file. */
export type Purpose = "mail" | "receive" | "register" | "rename";

/**
 * The store and the caller's identity, resolved for `purpose`. `register` may be given the tmux caller already
 * looked up (onboard reads it first, to tell an automatic window name).
 */
export function whoIsCalling(invocation: Invocation, purpose: "receive"): Promise<Receiver>;
export function whoIsCalling(invocation: Invocation, purpose: "mail" | "register" | "rename", caller?: Caller): Promise<CallerContext>;
export async function whoIsCalling(invocation: Invocation, purpose: Purpose, known?: Caller): Promise<CallerContext | Receiver> {
  if (purpose === "receive") return receiver(invocation);
  const caller = known ?? (await resolveCaller(invocation.env));
  // Renaming the window is how a window comes to agree with AGENTMAIL_NAME, and the new name is recorded later.
  if (purpose === "rename") return namedCaller(invocation, caller, false);
  const context = await namedCaller(invocation, caller);
  // A name another pane claims is not the caller's: only the claimant sends and reads as it (name-claims.ts);
  // registering from a window of that name takes the claim over instead.
  if (purpose === "mail" && !context.claimed) requireNoClaimElsewhere(context.claims, context.caller.name, invocation.env);
  await claimName(context, context.caller.name);
  return context;
}

/**
 * Who reads the caller's own mailbox. A caller holding its AGENTMAIL_NAME claim from this pane needs no tmux call.
 * Otherwise tmux is asked, and the name must belong to the caller's window alone and to no other pane's claim.
 */
async function receiver(invocation: Invocation): Promise<Receiver> {
  const located = namedInEnvironment(invocation.env) === null ? null : storeKeepingNameClaims(invocation);
  if (located !== null) {
    const { store, claims, workTree } = located;
    const name = trustedName(claims, invocation.env);
    if (name !== null) {
      const confirm = () => requireClaimStillHeld(claims, name, invocation.env);
      return { store, workTree, caller: { name, paneId: invocation.env.TMUX_PANE! }, confirm };
    }
  }
  const { store, claims, workTree, caller, claimed } = await whoIsCalling(invocation, "mail");
  if (!claimed) requireOneWindowNamed(caller, caller.name);
  const confirm =
    claimed && claims !== null
      ? () => requireClaimStillHeld(claims, caller.name, invocation.env)
      : () => requireNoClaimElsewhere(claims, caller.name, invocation.env);
  return { store, workTree, caller, confirm, tmux: caller };
}
