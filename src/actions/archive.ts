import { AgentmailError } from "../mail/errors.ts";
import type { Message } from "../mail/message.ts";
import type { ReadProgress, Store } from "../store/store.ts";

const HOUR_MS = 3_600_000;

export type ArchiveRequest = { ids: string[] } | { read: true; olderThanHours: number };

/** Moves the caller's chosen messages into its archive; returns their ids. */
export async function archive(
  store: Store,
  agent: string,
  request: ArchiveRequest,
  now = Date.now(),
  onBytes?: ReadProgress,
): Promise<string[]> {
  if ("ids" in request && request.ids.length === 0) {
    throw new AgentmailError("usage", "name the messages to archive (agentmail archive ID...), or archive read mail with --read");
  }
  if ("ids" in request) {
    await store.archive(agent, { ids: request.ids }, false, onBytes);
    return [...new Set(request.ids)];
  }
  // Every message the rule accepts is archived once archive returns (Selection): its id is noted as it is picked.
  const archived: string[] = [];
  const pick = (message: Message) => {
    const picked = isReadAndOlder(message, request.olderThanHours, now);
    if (picked) archived.push(message.id);
    return picked;
  };
  await store.archive(agent, { pick }, false, onBytes);
  return archived;
}

function isReadAndOlder(message: Message, hours: number, now: number): boolean {
  if (message.read_flag !== true) return false;
  if (hours === 0) return true;
  const created = Date.parse(String(message.created_at));
  return Number.isFinite(created) && now - created > hours * HOUR_MS;
}
