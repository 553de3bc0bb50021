/**
 * The order mail comes in, decided here for every take and every list:
 *
 * - A mailbox is read oldest first: the store takes its first unread line, and lines are appended in time order.
 * - A receive takes the caller's own mail before its roles' queues, and of those first the queue whose oldest
 *   unread message is oldest (byOldestWaiting): of several members receiving at once, one gets each message.
 * - An agent's hook takes the oldest urgent message before older ones (urgentFirst); a plain receive, the oldest.
 * - Lists (inbox, search, thread, migrate) are oldest first by created_at (byCreation); sent is newest first.
 */
import { isUrgent } from "./fields.ts";
import type { Message } from "./message.ts";

/**
 * Which unread message to take before older ones. `mention`: text every line it can accept contains, so an engine
 * may pass other lines without parsing them (a speed-up only).
 */
export type Preference = ((message: Message) => boolean) & { mention?: string };

/** Urgent mail first, for hooks: an urgent message's line holds the text `urgent` (in some JSON spelling). */
export const urgentFirst: Preference = Object.assign((message: Message) => isUrgent(message), { mention: "urgent" });

/** Oldest first by created_at; records without a usable time keep their place relative to each other. */
export function byCreation<T extends { message: Message }>(records: T[]): T[] {
  const times = records.map((record) => {
    const parsed = Date.parse(String(record.message.created_at));
    return Number.isFinite(parsed) ? parsed : 0;
  });
  // A mailbox is appended in time order, so the common case is already sorted.
  if (times.every((time, index) => index === 0 || times[index - 1]! <= time)) return records;
  const order = records.map((_, index) => index).sort((a, b) => times[a]! - times[b]! || a - b);
  return order.map((index) => records[index]!);
}

/** Newest first: what a sender looks at first is what it sent last. */
export const newestFirst = <T extends { message: Message }>(records: T[]): T[] => byCreation(records).reverse();

/**
 * Queues by the time their oldest unread message was sent (`at`, as stored), oldest first; equal times keep the order
 * given. An unreadable queue says "\uffff", which sorts last: the healthy ones are served first.
 */
export function byOldestWaiting<T extends { at: string }>(queues: T[]): T[] {
  return queues.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
}
