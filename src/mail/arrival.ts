/**
 * What happened to a message after it was stored: the events of a mailbox's delivery record (one append-only record
 * per recipient mailbox, keyed by message id; the store keeps it, see store.ts), what an event means for the next
 * arrival, and the one state the events add up to for the message's sender. Pure, for both stores.
 *
 * The sender's path (`sent`, `send --wait-for`):
 *
 *   stored → notified (how: a native channel, a hook, the MCP server, a typed reminder) → read (when) →
 *   acknowledged (when: `agentmail ack ID`, or a reply)
 *
 * and, off that path, bounced: taken out of the mailbox unread and returned to its sender (its time to live ran out,
 * or its recipient was gone too long). A stored copy also says where its arrival stands when an event held it back
 * (Claude Code holds it for approval, no channel can take it, …).
 *
 * One arrival per message: a message whose latest event announces it (a native frame or a hook carried it, whole or
 * as a line with its subject; Claude holds it for the user's approval) is never announced again, by a hook or a
 * frame. An event that says it did not reach the agent (refused, dropped, a channel that failed) makes it
 * announceable again. A count of the mail (a typed reminder, an MCP receive's "N more unread") notifies the sender
 * but announces nothing: the hooks still bring the message itself.
 */
import type { Message } from "./message.ts";

/** What happened to a message on its way into the agent, and after. */
export type ArrivalEvent =
  /** Put in front of the agent: `channel` says through what, `shown` how much of it. */
  | "notified"
  /** Claude Code holds it for its user's approval (a bypass-permissions session, or crossSessionInbound "hold"). */
  | "held"
  /** Claude Code: a held message approved by its user, now in front of the model. */
  | "delivered"
  /** Claude Code: a held message declined by its user. */
  | "denied"
  /** Claude Code: the session ended while holding it. */
  | "expired"
  /** Claude Code refused it (crossSessionInbound "refuse"). */
  | "refused"
  /** Claude Code's inbox guard dropped it (`reason`: duplicate, rate-limited, queue-full, …). */
  | "dropped"
  /** The channel failed after the message was claimed for it (`reason`); it is tried again. */
  | "failed"
  /** No channel can take it now (`reason`), e.g. an idle Gemini CLI, or a shell in the pane. */
  | "unreachable"
  /** Its recipient said it was dealt with: `agentmail ack`, or a reply (`reply`: the reply's id). */
  | "acknowledged"
  /** Taken out of the mailbox unread and returned to its sender (`reason`). */
  | "bounced";

/** The ways into an agent, in the record's words. */
export type ArrivalChannel =
  /** Claude Code's cross-session inbox socket: a new turn when idle, between tool calls when busy. */
  | "claude-inbox"
  /** Codex CLI's control socket: `turn/steer` into the running turn. */
  | "codex-steer"
  /** Codex CLI's control socket: `thread/queue/add`, which starts a turn on an idle thread. */
  | "codex-queue"
  /** The end-of-turn hook (`receive --hook`). */
  | "stop-hook"
  /** The post-tool hook (`receive --after-tool`), mid-turn. */
  | "tool-hook"
  /** The MCP server's receive or wait told the agent how many more wait (a count). */
  | "mcp"
  /** The mailman typed a reminder into the agent CLI at its prompt (opt-in; a count). */
  | "typed";

/** How much of a message a notification carried. */
export type Shown =
  /** The whole body. */
  | "whole"
  /** The start of the body, cut to the budget; the rest is a command away. */
  | "cut"
  /** One line: sender and subject; the agent runs `agentmail receive` for it. */
  | "listed"
  /** Only counted (the end of a long list, a typed reminder, an MCP receive's "N more unread"). */
  | "counted";

export interface DeliveryEvent {
  /** The message's id. */
  id: string;
  event: ArrivalEvent;
  /** When, ISO 8601. */
  at: string;
  channel?: ArrivalChannel;
  shown?: Shown;
  /** The tmux pane it went to. */
  pane?: string;
  /** Why (for the events that say it did not arrive, and a bounce), in words a user can act on. */
  reason?: string;
  /** The reply that acknowledged it. */
  reply?: string;
}

/** Channels that only count the mail to the agent: they notify, and announce nothing. */
const countsOnly = (channel: ArrivalChannel | undefined) => channel === "typed" || channel === "mcp";

/** Events that say these messages were counted to their agent (a typed reminder, an MCP receive's "N more unread"). */
export function countedNotices(ids: readonly string[], channel: "typed" | "mcp", at: Date, pane?: string): DeliveryEvent[] {
  const when = at.toISOString();
  // A loop, not map: receive paths run this (docs/performance.md).
  const events: DeliveryEvent[] = [];
  for (const id of ids)
    events.push({ id, event: "notified", at: when, channel, shown: "counted", ...(pane === undefined ? {} : { pane }) });
  return events;
}

/** What the next arrival of a message has to know: whether an event already put it (or holds it) before the agent. */
export function announces(event: DeliveryEvent): boolean {
  if (event.event === "held" || event.event === "delivered") return true;
  return event.event === "notified" && !countsOnly(event.channel);
}

