/**
 * How mail looks in text: the receive format (receive, read, the hook), one line per message for inbox, sent and
 * search, and a full entry per message for thread. Pure: the time and the width are given. Every name, subject and
 * excerpt goes through displayName, so a hostile value cannot start a line of its own or reach the terminal as a
 * control sequence.
 */
import { isRoleAddress } from "./addresses.ts";
import { deliveryState, type DeliveryState } from "./arrival.ts";
import { DEFAULT_TYPE, fieldHeaders, priorityRank, typeOf } from "./fields.ts";
import type { Message } from "./message.ts";
import { displayName } from "./names.ts";
import { quoteBody } from "./quote.ts";
import { terminalLine } from "./terminal-text.ts";

/**
 * The receive format: the seed contract's `From: <sender>\nID: <id>\n\n<body>\n`, with one header line per set rich
 * field between the ID line and the blank line, and the body quoted line by line (quote.ts: `> ` before each), so
 * the body ends at the first line without the mark and nothing in it can pass for a header, another message or
 * agentmail's own words. Safe on a terminal: the sender and id stay on their lines and nothing in the body can act
 * on the terminal or overwrite the lines above.
 */
export function formatMessage(message: Message): string {
  return `${messageHead(message)}${quoteBody(message.message)}\n`;
}

/** The lines before a body: From, ID, the set fields, the blank line. */
export function messageHead(message: Message): string {
  return `From: ${terminalLine(message.from)}\nID: ${terminalLine(message.id)}\n${fieldHeaders(message)}\n`;
}

/** Without a terminal to fit, the subject or excerpt is cut to this many characters. */
const EXCERPT_CHARS = 100;

/** `42s`, `5m`, `3h` (under two days), `2d`; `?` when the record has no usable time. */
export function age(createdAt: unknown, now: number): string {
  const created = Date.parse(String(createdAt));
  if (!Number.isFinite(created)) return "?";
  const seconds = Math.max(0, Math.floor((now - created) / 1000));
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 48 * 3600) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86400)}d`;
}

/**
 * No line is wider than this, so only the start of a body (up to 256 KiB) is ever looked at; the stores read a listed
 * body cut to it (`sentBy` without whole bodies).
 */
export const WIDEST_LINE = 1000;

/** Cuts to at most `max` characters (code points), the last being `…` when anything was cut. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const step = (at: number) => at + (text.codePointAt(at)! > 0xffff ? 2 : 1);
  let keep = 0;
  for (let kept = 0; kept < max - 1; kept++) keep = step(keep);
  // Up to `max` code points fit as they are; a surrogate pair is one character, two UTF-16 units.
  return keep >= text.length || step(keep) >= text.length ? text : text.slice(0, keep) + "…";
}

/** The subject, or the start of the body on one line (runs of whitespace, new lines included, become one space). */
export function excerpt(message: Message): string {
  const subject = typeof message.subject === "string" && message.subject.trim() !== "" ? message.subject : null;
  const start = (subject ?? String(message.message)).slice(0, WIDEST_LINE);
  return displayName((/[^\S ]| {2}/.test(start) ? start.replace(/\s+/g, " ") : start).trim());
}

/** `*` unread (shown only where read mail is listed too), `!` urgent or high, `?` needs a response. */
export function marks(message: Message, showUnread: boolean): string {
  return (
    (showUnread && message.read_flag !== true ? "*" : "") +
    (priorityRank(message.priority) >= 2 ? "!" : "") +
    (message.needs_response === true ? "?" : "")
  );
}

export interface LineOptions {
  now: number;
  /** The terminal's width when stdout is one: the whole line is cut to it. Otherwise the excerpt is cut. */
  width?: number;
  /** Mark unread messages with `*` (inbox --all, --archived, and search list read mail too). */
  showUnread?: boolean;
}

function finish(head: string, message: Message, options: LineOptions): string {
  const flags = marks(message, options.showUnread === true);
  const type = typeOf(message);
  const start = `${head}  ${flags ? flags + " " : ""}${type === DEFAULT_TYPE ? "" : `[${displayName(type)}] `}`;
  const text = excerpt(message);
  return options.width ? cut(start + text, options.width) : start + cut(text, EXCERPT_CHARS);
}

/** `<id>  <age>  <sender>  [marks] [type] <subject or excerpt>` */
export function inboxLine(message: Message, options: LineOptions): string {
  // Mail taken from a role's queue is marked with the role it came through.
  const to = String(message.to ?? "");
  const via = isRoleAddress(to) ? ` (${displayName(to)})` : "";
  return finish(`${message.id}  ${age(message.created_at, options.now)}  ${displayName(String(message.from))}${via}`, message, options);
}

/**
 * The receipt, the copy's delivery state (mail/arrival.ts): `stored` (`stored, <event>[ via <channel>]` when an
 * arrival was held back: `stored, held via claude-inbox`, `stored, unreachable`), `notified <time> via <channel>`,
 * `read <time>[ via <channel>]`, `acknowledged <time>[ (reply <id>)]`, or `bounced <time> (<why>)`. A time is left
 * out when it is not known (mail read before times were kept).
 */
export function receipt(delivery: DeliveryState): string {
  const at = delivery.at === null ? "" : ` ${displayName(delivery.at)}`;
  const via = delivery.channel === undefined ? "" : ` via ${displayName(delivery.channel)}`;
  switch (delivery.state) {
    case "stored":
      return delivery.event === undefined ? "stored" : `stored, ${displayName(delivery.event)}${via}`;
    case "notified":
      return `notified${at}${via}`;
    case "read":
      return `read${at}${via}`;
    case "acknowledged":
      return `acknowledged${at}${delivery.reply === undefined ? "" : ` (reply ${displayName(delivery.reply)})`}`;
    case "bounced":
      return `bounced${at} (${displayName(delivery.reason ?? "?")})`;
  }
}

/** A message the caller sent, with the delivery state of its copy (`sent` adds it; without it, the record tells). */
export type SentMessage = Message & { delivery?: DeliveryState };

/** `<id>  <age>  to <recipient>  <receipt>  [marks] [type] <subject or excerpt>` */
export function sentLine(message: SentMessage, options: LineOptions): string {
  const delivery = message.delivery ?? deliveryState(message);
  return finish(
    `${message.id}  ${age(message.created_at, options.now)}  to ${displayName(String(message.to))}  ${receipt(delivery)}`,
    message,
    options,
  );
}

/** A thread entry: From, To, ID, Date, the set fields, a blank line, the body quoted as receive quotes it. */
export function threadEntry(message: Message): string {
  const date = typeof message.created_at === "string" ? displayName(message.created_at) : "?";
  const addresses = `From: ${displayName(String(message.from))}\nTo: ${displayName(String(message.to ?? ""))}\n`;
  return `${addresses}ID: ${displayName(String(message.id))}\nDate: ${date}\n${fieldHeaders(message)}\n${quoteBody(message.message)}\n`;
}
