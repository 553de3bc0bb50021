/** How inbox, search and sent print a list: one line per message, or one JSON array; an empty list says so. */
import { inboxLine, sentLine, type LineOptions } from "../mail/format.ts";
import type { Message } from "../mail/message.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { terminalWidth } from "../output/terminal.ts";

export function printList(messages: Message[], json: boolean, style: "inbox" | "sent", showUnread: boolean): void {
  if (json) {
    printJson(messages);
    return;
  }
  if (messages.length === 0) {
    writeStdout("No messages\n");
    return;
  }
  const options: LineOptions = { now: Date.now(), width: terminalWidth(), showUnread };
  const line = style === "sent" ? sentLine : inboxLine;
  writeStdout(messages.map((message) => line(message, options) + "\n").join(""));
}
