/**
 * The file store's delivery record of a mailbox (mail/arrival.ts says what its events mean), in two files beside it:
 *
 *   <mailbox>.delivery    every event, one JSON object per line, appended and never rewritten (the history `sent`,
 *                         `send --wait-for`, `mailman status` and `doctor` read); each append is one write of whole
 *                         lines, and a line torn by a crash is no event: readers pass over it
 *   <mailbox>.announced   the ids of the unread messages an event announces, one per line, replaced whole: what a
 *                         hook looks at before it shows a message, so it reads a few ids, not the history
 *
 * Both change only under the mailbox's receive lock, the lock a receiver holds from finding a message to marking it
 * read. So a claim (`announce`) and a hook showing a message never both take one message: the claim looks at the
 * read flags under the lock, and the hook looks at `.announced` under it.
 */
import { closeSync, ftruncateSync } from "node:fs";
import { byMessage, effectOn, parseEvent, serializeEvent, type DeliveryEvent } from "../../mail/arrival.ts";
import { scanLine, idText } from "../../mail/message.ts";
import { unreadRegion } from "./cursor.ts";
import { openForAppend, openForRead, readRange, replaceFile, writeFully } from "../durable/files.ts";
import { eachLine } from "../durable/line-chunks.ts";
import { mailboxPath } from "../local/layout.ts";
import { underReceiveLock } from "./mark-read.ts";

export const deliveryPathOf = (mailbox: string) => `${mailbox}.delivery`;
export const announcedPathOf = (mailbox: string) => `${mailbox}.announced`;

const NEWLINE = 0x0a;
const decoder = new TextDecoder();

/** The ids listed in `.announced` (none when there is no such file). */
function readAnnounced(mailbox: string): Set<string> {
  const file = openForRead(announcedPathOf(mailbox));
  if (!file) return new Set();
  try {
    const text = decoder.decode(readRange(file.fd, 0, file.stat.size));
    const ids = new Set<string>();
    for (const line of text.split("\n")) if (line !== "") ids.add(line);
    return ids;
  } finally {
    closeSync(file.fd);
  }
}

/** The ids of the mailbox's unread messages, read from its cursor (everything before the cursor is read). */
function unreadIds(mailbox: string): Set<string> {
  const ids = new Set<string>();
  const file = openForRead(mailbox);
  if (!file) return ids;
  try {
    const { bytes } = unreadRegion(mailbox, file.fd, file.stat.ino, file.stat.size);
    for (let start = 0, end = bytes.indexOf(NEWLINE); end !== -1; start = end + 1, end = bytes.indexOf(NEWLINE, start)) {
      const scan = scanLine(bytes, start, end);
      const id = scan.flag?.read === false ? idText(bytes, scan) : null;
      if (id !== null) ids.add(JSON.parse(id) as string);
    }
    return ids;
  } finally {
    closeSync(file.fd);
  }
}

/** Appends events to the history; a failed write is taken back, so no torn line stays behind. */
function appendEvents(mailbox: string, events: readonly DeliveryEvent[]): void {
  if (events.length === 0) return;
  const file = openForAppend(deliveryPathOf(mailbox));
  try {
    try {
      let lines = "";
      for (const event of events) lines += serializeEvent(event) + "\n";
      writeFully(file.fd, lines);
    } catch (error) {
      ftruncateSync(file.fd, file.stat.size);
      throw error;
    }
  } finally {
    closeSync(file.fd);
  }
}

/** The announced set after `events`, kept to the ids in `unread` (a message read since needs no entry). */
function nextAnnounced(before: Set<string>, events: readonly DeliveryEvent[], unread: Set<string>): Set<string> {
  const after = new Set(before);
  for (const event of events) {
    const effect = effectOn(event);
    if (effect === "+") after.add(event.id);
    else if (effect === "-") after.delete(event.id);
  }
  for (const id of after) if (!unread.has(id)) after.delete(id);
  return after;
}

function writeAnnounced(mailbox: string, before: Set<string>, after: Set<string>): void {
  if (before.size === after.size && [...after].every((id) => before.has(id))) return;
  let lines = "";
  for (const id of after) lines += `${id}\n`;
  replaceFile(announcedPathOf(mailbox), lines);
}

/**
 * Runs `change` under the mailbox's receive lock. A mailbox that does not exist (yet, or any more) has no unread
 * message to claim or show: its record is only appended to then, which needs no lock.
 */
async function underLock<T>(mailbox: string, change: () => T): Promise<T> {
  let result: { value: T } | null = null;
  await underReceiveLock(mailbox, async () => {
    result = { value: change() };
    return true;
  });
  return result === null ? change() : (result as { value: T }).value;
}

/**
 * Records events: appended to the history, and the announced set updated to match. Events that leave the set alone
 * (a count, acknowledged, bounced, unreachable: `effectOn` '=') are only appended, without the lock: a take records
 * a bounce while it holds that lock, and the set needs no change for them.
 */
export async function recordEvents(root: string, agent: string, events: readonly DeliveryEvent[]): Promise<void> {
  if (events.length === 0) return;
  const mailbox = mailboxPath(root, agent);
  let changesSet = false;
  for (const event of events) if (effectOn(event) !== "=") changesSet = true;
  if (!changesSet) return appendEvents(mailbox, events);
  await underLock(mailbox, () => {
    appendEvents(mailbox, events);
    const before = readAnnounced(mailbox);
    writeAnnounced(mailbox, before, nextAnnounced(before, events, unreadIds(mailbox)));
  });
}

/** Records those of `events` whose message is unread and not announced yet; returns their ids (see Store.announce). */
export async function announceEvents(root: string, agent: string, events: readonly DeliveryEvent[]): Promise<string[]> {
  const mailbox = mailboxPath(root, agent);
  return underLock(mailbox, () => {
    const unread = unreadIds(mailbox);
    const before = readAnnounced(mailbox);
    const claimed = events.filter((event) => unread.has(event.id) && !before.has(event.id));
    appendEvents(mailbox, claimed);
    writeAnnounced(mailbox, before, nextAnnounced(before, claimed, unread));
    return claimed.map((event) => event.id);
  });
}

/** The announced ids; read without a lock (a receiver that must be sure reads it again under its receive lock). */
export function announcedIds(root: string, agent: string): Set<string> {
  return readAnnounced(mailboxPath(root, agent));
}

/** The history, grouped by message id, a chunk at a time (it grows with the mailbox); `ids` keeps only those. */
export function readEvents(root: string, agent: string, ids?: ReadonlySet<string>): Map<string, DeliveryEvent[]> {
  const events: DeliveryEvent[] = [];
  const file = openForRead(deliveryPathOf(mailboxPath(root, agent)));
  if (!file) return new Map();
  try {
    eachLine(file.fd, 0, file.stat.size, (chunk, start, end) => {
      const event = parseEvent(decoder.decode(chunk.subarray(start, end)));
      if (event && (!ids || ids.has(event.id))) events.push(event);
    });
  } finally {
    closeSync(file.fd);
  }
  return byMessage(events);
}
