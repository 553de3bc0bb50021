/**
 * Reading a mailbox on the Redis store without taking: its records, a page at a time, one per id (the entry its
 * index names: the copy moved most), and one message by id wherever it is now.
 */
import { OnePerId, parseMessage, type Message } from "../../mail/message.ts";
import type { MailRecord, Which } from "../store.ts";
import { field, LIST_PAGE, pages, withReadState } from "./entries.ts";
import type { Keyspace } from "./keyspace.ts";
import { FIELDS, LOOK_UP } from "./scripts.ts";

const BOTH: Which = { live: true, archived: true };

export async function mailMatching(
  space: Keyspace,
  mailbox: string,
  accept: (message: Message) => boolean,
  hint?: RegExp,
  which: Which = BOTH,
): Promise<MailRecord[]> {
  // A record with an escape may hold the hint's text spelled otherwise: it is parsed whatever its text.
  const maybe = hint ? (record: string) => record.includes("\\") || hint.test(record) : () => true;
  return matching(space, mailbox, which, maybe, accept);
}

export async function mail(space: Keyspace, mailbox: string, which: Which = BOTH, needle?: string): Promise<MailRecord[]> {
  return matching(space, mailbox, which, needle ? (record) => record.includes(needle) : () => true, () => true);
}

/**
 * The mailbox's records (`which` of them) whose stored text `maybe` lets through and whose message `accept`
 * takes, read a page at a time (XRANGE ... COUNT), so neither this process nor the server holds the mailbox, and
 * no call holds the server for long. A message's record is the entry its index names (ids, archids: a copy
 * `agentmail name` brought back is the newest entry of its id), asked about, with the read state, only for the
 * records taken: a listing costs its pages and what it lists. Live records first, then archived ones not also
 * live, each oldest first.
 */
async function matching(
  space: Keyspace,
  mailbox: string,
  which: Which,
  maybe: (record: string) => boolean,
  accept: (message: Message) => boolean,
): Promise<MailRecord[]> {
  const keys = space.keys(mailbox);
  const out = new OnePerId<MailRecord>();
  const taken = async (key: string) => {
    const found: { streamId: string; id: string; message: Message; readAt: string }[] = [];
    for await (const page of pages(space, key)) {
      for (const [streamId, fields] of page) {
        const record = field(fields, "record");
        if (!maybe(record)) continue;
        const message = parseMessage(record);
        if (message && accept(message)) found.push({ streamId, id: message.id, message, readAt: field(fields, "read_at") });
      }
    }
    return found;
  };
  /** The values of these fields of a hash ('' for each that is not there), a page of them per call. */
  const lookUp = async (hash: string, fields: string[]) => {
    const values: string[] = [];
    for (let at = 0; at < fields.length; at += LIST_PAGE) {
      for (const value of (await space.run(FIELDS, [hash], fields.slice(at, at + LIST_PAGE))) as string[]) values.push(value);
    }
    return values;
  };
  /**
   * Of the entries taken, those that are their message's record or an older copy of it that was taken too (the
   * record then stands in the older copy's place, as OnePerId keeps it); `newest` is what the index names.
   */
  const records = <T extends { streamId: string }>(found: T[], newest: string[]): T[] => {
    const streamIds = new Set(found.map((each) => each.streamId));
    return found.filter((_, at) => newest[at] === "" || streamIds.has(newest[at]!));
  };
  if (which.live) {
    const found = await taken(keys.mail);
    const ids = found.map((each) => each.id);
    const streamIds = found.map((each) => each.streamId);
    const [newest, reads] = await Promise.all([lookUp(keys.ids, ids), lookUp(keys.read, streamIds)]);
    const readAt = new Map(streamIds.map((streamId, at) => [streamId, reads[at]]));
    for (const { streamId, message } of records(found, newest)) {
      out.add({ message: withReadState(message, readAt.get(streamId)), archived: false });
    }
  }
  if (which.archived) {
    const found = await taken(keys.arch);
    const ids = found.map((each) => each.id);
    const [newest, live] = await Promise.all([lookUp(keys.archids, ids), lookUp(keys.ids, ids)]);
    const liveIds = new Set(ids.filter((_, at) => live[at] !== ""));
    for (const { message, readAt } of records(found, newest)) {
      if (!liveIds.has(message.id)) out.add({ message: withReadState(message, readAt), archived: true });
    }
  }
  return out.records;
}

export async function find(space: Keyspace, mailbox: string, id: string): Promise<MailRecord | null> {
  const keys = space.keys(mailbox);
  const [[state, record, readAt]] = (await space.run(LOOK_UP, [keys.ids, keys.mail, keys.read, keys.archids, keys.arch], ["1", id])) as [
    [string, string, string],
  ];
  const message = state ? parseMessage(record) : null;
  return message ? { message: withReadState(message, readAt), archived: state === "archived" } : null;
}
