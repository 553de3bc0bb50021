/**
 * An agent's mail as readers see it: its live mailbox and its archive, each record once (a message both archived
 * and live, which a crash mid-archive can leave, counts as live), read times merged in as `read_at`. Read without
 * the lock; nothing here writes.
 */
import { deliveryKey, findReadFlag, movesOf, type Message } from "../mail/message.ts";
import { archivePath, listArchives } from "./archive.ts";
import { listMailboxes, MovedCopies } from "./mailbox.ts";
import { mailboxPath } from "./layout.ts";
import { readTimes, withReadTime } from "./read-times.ts";
import { closeSync } from "node:fs";
import { openForRead } from "./files.ts";
import { eachChunk } from "./line-chunks.ts";
import {
  findRecord,
  idsIn,
  parseLine,
  readRecordFile,
  readWhole,
  streamRecords,
  trueRecords,
  trueRecordsOf,
  type LineFilter,
  type StoredRecord,
} from "./records.ts";
import type { MailRecord, Which } from "./store.ts";

const BOTH: Which = { live: true, archived: true };
const FALSE = Buffer.from("false");
const NEWLINE = 0x0a;

/** The agent's records, live ones first then archived ones, each in file order. */
export function agentMail(root: string, agent: string, which: Which = BOTH, needle?: Uint8Array): MailRecord[] {
  const path = mailboxPath(root, agent);
  const out: MailRecord[] = [];
  let liveIds: Set<string>;
  if (which.live) {
    const times = readTimes(path);
    const live = readRecordFile(path, needle).records;
    for (const record of live) out.push({ message: withReadTime(record.message, times), archived: false });
    liveIds = new Set(live.map((record) => record.message.id));
  } else liveIds = which.archived ? idsIn(readWhole(path)?.bytes ?? new Uint8Array()) : new Set();
  if (which.archived) {
    for (const record of readRecordFile(archivePath(root, agent), needle).records) {
      if (!liveIds.has(record.message.id)) out.push({ message: record.message, archived: true });
    }
  }
  return out;
}

/**
 * The agent's unread live messages in file order, as receive delivers them (the first line of each delivery key,
 * mail/message.ts, unless a more moved copy supersedes it). Read lines are passed over by their flag without being parsed,
 * so this costs little however long the read history is.
 */
export function unreadMail(root: string, agent: string): Message[] {
  const file = openForRead(mailboxPath(root, agent));
  if (!file) return [];
  const unread: Message[] = [];
  const seen = new Set<string>();
  try {
    // Read a chunk at a time (a million read lines cost a chunk, not 185 MB), once for moved copies, once for the rest.
    const moved = MovedCopies.inFile(file.fd, file.stat.size);
    eachChunk(file.fd, 0, file.stat.size, (bytes, offset) => {
      // An unread line holds the bytes `false` (its flag's value); a native search finds the candidates, the exact
      // check runs on those lines only.
      for (let at = bytes.indexOf(FALSE, 0); at !== -1; ) {
        const start = bytes.lastIndexOf(NEWLINE, at) + 1;
        const end = bytes.indexOf(NEWLINE, at);
        if (end === -1) break;
        at = bytes.indexOf(FALSE, end + 1);
        if (findReadFlag(bytes, start, end)?.read !== false) continue;
        const message = parseLine(bytes, start, end);
        const key = message && deliveryKey(message);
        if (!message || !key || seen.has(key)) continue;
        seen.add(key);
        if (!moved?.supersede(offset + start, JSON.stringify(message.id), movesOf(message))) unread.push(message);
      }
    });
  } finally {
    closeSync(file.fd);
  }
  return unread;
}

/**
 * One message of the agent's mail by id (live first, then archived), or null. Read a chunk at a time: `read`, `ack`
 * and a wait's looks cost a chunk of memory however long the mailbox is.
 */
