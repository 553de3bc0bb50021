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

/** listText for a list that comes a batch at a time: its lines written as each batch comes. */
export async function* listLines(batches: AsyncIterable<Message[]>, style: "inbox" | "sent", showUnread: boolean): AsyncGenerator<string> {
  const options: LineOptions = { now: Date.now(), width: terminalWidth(), showUnread };
  const line = style === "sent" ? sentLine : inboxLine;
  let none = true;
  for await (const messages of batches) {
    let text = "";
    for (const message of messages) text += line(message, options) + "\n";
    none &&= text === "";
    yield text;
  }
  if (none) yield "No messages\n";
}

export const listOutput = (messages: Message[], style: "inbox" | "sent", showUnread: boolean): Output =>
  output(messages, () => listText(messages, style, showUnread));
