import { withLock } from "../durable/lock.ts";
import { mailboxPath, receiveLockPathOf } from "../local/layout.ts";
import type { AgentStatus, NameClaim, Registration } from "../store.ts";
import { readStatus, writeStatus } from "./status.ts";

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
export async function writeRegistration(root: string, registration: Registration): Promise<AgentStatus> {
  const { name, pane, claim } = registration;
  const previous = readClaim(root, name);
  const write = () => writeStatus(root, registration);
  const same = previous !== null && previous.pane === pane && previous.server === claim?.server && previous.host === claim.host;
  if (previous === null || same) return write();
  return withLock(receiveLockPathOf(mailboxPath(root, name)), write);
}
