import { displayName } from "./names.ts";
import type { Message } from "./message.ts";

/** The plain receive format of the seed contract: `From: <sender>\nID: <id>\n\n<body>\n`. */
export function formatMessage(message: Message): string {
  return `From: ${displayName(message.from)}\nID: ${message.id}\n\n${message.message}\n`;
}
