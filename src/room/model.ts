/**
 * The mail room as the person running the agents sees it, shared by `watch` (the terminal) and `web` (the page):
 * the agents, every copy of every message as it moves, and the events that change them. Plain data, so both views
 * and `watch --json` show the same thing.
 */
import type { DeliveryState } from "../mail/arrival.ts";

/**
 * Where one copy of a message is on its way to its reader, as its sender reads it in `sent --json` (mail/arrival.ts):
 * `stored` (in the mailbox, unread), `notified` (the agent was told, and through what), `read` (taken, with when),
 * `acknowledged` (by `ack` or a reply), or `bounced` (returned to its sender unread, with why).
 */
export type Delivery = DeliveryState;

/** A message as its sender wrote it, the same in every copy. */
interface MessageContent {
  id: string;
  from: string;
  created_at: string;
  subject: string | null;
  type: string;
  priority: string;
  needs_response: boolean;
  /** The thread it belongs to: its thread_id, or its own id when it started one. */
  thread: string;
  in_reply_to: string | null;
  body: string;
}

/** Where one copy of a message is: whose mailbox, whether archived there, how far it got to its reader. */
interface Copy {
  /** The mailbox holding this copy: an agent's name, or `role:<role>` for a role's queue. */
  mailbox: string;
  archived: boolean;
  delivery: Delivery;
}

/** One copy of a message: the message as its recipient's mailbox holds it. */
export interface MailItem extends MessageContent, Copy {}

/** A copy in a list: the item without its body, and the start of the body (or the subject) on one line. */
export type MailRow = Omit<MailItem, "body"> & { preview: string };

/** A message with every copy of it (one per recipient mailbox): what a thread, a search or sent mail lists. */
export interface MessageView extends MessageContent {
  copies: Copy[];
}

/** An agent as the room lists it. */
export interface AgentRow {
  name: string;
  /** ready, work or offline as the agent set it; null for one that never registered (it only has mail). */
  status: string | null;
  /** The agent CLI running in its pane (claude, codex, gemini), or null when none or not known (another host). */
  cli: string | null;
  unread: number;
  /** When it last ran a command (the registry), else when it last sent mail; null when neither is known. */
  last_seen: string | null;
  /** The host it runs on (Redis store: every host's agents are in the room). */
  host: string | null;
  /** How mail reaches it: `mailman` (typed at its prompt), `mailman: <why not>`, or `pull` (it reads on its own turn). */
  reach: string;
  /** The person watching the room (their own mailbox). */
  human: boolean;
}

/** Who writes to whom since a time (null: all time): the agents, and one edge per sender and recipient with its count. */
export interface Graph {
  since: string | null;
  nodes: string[];
  edges: { from: string; to: string; count: number }[];
}

/** What changed in the room: what `watch --json` streams and the page's live feed receives. */
export type RoomEvent =
  | { event: "mail"; item: MailItem }
  | { event: "delivery"; id: string; mailbox: string; delivery: Delivery }
  | { event: "archived"; id: string; mailbox: string }
  | { event: "removed"; id: string; mailbox: string }
  | { event: "agents"; agents: AgentRow[] };
