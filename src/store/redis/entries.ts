/** Reading the server's replies: a stream's entries a page at a time, their fields, a hash, a record's read state. */
import type { Message } from "../../mail/message.ts";
import type { Keyspace } from "./keyspace.ts";

/** Entries read at a time by a listing (XRANGE, UNREAD): a few milliseconds of the server's time each, whatever the mailbox. */
export const LIST_PAGE = 2000;

export type Entry = [streamId: string, fields: string[]];

export function field(fields: string[], name: string): string {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1]!;
  return "";
}

/** A hash reply as a map: RESP3 gives an object, RESP2 a flat array. */
export function hashOf(reply: unknown): Map<string, string> {
  const map = new Map<string, string>();
  if (Array.isArray(reply)) for (let i = 0; i + 1 < reply.length; i += 2) map.set(String(reply[i]), String(reply[i + 1]));
  else if (reply) for (const [key, value] of Object.entries(reply as Record<string, string>)) map.set(key, String(value));
  return map;
}

/** A stored record with its read state: read when `readAt` is given ('' or undefined is unread). */
export function withReadState(message: Message, readAt: string | undefined): Message {
  if (readAt) Object.assign(message, { read_flag: true, read_at: readAt });
  return message;
}

/** A stream's entries, oldest first, LIST_PAGE at a time. */
export async function* pages(space: Keyspace, key: string): AsyncGenerator<Entry[]> {
  for (let from = "-"; ; ) {
    const page = (await space.command("XRANGE", [key, from, "+", "COUNT", String(LIST_PAGE)])) as Entry[];
    if (page.length > 0) yield page;
    if (page.length < LIST_PAGE) return;
    from = `(${page[page.length - 1]![0]}`;
  }
}
