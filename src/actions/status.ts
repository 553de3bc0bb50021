import { displayName } from "../core/names.ts";
import { AVAILABILITIES, type Availability } from "../core/availability.ts";
import type { AgentEntry } from "../store/store.ts";
import { agentHost } from "../store/host.ts";
import { resolveCaller } from "../tmux/caller.ts";
import { AgentmailError } from "../core/errors.ts";
import { claimName, storeAt, whoAmI, type Invocation } from "./context.ts";

export function parseAvailability(value: string): Availability {
  if ((AVAILABILITIES as readonly string[]).includes(value)) return value as Availability;
  throw new AgentmailError("usage", `status must be one of ${AVAILABILITIES.join(", ")}, not '${displayName(value)}'`);
}

/**
 * Sets the caller's status. It also registers the caller as an agent: the status file records the caller's pane,
 * the only kind of pane (besides known agent CLIs) the mailman types reminders into.
 */
export async function setStatus(place: Invocation, status: Availability): Promise<AgentEntry> {
  const { store, caller } = await whoAmI(place);
  return store.writeStatus(caller.name, status, caller.paneId);
}

/**
 * Registers the caller as an agent that is starting (what onboard does, run by SessionStart hooks): status ready, its
 * pane recorded. Fails only when the caller is not a tmux pane; a store that cannot take the registration (none
 * outside a repository, or unwritable) is reported in `problem`, so onboarding goes on without it.
 */
export async function registerAgent(place: Invocation): Promise<{ name: string; auto: boolean; problem: string | null }> {
  const caller = await resolveCaller(place.env);
  // A name tmux chose follows the program in the window: onboarding tells the agent to pin one (agentmail name).
  const auto = caller.windows.some((window) => window.id === caller.windowId && window.auto);
  try {
    const store = await storeAt(place);
    await claimName({ store, caller, host: agentHost(place.env), workTree: null }, caller.name);
    await store.writeStatus(caller.name, "ready", caller.paneId);
    return { name: caller.name, auto, problem: null };
  } catch (error) {
    if (error instanceof AgentmailError && error.code === "no_store") return { name: caller.name, auto, problem: null };
    return { name: caller.name, auto, problem: error instanceof Error ? error.message : String(error) };
  }
}

/** The caller's status, or null when it never set one. */
export async function getStatus(place: Invocation): Promise<{ name: string; status: AgentEntry | null }> {
  const { store, caller } = await whoAmI(place);
  return { name: caller.name, status: await store.status(caller.name) };
}
