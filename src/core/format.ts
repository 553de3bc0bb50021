import { fieldHeaders } from "./mail-fields.ts";
import type { Message } from "./message.ts";
import { terminalLine, terminalText } from "./terminal-text.ts";

/**
 * The receive format of the seed contract, `From: <sender>\nID: <id>\n\n<body>\n`, with one header line per set
 * rich field between the ID line and the blank line; a plain message prints exactly as the seed's. Safe on a
 * terminal: the sender and id stay on their lines and nothing in the body can act on the terminal or overwrite the
 * lines above.
 */
export function formatMessage(message: Message): string {
  return `From: ${terminalLine(message.from)}\nID: ${terminalLine(message.id)}\n${fieldHeaders(message)}\n${terminalText(message.message)}\n`;
}
