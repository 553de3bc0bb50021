/** Archives on the Redis store: moving mail to a mailbox's archive a page at a time, purging it. */
import { AgentmailError } from "../../mail/errors.ts";
import { parseMessage, type Message } from "../../mail/message.ts";
import { displayName } from "../../mail/names.ts";
import type { ArchiveResult, Selection } from "../store.ts";
import { type Entry, field, withReadState } from "./entries.ts";
import type { Keyspace } from "./keyspace.ts";
import { ARCHIVE, PAGE, PURGE } from "./scripts.ts";

/** Entries read, and moved by one script call, at a time by archive: a few milliseconds of the server's time each. */
const ARCHIVE_PAGE = 1000;

/**
 * Reads the mailbox a page at a time and, for a rule's selection, moves each page's picks with one script call,
 * so neither this process nor the server holds the whole mailbox at once, and no single call keeps senders and
 * receivers waiting for long however long the mailbox is. Each call moves entries by stream id, with their read
 * state as it is then, so mail sent or read meanwhile is never lost. A selection by id moves with one call: all of
 * them, or none. Each message is decided by its record (the copy moved most, which APPEND makes its newest entry);
 * an older copy of it (read: a copy `agentmail name` sent on, and got back) waits for that and goes with it.
 */
export async function archive(space: Keyspace, mailbox: string, selection: Selection, dryRun: boolean): Promise<ArchiveResult> {
  const keys = space.keys(mailbox);
  const wanted = "ids" in selection ? new Set(selection.ids) : null;
  const picks = (message: Message) => (wanted ? wanted.has(message.id) : "pick" in selection && selection.pick(message));
  let archived = 0;
  const found = new Set<string>();
  const byId: string[] = [];
  let entries = 0;
  let kept = 0;
  let removed = false;
  /** Older copies seen before their record, by id: stream id and message. */
  const waiting = new Map<string, { streamId: string; message: Message }[]>();
  /** Decides one message: its record, and the older copies that wait for it; adds the pairs to move to `moving`. */
  const decide = (streamId: string, message: Message, moving: string[]) => {
    const older = waiting.get(message.id) ?? [];
    waiting.delete(message.id);
    if (wanted) found.add(message.id);
    if (picks(message)) {
      // Older copies first: the archive's index of ids then names the record, as the mailbox's did.
      for (const copy of older) moving.push(copy.streamId, message.id);
      moving.push(streamId, message.id);
      archived++;
    } else kept += 1 + older.length;
  };
  const move = async (moving: string[]) => {
    if (wanted) byId.push(...moving);
    else if (!dryRun && moving.length > 0) removed = (await moveToArchive(space, mailbox, false, moving)) || removed;
  };
  for (let from = "-"; ; ) {
    const page = (await space.run(PAGE, [keys.mail, keys.read, keys.ids], [from, String(ARCHIVE_PAGE)])) as [
      string,
      string,
      string,
      string,
    ][];
    if (page.length === 0) break;
    entries += page.length;
    const moving: string[] = [];
    for (const [streamId, record, readAt, older] of page) {
      const message = parseMessage(record);
      if (!message) {
        kept++;
        continue;
      }
      withReadState(message, readAt);
      if (older === "1") {
        const list = waiting.get(message.id) ?? [];
        list.push({ streamId, message });
        waiting.set(message.id, list);
      } else decide(streamId, message, moving);
    }
    await move(moving);
    from = page[page.length - 1]![0];
  }
  // Older copies whose record left the mailbox meanwhile (another archive): each newest one left is decided itself.
  const moving: string[] = [];
  for (const copies of [...waiting.values()]) {
    const last = copies.pop()!;
    waiting.set(last.message.id, copies);
    decide(last.streamId, last.message, moving);
  }
  await move(moving);
  const missing = wanted ? [...wanted].filter((id) => !found.has(id)) : [];
  if (missing.length > 0) throw notInMailbox(missing);
  if (dryRun) return { archived, removed: entries > 0 && kept === 0 };
  if (byId.length > 0) removed = await moveToArchive(space, mailbox, true, byId);
  return { archived, removed };
}

/** One ARCHIVE call: moves these (stream id, message id) pairs; returns whether the mailbox was left empty and removed. */
async function moveToArchive(space: Keyspace, mailbox: string, allOrNone: boolean, pairs: string[]): Promise<boolean> {
  const keys = space.keys(mailbox);
  const result = (await space.run(
    ARCHIVE,
    [keys.mail, keys.read, keys.ids, keys.lease, keys.cursor, space.key("unread"), keys.arch, keys.archids, space.key("archived")],
    [mailbox, allOrNone ? "1" : "0", ...pairs],
  )) as [number, number | string];
  if (result[0] === -1) throw notInMailbox([String(result[1])]);
  return result[1] === 1;
}

export async function purgeArchive(
  space: Keyspace,
  mailbox: string,
  drop: (message: Message) => boolean,
  dryRun: boolean,
): Promise<Message[]> {
  const keys = space.keys(mailbox);
  const entries = (await space.command("XRANGE", [keys.arch, "-", "+"])) as Entry[];
  const purged: { streamId: string; message: Message }[] = [];
  for (const [streamId, fields] of entries) {
    const message = parseMessage(field(fields, "record"));
    if (message && drop(withReadState(message, field(fields, "read_at")))) purged.push({ streamId, message });
  }
  if (!dryRun && purged.length > 0) {
    const pairs = purged.flatMap((entry) => [entry.streamId, entry.message.id]);
    await space.run(PURGE, [keys.arch, keys.archids, space.key("archived")], [mailbox, ...pairs]);
  }
  return purged.map((entry) => entry.message);
}

function notInMailbox(ids: string[]): AgentmailError {
  const list = ids.map(displayName).join(", ");
  return new AgentmailError("not_found", `no message ${list} in your mailbox; run 'agentmail inbox --all' to see the ids you can archive`);
}
