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

/** The last thing an agent did that the store knows of, and when. */
export interface Activity {
  at: string;
  /**
   * `sent` mail, `read` mail (receive, read), `acknowledged` mail (ack, a reply), `hook` (its end-of-turn or post-tool
   * hook looked for mail), `claimed` paths, `status` (registered, set its status), `command` (ran any command: Redis).
   */
  what: "sent" | "read" | "acknowledged" | "hook" | "claimed" | "status" | "command";
}

/** Why an agent needs looking at (thresholds: room/thresholds.ts); null while it works normally. */
export interface Problem {
  /**
   * `gone`: offline or its window closed, while holding claims or unread mail; `unreachable`: mail stored that no
   * channel can put in front of it; `stalled`: ready or working, unread mail older than the threshold, nothing read since.
   */
  kind: "gone" | "unreachable" | "stalled";
  reason: string;
}

/** An agent as the room lists it. */
export interface AgentRow {
  /** Its name; `name@project` in a room of every project. */
  name: string;
  /** The project it works in, in a room of every project (`--all-projects`); null otherwise. */
  project: string | null;
  /** ready, work or offline as the agent set it; null for one that never registered (it only has mail). */
  status: string | null;
  /** The agent CLI running in its pane (claude, codex, gemini), or null when none or not known (another host). */
  cli: string | null;
  unread: number;
  /** When it last did anything the store knows of (activity.at); null when nothing is known. */
  last_seen: string | null;
  /** What that was. */
  activity: Activity["what"] | null;
  /** The host it runs on (Redis store: every host's agents are in the room). */
  host: string | null;
  /** How mail reaches it: `mailman` (typed at its prompt), `mailman: <why not>`, or `pull` (it reads on its own turn). */
  reach: string;
  /** The channel its mail last went in through (the delivery record: claude-inbox, codex-queue, stop-hook, …), or null. */
  channel: string | null;
  /** The claims it holds: live ones, and those stored that ended only because it is gone. */
  claims: number;
  problem: Problem | null;
  /** The person watching the room (their own mailbox). */
  human: boolean;
  /** Registered as a person (watch or web), not an agent in a window. */
  person: boolean;
}

/** A claim on paths as the room shows it (claims/claims.ts), judged: live, or ended and why (still stored until swept). */
export interface ClaimRow {
  id: string;
  path: string;
  holder: string;
  project: string | null;
  shared: boolean;
  reason: string | null;
  claimed_at: string;
  expires_at: string;
  waiters: string[];
  state: "live" | "ended";
  /** Why it ended (run out, holder offline, window closed). */
  why: string | null;
  /** Its holder is gone (offline, or its window closed): the person may release it. */
  holder_gone: boolean;
}

/** Something waiting for the person, one key or click from its thread and a reply (room/needs.ts). */
export interface NeedRow {
  /**
   * `to-you`: mail to the person, unread; `question`: a message that needs a response, unanswered past the threshold;
   * `bounced`: mail returned to its sender unread; `undeliverable`: unread mail no channel can put in front of its
   * agent; `claim`: agents waiting for a claim.
   */
  kind: "to-you" | "question" | "bounced" | "undeliverable" | "claim";
  /** The message (its thread is one step away); null for a claim. */
  id: string | null;
  /** The copy's mailbox, or the claim's holder. */
  mailbox: string;
  from: string;
  at: string;
  /** The subject or the start of the body, or the claimed path. */
  preview: string;
  /** Why it is here, in words. */
  why: string;
}

/** The mailman of the view's store (mailman/files.ts), as the room shows it. */
export interface MailmanView {
  running: boolean;
  pid: number | null;
  since: string | null;
  /** When it last looked at every mailbox (null: not recorded). */
  last_sweep_at: string | null;
  last_failure: string | null;
  last_failure_at: string | null;
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
  | { event: "agents"; agents: AgentRow[] }
  | { event: "needs"; needs: NeedRow[] }
  | { event: "claims"; claims: ClaimRow[] }
  | { event: "mailman"; mailman: MailmanView | null };
