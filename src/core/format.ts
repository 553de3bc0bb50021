import { fieldHeaders } from "./mail-fields.ts";
import { displayName } from "./names.ts";
import type { Message } from "./message.ts";

/**
 * The receive format of the seed contract, `From: <sender>\nID: <id>\n\n<body>\n`, with one header line per set
 * rich field between the ID line and the blank line; a plain message prints exactly as the seed's.
 */
export function formatMessage(message: Message): string {
  return `From: ${displayName(message.from)}\nID: ${message.id}\n${fieldHeaders(message)}\n${message.message}\n`;
}
