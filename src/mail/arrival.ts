/**
 * How a message was put in front of its agent, or why it could not be: the events of a mailbox's delivery record
 * (one append-only record per recipient mailbox, keyed by message id; the store keeps it, see store.ts). Pure: what
 * an event means for the next arrival is decided here, for both stores.
 *
 * One arrival per message: a message whose latest event announces it (a native frame carried it, whole or as a line
 * with its subject; Claude holds it for the user's approval) is never announced again, by a hook or a frame. An event
 * that says it did not reach the agent (refused, dropped, a channel that failed) makes it announceable again.
 */

/** What happened to a message on its way into the agent. */
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
  | "unreachable";

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
  /** The mailman typed a reminder into the agent CLI at its prompt (opt-in). */
  | "typed";

/** How much of a message a notification carried. */
export type Shown =
  /** The whole body. */
  | "whole"
  /** The start of the body, cut to the budget; the rest is a command away. */
  | "cut"
  /** One line: sender and subject; the agent runs `agentmail receive` for it. */
  | "listed"
  /** Only counted (the end of a long list, or a typed reminder). */
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
  /** Why (for the events that say it did not arrive), in words a user can act on. */
  reason?: string;
}

/** What the next arrival of a message has to know: whether an event already put it (or holds it) before the agent. */
export function announces(event: DeliveryEvent): boolean {
  if (event.event === "held" || event.event === "delivered") return true;
  // A typed reminder only counts the mail: the hooks still bring the message itself.
  return event.event === "notified" && event.channel !== "typed";
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
  const { id, event: kind, at, channel, shown, pane, reason } = event;
  const line: Record<string, string> = { id, event: kind, at };
  if (channel !== undefined) line.channel = channel;
  if (shown !== undefined) line.shown = shown;
  if (pane !== undefined) line.pane = pane;
  if (reason !== undefined) line.reason = reason;
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

/**
 * The delivery state of a message, for `sent` and `mailman status`: the latest event that says something about its
 * arrival (an `unreachable` after a `notified` does not undo the notification), or null when nothing was recorded.
 */
export function arrivalOf(events: readonly DeliveryEvent[] | undefined): DeliveryEvent | null {
  if (!events || events.length === 0) return null;
  let state: DeliveryEvent | null = null;
  for (const event of events) {
    if (event.event === "unreachable" && state !== null && announces(state)) continue;
    state = event;
  }
  return state;
}
