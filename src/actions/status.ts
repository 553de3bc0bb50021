import { displayName } from "../mail/names.ts";
import { AVAILABILITIES, type Availability } from "../mail/agents.ts";
import type { HookThread } from "../mail/doorbell.ts";
import { unpointPane } from "../store/local/doorbell.ts";
import type { AgentEntry, Store } from "../store/store.ts";
import { resolveCaller, sameNamedWindows, type Caller } from "../tmux/caller.ts";
import { AgentmailError } from "../mail/errors.ts";
import { type CallerContext, whoIsCalling } from "../identity/caller.ts";
import { type Invocation, tmuxServerOf } from "../identity/invocation.ts";
import { claimFor } from "../identity/name-claims.ts";
import { HOSTNAME } from "../store/durable/process-identity.ts";

/** What `status`'s one argument means, for its --help and the status tool's schema. */
export const STATUS_ARGUMENTS = {
  status: "The availability to set; leave out to read the current one",
} as const;

export function parseAvailability(value: string): Availability {
  if ((AVAILABILITIES as readonly string[]).includes(value)) return value as Availability;
  throw new AgentmailError("usage", `status must be one of ${AVAILABILITIES.join(", ")}, not '${displayName(value)}'`);
}

/**
 * Sets the caller's status. It also registers the caller as an agent: the status file records the caller's pane,
 * the only kind of pane (besides known agent CLIs) the mailman types reminders into. An agent started with
 * AGENTMAIL_NAME claims its name this way (see identity/name-claims.ts); registering moves the name to the caller's pane.
 */
export async function setStatus(invocation: Invocation, status: Availability, caller?: Caller): Promise<AgentEntry> {
  return register(await whoIsCalling(invocation, "register", caller), status, invocation.codexThread);
}

/**
 * The commands an agent's hooks run point its pane at its doorbell (and, in Codex's daemon, the thread the hook
 * serves), so its Stop hook can find "no mail" without starting agentmail; on a store without doorbells the pointers
 * go, so that hook asks every time.
 */
export function pointHooks(store: Store, env: Invocation["env"], name: string, thread?: HookThread): void {
  if (store.doorbells) store.doorbells.point(env, name, thread);
  else unpointPane(env, thread);
}

async function register({ store, caller, claimed, env }: CallerContext, status: Availability, thread?: HookThread): Promise<AgentEntry> {
  const claim = claimFor(env, caller.name, claimed, sameNamedWindows(caller, caller.name).length);
  const server = tmuxServerOf(env);
  const place = server === null ? undefined : { server, host: HOSTNAME };
  const record = await store.writeStatus({ name: caller.name, status, pane: caller.paneId, claim, place });
  pointHooks(store, env, caller.name, thread);
  return record;
}

/**
 * Registers the caller as an agent that is starting (what onboard does, run by SessionStart hooks): status ready, its
 * pane recorded. Fails only when the caller is not a tmux pane; a store that cannot take the registration (none
 * outside a repository, or unwritable) is reported in `problem`, so onboarding goes on without it.
 */
export async function registerAgent(
  invocation: Invocation,
): Promise<{ name: string; auto: boolean; claimed: boolean; stored: boolean; problem: string | null }> {
  const caller = await resolveCaller(invocation.env);
  // A name tmux chose follows the program in the window: onboarding tells the agent to pin one (agentmail name).
  const auto = caller.windows.some((window) => window.id === caller.windowId && window.auto);
  try {
    const record = await register(await whoIsCalling(invocation, "register", caller), "ready", invocation.codexThread);
    return { name: record.name, auto, claimed: record.claim_server !== undefined, stored: true, problem: null };
  } catch (error) {
    const unregistered = { name: caller.name, auto, claimed: false, stored: false };
    if (error instanceof AgentmailError && error.code === "no_store") return { ...unregistered, problem: null };
    return { ...unregistered, problem: error instanceof Error ? error.message : String(error) };
  }
}

/** The caller's status, or null when it never set one. */
export async function getStatus(invocation: Invocation): Promise<{ name: string; status: AgentEntry | null }> {
  const { store, caller } = await whoIsCalling(invocation, "register");
  return { name: caller.name, status: await store.status(caller.name) };
}
