/**
 * What reaches the model when mail arrives, bounded (pure): a native frame (Claude Code's inbox, Codex's steer or
 * queue) or a hook's output carries at most `messages` messages and `chars` characters of our text; a message that
 * does not fit whole is cut, and the rest are listed one line each (id, sender, subject), then counted. Every message
 * in the text is announced (mail/arrival.ts) and never announced again: what was listed is a `receive` away.
 */
import type { Shown } from "./arrival.ts";
import { formatMessage } from "./format.ts";
import { excerpt } from "./format.ts";
import type { Message } from "./message.ts";
import { displayName } from "./names.ts";

export interface Budget {
  /** At most this many messages shown (whole or cut). */
  messages: number;
  /** At most this many characters of text, ours and the messages' (the agent CLI adds its own wrapper). */
  chars: number;
}

export const DEFAULT_BUDGET: Budget = { messages: 5, chars: 4000 };

/**
 * At most one frame per agent this often (the mailman and `send` both keep it): mail that arrives meanwhile waits
 * for the next frame, so a burst reaches the model as a few frames within the budget, not one frame per message.
 */
export const FRAME_PACE_MS = 2_000;

/** Below this many characters left, a message is listed rather than cut: a stub of a body helps nobody. */
const SHORTEST_CUT = 300;
/** A listed line is cut to this many characters. */
const LISTED_LINE = 100;
/** Room kept for the line that counts what was not listed. */
const COUNT_LINE = 60;
/** The line that opens the list of the rest. */
const REST_HEAD = 80;

/** A positive whole number from the environment, else `fallback` (a hook never fails on a bad setting). */
function setting(value: string | undefined, fallback: number): number {
  const number = Number(value);
  return value !== undefined && Number.isInteger(number) && number > 0 ? number : fallback;
}

/** The budget: AGENTMAIL_DELIVERY_MESSAGES and AGENTMAIL_DELIVERY_CHARS, else the defaults (5 and 4,000). */
export function budgetOf(env: Record<string, string | undefined>): Budget {
  return {
    messages: setting(env.AGENTMAIL_DELIVERY_MESSAGES, DEFAULT_BUDGET.messages),
    chars: setting(env.AGENTMAIL_DELIVERY_CHARS, DEFAULT_BUDGET.chars),
  };
}

export interface Composed {
  /** The messages and the list, without an opening or closing line. */
  text: string;
  /** How each message of the input appears in it, by id: every one of them does, at least counted. */
  shown: Map<string, Shown>;
}

/** The receive format of a message whose body is cut to `keep` characters, saying how to read the rest. */
function cutEntry(message: Message, keep: number): string {
  const body = message.message;
  const note = `[cut: ${keep} of ${body.length} characters shown; the whole message: agentmail read ${message.id}]`;
  return `${formatMessage({ ...message, message: `${body.slice(0, keep)}…` })}${note}\n`;
}

/** A message's place in the text: its entry and how much of it shows. */
export interface Entry {
  text: string;
  shown: "whole" | "cut";
}

/**
 * The entry of a message given `left` characters: whole when it fits, else cut to fit when the room is worth it (or
 * it is the first, so some mail is always read), else null. `reserve`: room to keep for a list of more mail after it.
 */
export function entryFor(message: Message, left: number, first: boolean, reserve = 0): Entry | null {
  const separator = first ? 0 : 1;
  const whole = formatMessage(message);
  if (whole.length + separator <= left) return { text: whole, shown: "whole" };
  const overhead = cutEntry({ ...message, message: "" }, 0).length + separator + 20 + reserve;
  if (left - overhead < SHORTEST_CUT && !first) return null;
  return { text: cutEntry(message, Math.max(0, Math.min(message.message.length, left - overhead))), shown: "cut" };
}

/** Room to keep after the shown mail for the list of the rest: its head, one line, the count. */
export const LIST_RESERVE = REST_HEAD + LISTED_LINE + COUNT_LINE;

/**
 * The rest, within `left` characters: a line that says how many and how to read them, one line each (id, sender,
 * subject) while they fit, then a count. Empty for no rest.
 */
export function restList(rest: readonly Message[], left: number): Composed {
  const shown = new Map<string, Shown>();
  if (rest.length === 0) return { text: "", shown };
  const lines = [`(${rest.length} more unread, not shown here: run agentmail receive to read each)`];
  let room = left - lines[0]!.length - 1;
  let listed = 0;
  for (const message of rest) {
    const line = `- ${message.id} from ${displayName(message.from)}: ${excerpt(message)}`.slice(0, LISTED_LINE);
    if (line.length + 1 > room - COUNT_LINE) break;
    lines.push(line);
    shown.set(message.id, "listed");
    room -= line.length + 1;
    listed++;
  }
  if (listed < rest.length) lines.push(`- and ${rest.length - listed} more (agentmail inbox lists them)`);
  for (const message of rest.slice(listed)) shown.set(message.id, "counted");
  return { text: `${lines.join("\n")}\n`, shown };
}

/**
 * Shows `messages` (in the order given: the caller puts urgent mail first) within `room` characters: whole while
 * they fit, one cut when the room left is worth it, then the rest listed (restList). The first message is always
 * shown, cut if need be, so some of the mail is read.
 */
export function composeMail(messages: readonly Message[], budget: Budget, room = budget.chars): Composed {
  const shown = new Map<string, Shown>();
  const parts: string[] = [];
  let left = room;
  let index = 0;
  while (index < messages.length && shown.size < budget.messages) {
    const reserve = index + 1 < messages.length ? LIST_RESERVE : 0;
    const entry = entryFor(messages[index]!, left, parts.length === 0, reserve);
    if (entry === null) break;
    parts.push(entry.text);
    shown.set(messages[index]!.id, entry.shown);
    left -= entry.text.length + (parts.length > 1 ? 1 : 0);
    index++;
    if (entry.shown === "cut") break;
  }
  const rest = restList(messages.slice(index), left - 1);
  if (rest.text !== "") parts.push(rest.text);
  for (const [id, kind] of rest.shown) shown.set(id, kind);
  return { text: parts.join("\n"), shown };
}

/**
 * A native frame's text: says it is agentmail mail, to whom and from whom, that the user did not type it, and how to
 * answer; Claude Code puts its own fixed wrapper around it (about 580 characters), Codex none.
 */
export function frameText(recipient: string, messages: readonly Message[], budget: Budget): Composed {
  const senders = [...new Set(messages.map((message) => displayName(message.from)))].join(", ");
  const count = messages.length === 1 ? "a message" : `${messages.length} messages`;
  const head = `agentmail: ${count} for you ("${displayName(recipient)}") from ${senders}: mail between agents, not typed by your user.\n\n`;
  const foot = `\nMessages shown here are read now. Answer with: agentmail reply <id> "<text>".`;
  const composed = composeMail(messages, budget, Math.max(0, budget.chars - head.length - foot.length));
  return { text: `${head}${composed.text}${foot}`, shown: composed.shown };
}
