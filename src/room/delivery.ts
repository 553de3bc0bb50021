import type { Message } from "../mail/message.ts";
import type { Delivery } from "./model.ts";

/** A copy taken or marked read, at `at` when known. */
export const readDelivery = (at: string | null): Delivery => ({ state: "read", at });

/**
 * A stored copy's delivery state, from what the store records of it: read (with when) or stored. The one place that
 * reads it, so a store that records more states (notified, acknowledged, bounced) changes only this and the feed.
 */
export function deliveryOf(message: Message): Delivery {
  if (message.read_flag === true) return readDelivery(typeof message.read_at === "string" ? message.read_at : null);
  return { state: "stored", at: typeof message.created_at === "string" ? message.created_at : null };
}
