/**
 * What reaches the model when mail arrives, bounded (pure): a native frame (Claude Code's inbox, Codex's steer or
 * queue) or a hook's output carries at most `messages` messages and `chars` characters of text, counted as shown
 * (bodies quoted and escaped, quote.ts; our own lines too); a message that does not fit whole is cut, and the rest
 * are listed one line each (id, sender, subject), then counted. Across arrivals, the agent's arrival window
 * (arrival-window.ts) bounds what is shown whole. Every message in the text is announced (mail/arrival.ts) and
 * never announced again: what was listed is a `receive` away.
 */
import type { Shown } from "./arrival.ts";
import { excerpt, formatMessage, messageHead } from "./format.ts";
import type { Message } from "./message.ts";
import { displayName } from "./names.ts";
import { quoteWithin } from "./quote.ts";

export interface Budget {
  /** At most this many messages shown (whole or cut), per arrival and per arrival window. */
  messages: number;
  /** At most this many characters of text, ours and the messages', as shown (the agent CLI adds its own wrapper). */
  chars: number;
  /** The arrival window (arrival-window.ts): how long the budget spans the arrivals to one agent. */
  windowMs: number;
}

export const DEFAULT_BUDGET: Budget = { messages: 5, chars: 4000, windowMs: 60_000 };

/** What one arrival may still show whole or cut, given the agent's arrival window (arrival-window.ts). */
export interface Allowance {
  messages: number;
  chars: number;
  /** The arrival opens a new window: its first message is shown even if it must be cut, so some mail is read. */
  opens: boolean;
}

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

/**
 * The budget: AGENTMAIL_DELIVERY_MESSAGES, AGENTMAIL_DELIVERY_CHARS and AGENTMAIL_DELIVERY_WINDOW (seconds), else the
 * defaults (5, 4,000 and 60).
 */
export function budgetOf(env: Record<string, string | undefined>): Budget {
  return {
    messages: setting(env.AGENTMAIL_DELIVERY_MESSAGES, DEFAULT_BUDGET.messages),
    chars: setting(env.AGENTMAIL_DELIVERY_CHARS, DEFAULT_BUDGET.chars),
    windowMs: setting(env.AGENTMAIL_DELIVERY_WINDOW, DEFAULT_BUDGET.windowMs / 1000) * 1000,
  };
}

/** The whole budget, for an arrival that opens a window (or a caller that keeps none). */
export const fullAllowance = (budget: Budget): Allowance => ({ messages: budget.messages, chars: budget.chars, opens: true });

/** Cuts one line to at most `max` characters (UTF-16 units), never inside a character. */
function lineWithin(line: string, max: number): string {
  if (line.length <= max) return line;
  const end = line.charCodeAt(max - 1) >= 0xd800 && line.charCodeAt(max - 1) <= 0xdbff ? max - 1 : max;
  return line.slice(0, end);
}

export interface Composed {
  /** The messages and the list, without an opening or closing line. */
  text: string;
  /** How each message of the input appears in it, by id: every one of them does, at least counted. */
  shown: Map<string, Shown>;
  /** The characters of the entries shown whole or cut (what the arrival window counts). */
  shownChars: number;
}

/** The note after a cut body: how much of it shows, and how to read it whole. */
const cutNote = (message: Message, kept: number) =>
  `[cut: ${kept} of ${message.message.length} characters shown; the whole message: agentmail read ${displayName(message.id)}]\n`;

/**
 * The receive format of a message whose body is cut to fit `room` characters in all, saying how to read the rest.
 * What is counted is the text as shown (quote.ts): escapes and quote marks take room like any character.
 */
function cutEntry(message: Message, room: number): string {
  const body = quoteWithin(message.message, Math.max(0, room - cutOverhead(message)));
  return `${messageHead(message)}${body.text}\n${cutNote(message, body.kept)}`;
}

/** What a cut entry takes besides its body: the head, the line break, the note (sized for the longest count it can say). */
const cutOverhead = (message: Message) => messageHead(message).length + 1 + cutNote(message, message.message.length).length;

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
  // Shown, a body is never shorter than it is: one that is longer than the room cannot fit whole.
  if (message.message.length + separator <= left) {
    const whole = formatMessage(message);
    if (whole.length + separator <= left) return { text: whole, shown: "whole" };
  }
  if (left - separator - reserve - cutOverhead(message) < SHORTEST_CUT && !first) return null;
  return { text: cutEntry(message, Math.max(0, left - separator - reserve)), shown: "cut" };
}

/** Room to keep after the shown mail for the list of the rest: its head, one line, the count. */
export const LIST_RESERVE = REST_HEAD + LISTED_LINE + COUNT_LINE;

/**
 * The rest, within `left` characters: a line that says how many and how to read them, one line each (id, sender,
 * subject) while they fit, then a count. Empty for no rest.
 */
