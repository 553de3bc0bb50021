import { AgentmailError } from "../core/errors.ts";
import { displayName } from "../core/names.ts";
import { ignoredNames } from "../store/ignore.ts";
import { findRepository, mailRoot } from "../store/paths.ts";
import { resolveCaller, sameNamedWindows, type Caller } from "../tmux/caller.ts";
import { namedInEnvironment, requireClaimStillHeld, requireNoClaimElsewhere, requireTmuxAgrees, trustedName } from "./identity.ts";

type Env = Record<string, string | undefined>;

/** Where an action runs: the caller's working directory and environment (the CLI's own, or an MCP client's). */
export interface Invocation {
  cwd: string;
  env: Env;
}

export const currentInvocation = (): Invocation => ({ cwd: process.cwd(), env: process.env });

export interface CallerContext {
  root: string;
  caller: Caller;
  /** The top of the caller's worktree, where `.agentmailignore` lives; null outside a repository. */
  workTree: string | null;
  /** The caller's environment: its AGENTMAIL_NAME and tmux server decide which claims count (identity.ts). */
  env: Env;
  /** The caller holds its AGENTMAIL_NAME claim from this pane, and caller.name is that name (identity.ts). */
  claimed: boolean;
}

/** The mail root and the top of the caller's worktree. */
export function locateStore(place: Invocation): { root: string; workTree: string | null } {
  const repository = findRepository(place.cwd, place.env);
  return { root: mailRoot(place.cwd, place.env, repository), workTree: repository?.workTree ?? null };
}

/**
 * The caller as tmux describes it, named as identity.ts says: a claim AGENTMAIL_NAME holds from this pane stays the
 * caller's name when its window is renamed; any other AGENTMAIL_NAME must agree with tmux (unless `agree` is false:
 * `agentmail name` is how a window comes to agree).
 */
function namedCaller(place: Invocation, caller: Caller, agree = true): CallerContext {
  const { root, workTree } = locateStore(place);
  const claimed = namedInEnvironment(place.env) === null ? null : trustedName(root, place.env);
  if (claimed === null && agree) requireTmuxAgrees(place.env, caller.name);
  return { root, workTree, env: place.env, caller: claimed === null ? caller : { ...caller, name: claimed }, claimed: claimed !== null };
}

/**
 * The mail root and the caller's identity: what every mail action needs first. A name another pane claims is not
 * the caller's: only the claimant sends and reads as it (see identity.ts).
 */
export async function whoAmI(place: Invocation): Promise<CallerContext> {
  const context = namedCaller(place, await resolveCaller(place.env));
  if (!context.claimed) requireNoClaimElsewhere(context.root, context.caller.name, place.env);
  return context;
}

/** whoAmI for registering (status, onboard): registering from a window of a name takes another pane's claim over. */
export async function whoRegisters(place: Invocation, caller?: Caller): Promise<CallerContext> {
  return namedCaller(place, caller ?? (await resolveCaller(place.env)));
}

/** whoAmI for `agentmail name`, which renames the window: neither another pane's claim nor AGENTMAIL_NAME stops it. */
export async function whoNames(place: Invocation): Promise<CallerContext> {
  return namedCaller(place, await resolveCaller(place.env), false);
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
  root: string;
  workTree: string | null;
  caller: { name: string; paneId: string };
  /** Throws when the caller no longer holds the name (a claim moved meanwhile): then nothing is taken. */
  confirm(): void;
}

/**
 * Who reads the caller's own mailbox. A caller holding its AGENTMAIL_NAME claim from this pane needs no tmux call.
 * Otherwise tmux is asked, and the name must belong to the caller's window alone and to no other pane's claim.
 */
export async function whoReceives(place: Invocation): Promise<Receiver> {
  if (namedInEnvironment(place.env) !== null) {
    const store = locateStore(place);
    const name = trustedName(store.root, place.env);
    if (name !== null) {
      const confirm = () => requireClaimStillHeld(store.root, name, place.env);
      return { ...store, caller: { name, paneId: place.env.TMUX_PANE! }, confirm };
    }
  }
  const { root, workTree, caller, claimed } = await whoAmI(place);
  if (!claimed) requireOneWindowNamed(caller, caller.name);
  const confirm = claimed
    ? () => requireClaimStillHeld(root, caller.name, place.env)
    : () => requireNoClaimElsewhere(root, caller.name, place.env);
  return { root, workTree, caller, confirm };
}

export interface Recipient {
  name: string;
  you: boolean;
  /** tmux chose the name (automatic-rename): it changes with the program in the window; `agentmail name` pins one. */
  auto: boolean;
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
