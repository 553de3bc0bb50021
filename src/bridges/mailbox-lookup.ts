/**
 * Looking messages up by id in a mailbox, for the rare moments a bridge needs it: the file a reply answers, and
 * whether imports cut short by a crash were already appended. Reads the file; takes no lock (a line is appended
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

/** The ids in a mailbox: read once for all the imports a crash left to check, whatever their number. */
export function mailboxIds(root: string, agent: string): Set<string> {
  const ids = new Set<string>();
  let text: string;
  try {
    text = readFileSync(mailboxPath(root, agent), "utf8");
  } catch {
    return ids;
  }
  for (const line of text.split("\n")) {
    // Parsed whole: a torn line (an append cut short) does not count as delivered.
    const id = parseMessage(line)?.id;
    if (id !== undefined) ids.add(id);
  }
  return ids;
}
