/**
 * What reaches the model when mail arrives, bounded (pure): a native frame (Claude Code's inbox, Codex's steer or
 * queue) or a hook's output carries at most `messages` messages and `chars` characters of our text; a message that
 * does not fit whole is cut, and the rest are listed one line each (id, sender, subject), then counted. Every message
 * in the text is announced (core/arrival.ts) and never announced again: what was listed is a `receive` away.
 */
import type { Shown } from "../core/arrival.ts";
import { formatMessage } from "../core/format.ts";
import { excerpt } from "../core/inbox-line.ts";
import type { Message } from "../core/message.ts";
import { displayName } from "../core/names.ts";

export interface Budget {
  /** At most this many messages shown (whole or cut). */
  messages: number;
  /** At most this many characters of text, ours and the messages' (the agent CLI adds its own wrapper). */
  chars: number;
}

export const DEFAULT_BUDGET: Budget = { messages: 5, chars: 4000 };

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

/**
 * Shows `messages` (in the order given: the caller puts urgent mail first) within `room` characters: whole while
 * they fit, one cut when the room left is worth it, then one line each for the rest while there is room, then a
 * count. The first message is always shown, cut if need be, so some of the mail is read.
 */
export function composeMail(messages: readonly Message[], budget: Budget, room = budget.chars): Composed {
  const shown = new Map<string, Shown>();
  const parts: string[] = [];
  let left = room;
  let index = 0;
  for (; index < messages.length && shown.size < budget.messages; index++) {
    const message = messages[index]!;
    const entry = formatMessage(message);
    const separator = parts.length > 0 ? 1 : 0;
    if (entry.length + separator <= left) {
      parts.push(entry);
      shown.set(message.id, "whole");
      left -= entry.length + separator;
      continue;
    }
    // Room for the list of the rest (its head, one line, the count), when there is a rest.
    const after = index + 1 < messages.length ? REST_HEAD + LISTED_LINE + COUNT_LINE : 0;
    const overhead = cutEntry({ ...message, message: "" }, 0).length + separator + 20 + after;
    if (left - overhead < SHORTEST_CUT && shown.size > 0) break;
    const keep = Math.max(0, Math.min(message.message.length, left - overhead));
    const cutText = cutEntry(message, keep);
    parts.push(cutText);
    shown.set(message.id, "cut");
    left -= cutText.length + separator;
    index++;
    break;
  }
  const rest = messages.slice(index);
  if (rest.length > 0) {
    const lines = [`(${rest.length} more unread, not shown here: run agentmail receive to read each)`];
    left -= lines[0]!.length + 2;
    let listed = 0;
    for (const message of rest) {
      const line = `- ${message.id} from ${displayName(message.from)}: ${excerpt(message)}`.slice(0, LISTED_LINE);
      if (line.length + 1 > left - COUNT_LINE) break;
      lines.push(line);
      shown.set(message.id, "listed");
      left -= line.length + 1;
      listed++;
    }
    if (listed < rest.length) lines.push(`- and ${rest.length - listed} more (agentmail inbox lists them)`);
    for (const message of rest.slice(listed)) shown.set(message.id, "counted");
    parts.push(`${lines.join("\n")}\n`);
  }
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
