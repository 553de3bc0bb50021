/** How inbox, search and sent print a list: one line per message, or one JSON array; an empty list says so. */
import { output, type Output } from "../cli/definitions.ts";
import { inboxLine, sentLine, type LineOptions } from "../mail/format.ts";
import type { Message } from "../mail/message.ts";
import { terminalWidth } from "../output/terminal.ts";

export function listText(messages: Message[], style: "inbox" | "sent", showUnread: boolean): string {
  if (messages.length === 0) return "No messages\n";
  const options: LineOptions = { now: Date.now(), width: terminalWidth(), showUnread };
  const line = style === "sent" ? sentLine : inboxLine;
  return messages.map((message) => line(message, options) + "\n").join("");
}

export const listOutput = (messages: Message[], style: "inbox" | "sent", showUnread: boolean): Output =>
  output(messages, () => listText(messages, style, showUnread));
