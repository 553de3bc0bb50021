import { AgentmailError } from "../core/errors.ts";
import { displayName } from "../core/names.ts";
import { ignoredNames } from "../store/ignore.ts";
import { findRepository, mailRoot } from "../store/paths.ts";
import { resolveCaller, sameNamedWindows, type Caller } from "../tmux/caller.ts";

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
}

/** The mail root and the caller's identity: what every mail action needs first. */
export async function whoAmI(place: Invocation): Promise<CallerContext> {
  const caller = await resolveCaller(place.env);
  const repository = findRepository(place.cwd, place.env);
  return { root: mailRoot(place.cwd, place.env, repository), caller, workTree: repository?.workTree ?? null };
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