export function findMail(root: string, agent: string, id: string): MailRecord | null {
  const needle = new TextEncoder().encode(JSON.stringify(id));
  const isIt = (message: Message) => message.id === id;
  const live = mailboxPath(root, agent);
  const found = findRecord(live, needle, isIt);
  if (found) return { message: withReadTime(found.message, readTimes(live)), archived: false };
  const archived = findRecord(archivePath(root, agent), needle, isIt);
  return archived ? { message: archived.message, archived: true } : null;
}

/** Every agent that has a live mailbox or an archive. */
export function agentsWithMail(root: string): string[] {
  return [...new Set([...listMailboxes(root), ...listArchives(root)])].sort();
}

/**
 * A line filter for `hint` (see matchingMail): a line with a backslash (its strings are not as stored) or with the
 * key `moves` (it may supersede another) may always hold a wanted record; any other only when its text matches.
 */
function hintFilter(hint: RegExp): LineFilter {
  let chunkSeen: Buffer | null = null;
  let backslash = -1;
  let moves = -1;
  // The next backslash and `moves` in the chunk, searched for again only once passed (eachChunk's chunks are new views).
  return (chunk, start, end) => {
    if (chunk !== chunkSeen) {
      chunkSeen = chunk;
      backslash = chunk.indexOf(BACKSLASH, start);
      moves = chunk.indexOf(MOVES, start);
    }
    if (backslash !== -1 && backslash < start) backslash = chunk.indexOf(BACKSLASH, start);
    if (moves !== -1 && moves < start) moves = chunk.indexOf(MOVES, start);
    if ((backslash !== -1 && backslash < end) || (moves !== -1 && moves < end)) return true;
    return hint.test(lineDecoder.decode(chunk.subarray(start, end)));
  };
}

const BACKSLASH = 0x5c;
const MOVES = Buffer.from('"moves"');
const lineDecoder = new TextDecoder();

/** The records of the file at `path` whose message `accept` takes (see matchingMail), with where each line is. */
function matchingIn(path: string, accept: (message: Message) => boolean, filter: LineFilter): StoredRecord[] {
  const file = openForRead(path);
  if (!file) return [];
  try {
    // Kept as they are found, so only the matches are held; a match that is not its id's record (a repeat, or
    // superseded by a copy moved more) is dropped by trueRecords, which looks at every line of those ids.
    const { records } = streamRecords(file.fd, 0, file.stat.size, filter, accept);
    return trueRecords(file.fd, file.stat.size, records);
  } finally {
    closeSync(file.fd);
  }
}

/**
 * The agent's records (live, then archived ones not also live) whose message `accept` takes, as agentMail would give
 * them, read a chunk at a time: a long mailbox costs a chunk of memory and the records found. `hint`, when given,
 * is a pattern that the stored text of every record `accept` takes matches wherever it holds no escape (a search's
 * plain text): the other lines are not parsed.
 */
export function matchingMail(root: string, agent: string, accept: (message: Message) => boolean, hint?: RegExp): MailRecord[] {
  const filter: LineFilter = hint ? hintFilter(hint) : () => true;
  const path = mailboxPath(root, agent);
  const live = matchingIn(path, accept, filter);
  const times = live.length > 0 ? readTimes(path) : new Map<string, string>();
  const out: MailRecord[] = live.map((record) => ({ message: withReadTime(record.message, times), archived: false }));
  const archived = matchingIn(archivePath(root, agent), accept, filter);
  if (archived.length === 0) return out;
  // A message both archived and live (a crash mid-archive) is live: its live record, matching or not, wins.
  const file = openForRead(path);
  const liveIds = new Set<string>();
  if (file) {
    try {
      const held = trueRecordsOf(file.fd, file.stat.size, new Set(archived.map((record) => record.message.id)));
      for (const id of held.keys()) liveIds.add(id);
    } finally {
      closeSync(file.fd);
    }
  }
  for (const record of archived) if (!liveIds.has(record.message.id)) out.push({ message: record.message, archived: true });
  return out;
}
