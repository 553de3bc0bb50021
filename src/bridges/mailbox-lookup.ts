/**
 * Looking one message up by id in a mailbox, for the rare moments a bridge needs it: the file a reply answers, and
 * whether an import cut short by a crash was already appended. Reads the file; takes no lock (a line is appended
 * whole, so a reader sees it whole or not at all).
 */
import { readFileSync } from "node:fs";
import { parseMessage, type Message } from "../core/message.ts";
import { mailboxPath } from "../store/mailbox.ts";

export function findMessage(root: string, agent: string, id: string): Message | null {
  let text: string;
  try {
    text = readFileSync(mailboxPath(root, agent), "utf8");
  } catch {
    return null;
  }
  const needle = JSON.stringify(id);
  for (const line of text.split("\n")) {
    if (!line.includes(needle)) continue;
    const message = parseMessage(line);
    if (message?.id === id) return message;
  }
  return null;
}