export function restList(rest: readonly Message[], left: number): Composed {
  const shown = new Map<string, Shown>();
  if (rest.length === 0) return { text: "", shown, shownChars: 0 };
  const lines = [`(${rest.length} more unread, not shown here: run agentmail receive to read each)`];
  let room = left - lines[0]!.length - 1;
  let listed = 0;
  for (const message of rest) {
    const line = lineWithin(`- ${displayName(message.id)} from ${displayName(message.from)}: ${excerpt(message)}`, LISTED_LINE);
    if (line.length + 1 > room - COUNT_LINE) break;
    lines.push(line);
    shown.set(message.id, "listed");
    room -= line.length + 1;
    listed++;
  }
  if (listed < rest.length) lines.push(`- and ${rest.length - listed} more (agentmail inbox lists them)`);
  for (const message of rest.slice(listed)) shown.set(message.id, "counted");
  return { text: `${lines.join("\n")}\n`, shown, shownChars: 0 };
}

/**
 * Shows `messages` (in the order given: the caller puts urgent mail first) within `room` characters and what the
 * arrival window still allows: whole while they fit, one cut when the room left is worth it, then the rest listed
 * (restList). In an arrival that opens a window the first message is always shown, cut if need be, so some of the
 * mail is read; in a window whose messages are spent, everything is listed, in what is left of its characters (at
 * least LIST_RESERVE: the count, and a subject or two).
 */
export function composeMail(
  messages: readonly Message[],
  budget: Budget,
  room = budget.chars,
  allowance = fullAllowance(budget),
): Composed {
  const shown = new Map<string, Shown>();
  const parts: string[] = [];
  let left = room;
  let shownChars = 0;
  let index = 0;
  while (index < messages.length && shown.size < Math.min(budget.messages, allowance.messages)) {
    const reserve = index + 1 < messages.length ? LIST_RESERVE : 0;
    const separator = parts.length === 0 ? 0 : 1;
    const fit = Math.min(left, allowance.chars - shownChars + separator);
    const entry = entryFor(messages[index]!, fit, parts.length === 0 && allowance.opens, reserve);
    if (entry === null) break;
    parts.push(entry.text);
    shown.set(messages[index]!.id, entry.shown);
    left -= entry.text.length + separator;
    shownChars += entry.text.length;
    index++;
    if (entry.shown === "cut") break;
  }
  // In a window whose characters are spent, the rest is a count with a subject or two (LIST_RESERVE), not a long list.
  const listRoom = allowance.opens ? left : Math.min(left, Math.max(LIST_RESERVE, allowance.chars - shownChars));
  const rest = restList(messages.slice(index), listRoom - (parts.length === 0 ? 0 : 1));
  if (rest.text !== "") parts.push(rest.text);
  for (const [id, kind] of rest.shown) shown.set(id, kind);
  return { text: parts.join("\n"), shown, shownChars };
}

/** Names at most this many senders in a frame's opening line; the others are counted. */
const NAMED_SENDERS = 5;

/** `alice, carol`, or `alice, bob, carol, dave, erin and 3 others`. */
function sendersOf(messages: readonly Message[]): string {
  const senders = [...new Set(messages.map((message) => displayName(message.from)))];
  const named = senders.slice(0, NAMED_SENDERS).join(", ");
  const others = senders.length - NAMED_SENDERS;
  return others > 0 ? `${named} and ${others} other${others === 1 ? "" : "s"}` : named;
}

/** How the bodies are told apart from agentmail's own lines, said once in every frame and hook output (quote.ts). */
const QUOTED = 'each message\'s text is quoted, its every line starting with ">"';

/**
 * The opening line of the end-of-turn and post-tool hooks' output: what follows is mail from other agents, not the
 * user's words, and how its bodies are marked. It starts with "You got new mail", the words the Go version's hooks used.
 */
export const HOOK_HEAD = `You got new mail: from other agents, not typed by your user; ${QUOTED}.`;

/**
 * A native frame's text: says it is agentmail mail, to whom and from whom, that the user did not type it, and how to
 * answer, and that the bodies are quoted; Claude Code puts its own fixed wrapper around it (about 60 characters),
 * Codex none. `allowance`: what the agent's arrival window still lets it show whole.
 */
export function frameText(recipient: string, messages: readonly Message[], budget: Budget, allowance = fullAllowance(budget)): Composed {
  const count = messages.length === 1 ? "a message" : `${messages.length} messages`;
  const head = `agentmail: ${count} for you ("${displayName(recipient)}") from ${sendersOf(messages)}: mail between agents, not typed by your user; ${QUOTED}.\n\n`;
  const foot = `\nMessages shown here are read now. Answer with: agentmail reply <id> "<text>".`;
  const composed = composeMail(messages, budget, Math.max(0, budget.chars - head.length - foot.length), allowance);
  return { text: `${head}${composed.text}${foot}`, shown: composed.shown, shownChars: composed.shownChars };
}
