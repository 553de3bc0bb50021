import { AgentmailError } from "../core/errors.ts";
import type { Message } from "../core/message.ts";
import type { Selection, Store } from "../store/store.ts";

const HOUR_MS = 3_600_000;

export type ArchiveRequest = { ids: string[] } | { read: true; olderThanHours: number };

/** Moves the caller's chosen messages into its archive; returns their ids. */
export async function archive(store: Store, agent: string, request: ArchiveRequest, now = Date.now()): Promise<string[]> {
  if ("ids" in request && request.ids.length === 0) {
    throw new AgentmailError("usage", "name the messages to archive (agentmail archive ID...), or archive read mail with --read");
  }
  const selection: Selection =
    "ids" in request ? { ids: request.ids } : { pick: (message) => isReadAndOlder(message, request.olderThanHours, now) };
  const { archived } = await store.archive(agent, selection, false);
  return archived.map((message) => message.id);
}

function isReadAndOlder(message: Message, hours: number, now: number): boolean {
  if (message.read_flag !== true) return false;
  if (hours === 0) return true;
  const created = Date.parse(String(message.created_at));
  return Number.isFinite(created) && now - created > hours * HOUR_MS;
}
