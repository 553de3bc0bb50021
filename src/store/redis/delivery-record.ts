/** The delivery record of a mailbox on the Redis store: what reached whom and how (Store.deliveries, announce). */
import { byMessage, effectOn, parseEvent, serializeEvent } from "../../mail/arrival.ts";
import type { DeliveryEvent } from "../store.ts";
import { type Entry, field } from "./entries.ts";
import type { Keyspace } from "./keyspace.ts";
import { ANNOUNCE, RECORD_DELIVERY } from "./scripts.ts";

export async function deliveries(space: Keyspace, mailbox: string, ids?: ReadonlySet<string>): Promise<Map<string, DeliveryEvent[]>> {
  const entries = (await space.command("XRANGE", [space.keys(mailbox).delivery, "-", "+"])) as Entry[];
  const events: DeliveryEvent[] = [];
  for (const [, fields] of entries) {
    const event = parseEvent(field(fields, "event"));
    if (event && (!ids || ids.has(event.id))) events.push(event);
  }
  return byMessage(events);
}

export async function announced(space: Keyspace, mailbox: string): Promise<Set<string>> {
  return new Set((await space.command("HKEYS", [space.keys(mailbox).announced])) as string[]);
}

export async function recordDelivery(space: Keyspace, mailbox: string, events: readonly DeliveryEvent[]): Promise<void> {
  if (events.length === 0) return;
  const keys = space.keys(mailbox);
  const args = events.flatMap((event) => [event.id, serializeEvent(event), effectOn(event)]);
  await space.run(RECORD_DELIVERY, [keys.delivery, keys.announced, keys.ids, keys.read, keys.rbell], args);
}

export async function announce(space: Keyspace, mailbox: string, events: readonly DeliveryEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const keys = space.keys(mailbox);
  const args = events.flatMap((event) => [event.id, serializeEvent(event)]);
  return (await space.run(ANNOUNCE, [keys.ids, keys.read, keys.lease, keys.announced, keys.delivery, keys.rbell], args)) as string[];
}