/**
 * Events that say the message did not reach the agent after all: it may be announced again (by a hook, or a frame
 * to another session). A message its user declined (`denied`) stays announced: nothing pushes it again, and the
 * agent still reads it with `receive`.
 */
export function withdraws(event: DeliveryEvent): boolean {
  return ["expired", "refused", "dropped", "failed"].includes(event.event);
}

/** The effect of an event on the announced set: add its id, remove it, or leave the set alone. */
export function effectOn(event: DeliveryEvent): "+" | "-" | "=" {
  if (announces(event)) return "+";
  return withdraws(event) ? "-" : "=";
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

/** Whether an event is about the message's way into the agent (not the sender's acknowledged or bounced). */
const isArrival = (event: DeliveryEvent) => event.event !== "acknowledged" && event.event !== "bounced";

/** Whether an event put the message in front of the agent (a notification of any kind, or a held one approved). */
const reachedAgent = (event: DeliveryEvent) => event.event === "notified" || event.event === "delivered";

/**
 * Where a message's arrival stands: the latest event about its way into the agent (an `unreachable` after a
 * notification does not undo it), or null when nothing was recorded. What `mailman status` and `sent` build on.
 */
export function arrivalOf(events: readonly DeliveryEvent[] | undefined): DeliveryEvent | null {
  if (!events || events.length === 0) return null;
  let state: DeliveryEvent | null = null;
  for (const event of events) {
    if (!isArrival(event)) continue;
    if (event.event === "unreachable" && state !== null && (reachedAgent(state) || announces(state))) continue;
    state = event;
  }
  return state;
}

export const DELIVERY_STATES = ["stored", "notified", "read", "acknowledged", "bounced"] as const;
export type DeliveryStateName = (typeof DELIVERY_STATES)[number];

/**
 * Where one copy of a message is on its way, as its sender reads it (`sent --json`, the MCP results): the furthest
 * state it reached and when, with the record's words for how.
 */
export interface DeliveryState {
  state: DeliveryStateName;
  /** When it reached that state (ISO 8601), when known. */
  at: string | null;
  /**
   * notified, read: the channel that put it in front of its agent; stored: the channel of the `event` that holds it
   * back (when it has one).
   */
  channel?: ArrivalChannel;
  /** notified, read: how much of it that notification carried. */
  shown?: Shown;
  /** stored: the latest arrival event when it did not put the message in front of the agent (held, unreachable, …). */
  event?: ArrivalEvent;
  /** Why it bounced, or why that `event` happened. */
  reason?: string;
  /** acknowledged: the reply that did it (none: `agentmail ack`). */
  reply?: string;
}

const time = (value: unknown): string | null => (typeof value === "string" && value !== "" ? value : null);

/** The channel and how much of the message an arrival event carried, for the state built on it. */
function carried(event: DeliveryEvent): Pick<DeliveryState, "channel" | "shown"> {
  const parts: Pick<DeliveryState, "channel" | "shown"> = {};
  if (event.channel !== undefined) parts.channel = event.channel;
  if (event.shown !== undefined) parts.shown = event.shown;
  return parts;
}

/**
 * The state of a stored copy, from its record (read, and when) and its delivery events: bounced over acknowledged
 * over read over notified over stored. A bounced copy is marked read when it is taken out, and was never read.
 */
export function deliveryState(message: Message, events: readonly DeliveryEvent[] = []): DeliveryState {
  let acknowledged: DeliveryEvent | null = null;
  for (const event of events) {
    if (event.event === "bounced") return { state: "bounced", at: event.at, reason: event.reason ?? "bounced" };
    if (event.event === "acknowledged") acknowledged ??= event;
  }
  if (acknowledged) {
    const state: DeliveryState = { state: "acknowledged", at: acknowledged.at };
    if (acknowledged.reply !== undefined) state.reply = acknowledged.reply;
    return state;
  }
  const arrival = arrivalOf(events);
  const reached = arrival !== null && reachedAgent(arrival) ? arrival : null;
  if (message.read_flag === true) {
    const read: DeliveryState = { state: "read", at: time(message.read_at) };
    return reached ? Object.assign(read, carried(reached)) : read;
  }
  if (reached) return { state: "notified", at: reached.at, ...carried(reached) };
  const stored: DeliveryState = { state: "stored", at: time(message.created_at) };
  if (arrival !== null) {
    stored.event = arrival.event;
    if (arrival.channel !== undefined) stored.channel = arrival.channel;
    if (arrival.reason !== undefined) stored.reason = arrival.reason;
  }
  return stored;
}

/** How far along the path a state is: waiting for `wanted` is over once a copy's rank reaches it (or it bounced). */
export function reached(state: DeliveryStateName, wanted: "read" | "acknowledged"): boolean {
  return DELIVERY_STATES.indexOf(state) >= DELIVERY_STATES.indexOf(wanted);
}
