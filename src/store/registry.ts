import { withLock } from "./lock.ts";
import { mailboxPath, receiveLockPathOf } from "./layout.ts";
import { readStatus, writeStatus, type AgentStatus, type Availability, type Pin, type Place } from "./status.ts";

/**
 * Where a claim was made: the tmux server of the claiming pane (`$TMUX` without its session part: socket path and
 * server pid, so a restarted server is another one) and the machine it runs on.
 */
export type ClaimPlace = Place;

/**
 * A claim on a name: the registration an agent started with AGENTMAIL_NAME made from a window of that name (see
 * identity/name-claims.ts). It lives in the agent's registration, `<root>/.agents/<name>.json`, which holds one pane per
 * name, so a name has at most one claim.
 */
export interface NameClaim extends ClaimPlace {
  name: string;
  pane: string;
  /** An agent that went offline (its session ended) holds nothing. */
  active: boolean;
}

export function readClaim(root: string, name: string): NameClaim | null {
  const record = readStatus(root, name);
  if (typeof record?.claim_server !== "string" || typeof record.claim_host !== "string" || typeof record.pane !== "string") return null;
  return { name, pane: record.pane, server: record.claim_server, host: record.claim_host, active: record.status !== "offline" };
}

/**
 * Registers `pane` under `name`, a claim when `claim` is given. Moving or dropping another pane's claim takes the
 * name's receive lock, the one a receive holds from finding a message to marking it read: a receive that trusted
 * the old claim either finished before the move or sees it when it checks its claim again under that lock (see
 * identity/name-claims.ts), so no message is taken through a claim that is gone.
 */
export async function writeRegistration(
  root: string,
  name: string,
  status: Availability,
  pane: string,
  claim?: ClaimPlace,
  pin?: Pin,
  now = new Date(),
  place?: Place,
): Promise<AgentStatus> {
  const previous = readClaim(root, name);
  const write = () => writeStatus(root, name, status, pane, now, pin, claim, place);
  const same = previous !== null && previous.pane === pane && previous.server === claim?.server && previous.host === claim.host;
  if (previous === null || same) return write();
  return withLock(receiveLockPathOf(mailboxPath(root, name)), write);
}
