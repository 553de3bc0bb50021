import type { Message } from "./message.ts";

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
