/**
 * Moving a renamed window's unread mail (`agentmail name`) from the mailbox of its old name to the new one, as pure
 * rules both stores follow. A move appends a copy (same id, `moves` one higher than the source's, `moved_from` the
 * mailbox it left) before the source counts as read; see movesOf in message.ts for why the count is part of what
 * tells lines apart.
 */
import { movesOf, type Message } from "./message.ts";

/** The copy of `message` (a line of mailbox `from`) that a move to `to` appends: unread, with no read time of its own. */
export function movedCopy(message: Message, from: string, to: string): Message {
  const { read_at: _readAt, ...rest } = message;
  return { ...rest, to, read_flag: false, moves: movesOf(message) + 1, moved_from: from };
}

/**
 * Whether a mailbox that holds these records of the copy's id (its live record and its archived one: the copy moved
 * most, records.ts) takes the copy: not when one of them was moved as many times or more, which is this very copy
 * (a move killed after the copy and run again) or one that came around later. A mailbox that holds the message
 * moved fewer times takes it: read there, it is a rename there and back, and the copy coming back is unread mail;
 * unread there (a move killed after its copy, then moved back), the new copy supersedes the old line, which is
 * never delivered (store/file/mailbox.ts MovedCopies; the Redis store marks it read as it stores the copy).
 */
export function takesMovedCopy(copy: Message, held: readonly Message[]): boolean {
  const moves = movesOf(copy);
  for (const record of held) if (record.id === copy.id && movesOf(record) >= moves) return false;
  return true;
}

/**
 * Of the copies of what a sender sent, one per message and addressee: a copy that was moved on (its moved copy is
 * among them) gives way to the moved one, so `sent` lists a message once, where it is now. A copy is known by id,
 * mailbox and move count; the moved copy names its source by id, `moved_from` and its count less one.
 */
export function withoutMovedSources<T extends { message: Message }>(records: readonly T[]): T[] {
  const key = (id: string, mailbox: unknown, moves: number) => JSON.stringify([id, mailbox, moves]);
  const sources = new Set<string>();
  for (const { message } of records) {
    if (typeof message.moved_from === "string") sources.add(key(message.id, message.moved_from, movesOf(message) - 1));
  }
  if (sources.size === 0) return [...records];
  return records.filter(({ message }) => !sources.has(key(message.id, message.to, movesOf(message))));
}
