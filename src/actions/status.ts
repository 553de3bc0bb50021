import { displayName } from "../core/names.ts";
import { AVAILABILITIES, readStatus, writeStatus, type AgentStatus, type Availability } from "../store/status.ts";
import { ensureRoot } from "../store/paths.ts";
import { AgentmailError } from "../core/errors.ts";
import { whoAmI, type Place } from "./context.ts";

export function parseAvailability(value: string): Availability {
  if ((AVAILABILITIES as readonly string[]).includes(value)) return value as Availability;
  throw new AgentmailError("usage", `status must be one of ${AVAILABILITIES.join(", ")}, not '${displayName(value)}'`);
}

export async function setStatus(place: Place, status: Availability): Promise<AgentStatus> {
  const { root, caller } = await whoAmI(place);
  return writeStatus(ensureRoot(root), caller.name, status, caller.paneId);
}

/** The caller's status, or null when it never set one. */
export async function getStatus(place: Place): Promise<{ name: string; status: AgentStatus | null }> {
  const { root, caller } = await whoAmI(place);
  return { name: caller.name, status: readStatus(root, caller.name) };
}
