import { deliveryState, type DeliveryEvent } from "../mail/arrival.ts";
import type { Message } from "../mail/message.ts";
import type { Delivery } from "./model.ts";

/**
 * A stored copy's delivery state, from what the store records of it: its record (read, and when) and its delivery
 * events (mail/arrival.ts). The one place the room reads it.
 */
export function deliveryOf(message: Message, events: readonly DeliveryEvent[] = []): Delivery {
  return deliveryState(message, events);
}

/** Whether two states of a copy say the same (a change of either is an event for the views). */
export function sameDelivery(a: Delivery, b: Delivery): boolean {
  return (
    a.state === b.state && a.at === b.at && a.channel === b.channel && a.event === b.event && a.reason === b.reason && a.reply === b.reply
  );
}
