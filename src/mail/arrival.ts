/**
 * What happened to a message after it was stored, as its sender follows it: the events of a mailbox's delivery
 * record (one append-only record per recipient mailbox, keyed by message id; the store keeps it, see store.ts), and
 * the one state they add up to. Pure.
 *
 *   stored → notified (how: a typed reminder, a hook, the MCP server, a native channel) → read (when) →
 *   acknowledged (when: `agentmail ack ID`, or a reply)
 *
 * and, off that path, bounced: taken out of the mailbox unread and returned to its sender (its time to live ran out,
 * or its recipient was gone too long). The record's shape is issue 23's (native delivery channels), extended with
 * the events the sender reads: `acknowledged` and `bounced`.
 */
import type { Message } from "./message.ts";

/** What happened to a message on its way to its agent; a reader passes over events it does not know. */
export type ArrivalEvent =
  /** Put in front of the agent, whole or as a count: `channel` says through what. */
  | "notified"
  /** Its recipient said it was dealt with: `agentmail ack`, or a reply (`reply`: the reply's id). */
  | "acknowledged"
  /** Taken out of the mailbox unread and returned to its sender (`reason`). */
  | "bounced";

/** The ways a message is put in front of an agent, in the record's words. */
export type ArrivalChannel =
  /** The mailman typed a reminder into the agent CLI at its prompt. */
  | "typed"
  /** The end-of-turn hook (`receive --hook`) told the agent how many more wait. */
  | "stop-hook"
  /** The MCP server's receive or wait told the agent how many more wait. */
  | "mcp";

/** How much of a message a notification carried. */
export type Shown = "whole" | "cut" | "listed" | "counted";

export interface DeliveryEvent {
  /** The message's id. */
  id: string;
  event: ArrivalEvent | (string & {});
  /** When, ISO 8601. */
  at: string;
  channel?: ArrivalChannel | (string & {});
  shown?: Shown;
  /** The tmux pane it went to. */
  pane?: string;
  /** Why (a bounce), in words a user can act on. */
  reason?: string;
  /** The reply that acknowledged it. */
  reply?: string;
}

/** Events that say these messages were counted to their agent (a reminder, a hook's or a tool's "N more unread"). */
export function countedNotices(ids: readonly string[], channel: ArrivalChannel, at: Date, pane?: string): DeliveryEvent[] {
  const when = at.toISOString();
  // A loop, not map: the hook runs this (docs/performance.md).
  const events: DeliveryEvent[] = [];
  for (const id of ids)
    events.push({ id, event: "notified", at: when, channel, shown: "counted", ...(pane === undefined ? {} : { pane }) });
  return events;
}

/** One line of a delivery record: the event as one JSON object, its keys in a fixed order. */
export function serializeEvent(event: DeliveryEvent): string {
  const { id, event: kind, at, channel, shown, pane, reason, reply } = event;
  const line: Record<string, string> = { id, event: kind, at };
  if (channel !== undefined) line.channel = channel;
  if (shown !== undefined) line.shown = shown;
  if (pane !== undefined) line.pane = pane;
  if (reason !== undefined) line.reason = reason;
  if (reply !== undefined) line.reply = reply;
  return JSON.stringify(line);
}

/** An event read back from a record, or null for a line that is not one (torn, or written by something else). */
export function parseEvent(line: string): DeliveryEvent | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const record = value as Record<string, unknown>;
  if (typeof record.id !== "string" || typeof record.event !== "string" || typeof record.at !== "string") return null;
  return record as unknown as DeliveryEvent;
}

/** Events grouped by message id, each group in the order recorded. */
export function byMessage(events: Iterable<DeliveryEvent>): Map<string, DeliveryEvent[]> {
  const grouped = new Map<string, DeliveryEvent[]>();
  for (const event of events) {
    const list = grouped.get(event.id);
    if (list) list.push(event);
    else grouped.set(event.id, [event]);
  }
  return grouped;
}

export const DELIVERY_STATES = ["stored", "notified", "read", "acknowledged", "bounced"] as const;
export type DeliveryStateName = (typeof DELIVERY_STATES)[number];

/** Where one copy of a message is on its way: the furthest state it reached, and when. */
export interface DeliveryState {
  state: DeliveryStateName;
  /** When it reached that state (ISO 8601), when known. */
  at: string | null;
  /** How it was notified (the channel) or acknowledged (`ack`, or `reply <id>`). */
  how?: string;
  /** Why it bounced. */
  reason?: string;
}

const time = (value: unknown): string | null => (typeof value === "string" && value !== "" ? value : null);

/**
 * The state of a stored copy, from its record (read, and when) and its delivery events: bounced over acknowledged
 * over read over notified over stored. A bounced copy is marked read when it is taken out, and was never read.
 */
export function deliveryState(message: Message, events: readonly DeliveryEvent[] = []): DeliveryState {
  let notified: DeliveryEvent | null = null;
  let acknowledged: DeliveryEvent | null = null;
  for (const event of events) {
    if (event.event === "bounced") return { state: "bounced", at: event.at, reason: event.reason ?? "bounced" };
    if (event.event === "acknowledged") acknowledged ??= event;
    else if (event.event === "notified") notified ??= event;
  }
  if (acknowledged) return { state: "acknowledged", at: acknowledged.at, how: acknowledged.reply ? `reply ${acknowledged.reply}` : "ack" };
  if (message.read_flag === true) return { state: "read", at: time(message.read_at) };
  if (notified) return { state: "notified", at: notified.at, how: notified.channel ?? "notified" };
  return { state: "stored", at: time(message.created_at) };
}

/** How far along the path a state is: waiting for `wanted` is over once a copy's rank reaches it (or it bounced). */
export function reached(state: DeliveryStateName, wanted: "read" | "acknowledged"): boolean {
  return DELIVERY_STATES.indexOf(state) >= DELIVERY_STATES.indexOf(wanted);
}
