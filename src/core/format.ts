import type { Message } from "./message.ts";
import { terminalLine, terminalText } from "./terminal-text.ts";

/**
 * The plain receive format of the seed contract: `From: <sender>\nID: <id>\n\n<body>\n`, safe on a terminal: the
 * sender and id stay on their lines and nothing in the body can act on the terminal or overwrite the lines above.
 */
export function formatMessage(message: Message): string {
  return `From: ${terminalLine(message.from)}\nID: ${terminalLine(message.id)}\n\n${terminalText(message.message)}\n`;
}
