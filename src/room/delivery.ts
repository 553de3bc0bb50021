import { deliveryState, type DeliveryEvent } from "../mail/arrival.ts";
import type { Message } from "../mail/message.ts";
import type { Delivery } from "./model.ts";

/**
 * A stored copy's delivery state, from what the store records of it: its record (read, and when) and its delivery
 * events (notified, acknowledged, bounced: mail/arrival.ts). The one place the room reads it.
 */
export function deliveryOf(message: Message, events: readonly DeliveryEvent[] = []): Delivery {
  const { state, at, how, reason } = deliveryState(message, events);
  const delivery: Delivery = { state, at };
  if (how !== undefined) delivery.how = how;
  if (reason !== undefined) delivery.reason = reason;
  return delivery;
}
