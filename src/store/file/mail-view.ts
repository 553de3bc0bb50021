/**
 * An agent's mail as readers see it: its live mailbox and its archive, each record once (a message both archived
 * and live, which a crash mid-archive can leave, counts as live), read times merged in as `read_at`. Read without
 * the lock; nothing here writes.
 */
import { deliveryKey, findReadFlag, movesOf, type Message } from "../../mail/message.ts";
import { archivePath, listArchives } from "./archive.ts";
import { listMailboxes, MovedCopies } from "./mailbox.ts";
import { mailboxPath } from "../local/layout.ts";
import { readTimesOf, withReadTime } from "./read-times.ts";
import { isAscii } from "node:buffer";
import { closeSync } from "node:fs";
import { openForRead } from "../durable/files.ts";
import { eachChunk } from "../durable/line-chunks.ts";
import {
  findRecord,
  idsIn,
  parseLine,
  readRecordFile,
  readWhole,
  matchingRecords,
  streamHolding,
  trueRecordsOf,
  type LineFilter,
  type StoredRecord,
} from "./records.ts";
import type { MailRecord, Which } from "../store.ts";

const BOTH: Which = { live: true, archived: true };
const FALSE = Buffer.from("false");
const NEWLINE = 0x0a;

/**
 * The agent's records, live ones first then archived ones, each in file order. With `needle`, only the records whose
 * lines hold it (every line of such a message does: a thread's quoted id), read a chunk at a time.
 */
export function agentMail(root: string, agent: string, which: Which = BOTH, needle?: Uint8Array): MailRecord[] {
  const path = mailboxPath(root, agent);
  const read = (file: string) => (needle ? recordsHolding(file, needle) : readRecordFile(file).records);
  const out: MailRecord[] = [];
  let liveIds: Set<string>;
  // With a needle, a record also live holds it there too: the live records found are the ones to leave out.
  if (which.live || (which.archived && needle)) {
    const live = read(path);
    if (which.live) {
      const times = readTimesOf(path, idsOf(live));
      for (const record of live) out.push({ message: withReadTime(record.message, times), archived: false });
    }
    liveIds = new Set(idsOf(live));
  } else liveIds = which.archived ? idsIn(readWhole(path)?.bytes ?? new Uint8Array()) : new Set();
  if (which.archived) {
    for (const record of read(archivePath(root, agent))) {
      if (!liveIds.has(record.message.id)) out.push({ message: record.message, archived: true });
    }
  }
  return out;
}

function idsOf(records: readonly { message: Message }[]): string[] {
  const ids: string[] = [];
  for (const record of records) ids.push(record.message.id);
  return ids;
}

/** The records of the file at `path` whose lines hold `needle` (recordsIn), read a chunk at a time. */
function recordsHolding(path: string, needle: Uint8Array): StoredRecord[] {
  const file = openForRead(path);
  if (!file) return [];
  try {
    return streamHolding(file.fd, file.stat.size, needle);
  } finally {
    closeSync(file.fd);
  }
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
  if (found) return { message: withReadTime(found.message, readTimesOf(live, [id])), archived: false };
  const archived = findRecord(archivePath(root, agent), needle, isIt);
  return archived ? { message: archived.message, archived: true } : null;
}

/** Every agent that has a live mailbox or an archive. */
export function agentsWithMail(root: string): string[] {
  return [...new Set([...listMailboxes(root), ...listArchives(root)])].sort();
}

/**
 * A line filter for `hint` (see matchingMail): the lines whose text matches. A line with an escape (its strings are
 * not as stored) or a move is parsed whatever a filter says (matchingRecords: its bytes do not tell its id). Each
 * chunk is searched a piece at a time (a line at a time cost a decoded string per line): as latin1 text, whose
 * characters are its bytes, so a match is where the line's own bytes match; a line with other than ASCII bytes is
 * also decoded and matched as UTF-8 (a pattern of ASCII letters may match others, as `k` matches the Kelvin sign).
 */
function hintFilter(hint: RegExp): LineFilter {
  const anywhere = new RegExp(hint.source, `${hint.flags.replace(/[gmy]/g, "")}gm`);
  const once = new RegExp(hint.source, hint.flags.replace(/[gy]/g, ""));
  let chunkSeen: Buffer | null = null;
  let starts: Float64Array = new Float64Array(0);
  let next = 0;
  return (chunk, start) => {
    if (chunk !== chunkSeen) {
      chunkSeen = chunk;
      starts = linesToParse(chunk, anywhere, once);
      next = 0;
    }
    while (next < starts.length && starts[next]! < start) next++;
    return next < starts.length && starts[next] === start;
  };
}

const lineDecoder = new TextDecoder();

/** The starts of the lines of a chunk that hintFilter lets through, in order (a line may be there more than once). */
function linesToParse(chunk: Buffer, anywhere: RegExp, once: RegExp): Float64Array {
  const starts: number[] = [];
  // The text a piece of whole lines at a time (a string of the whole chunk was garbage the collector let pile up),
  // each line at most once: on from the end of the line where a match was found.
  for (let from = 0; from < chunk.length; ) {
    const to = Math.min(chunk.length, chunk.indexOf(NEWLINE, Math.min(chunk.length - 1, from + TEXT_PIECE)) + 1);
    const text = chunk.toString("latin1", from, to);
    for (anywhere.lastIndex = 0; ; ) {
      const match = anywhere.exec(text);
      if (!match) break;
      starts.push(chunk.lastIndexOf(NEWLINE, from + match.index) + 1);
      anywhere.lastIndex = chunk.indexOf(NEWLINE, from + match.index) + 1 - from;
    }
    from = to;
  }
  eachLineNotAscii(chunk, 0, chunk.length, (start, end) => {
    if (once.test(lineDecoder.decode(chunk.subarray(start, end)))) starts.push(start);
  });
  return new Float64Array(starts).sort();
}

const TEXT_PIECE = 64 * 1024;

/** Lines shorter than this are each checked once a run of them holds what is not ASCII. */
const LINES_LOOKED_AT = 1024;

/**
 * Visits the lines of bytes [from, to) of a chunk (whole lines) that hold a byte that is not ASCII: a run is halved
 * only while it holds one (a native check), so a chunk of ASCII costs one look and not a look per line.
 */
function eachLineNotAscii(chunk: Buffer, from: number, to: number, visit: (start: number, end: number) => void): void {
  if (isAscii(chunk.subarray(from, to))) return;
  const middle = to - from > LINES_LOOKED_AT ? chunk.indexOf(NEWLINE, from + ((to - from) >> 1)) + 1 : to;
  if (middle > from && middle < to) {
    eachLineNotAscii(chunk, from, middle, visit);
    eachLineNotAscii(chunk, middle, to, visit);
    return;
  }
  for (let start = from; start < to; ) {
    const end = chunk.indexOf(NEWLINE, start);
    if (!isAscii(chunk.subarray(start, end))) visit(start, end);
    start = end + 1;
  }
}

/** The records of the file at `path` whose message `accept` takes (see matchingMail), with where each line is. */
function matchingIn(path: string, accept: (message: Message) => boolean, filter: LineFilter): StoredRecord[] {
  const file = openForRead(path);
  if (!file) return [];
  try {
    return matchingRecords(file.fd, file.stat.size, filter, accept);
  } finally {
    closeSync(file.fd);
  }
}

/**
 * The agent's records (live, then archived ones not also live; `which` of them) whose message `accept` takes, as
 * agentMail would give them, read a chunk at a time: a long mailbox costs a chunk of memory, four bytes a line and
 * the records found. `hint`, when given, is a pattern that the stored text of every record `accept` takes matches
 * wherever it holds no escape (a search's plain text): the other lines are not parsed.
 */
export function matchingMail(
  root: string,
  agent: string,
  accept: (message: Message) => boolean,
  hint?: RegExp,
  which: Which = BOTH,
): MailRecord[] {
  const filter: LineFilter = hint ? hintFilter(hint) : () => true;
  const path = mailboxPath(root, agent);
  const out: MailRecord[] = [];
  if (which.live) {
    const live = matchingIn(path, accept, filter);
    const times = readTimesOf(path, idsOf(live));
    for (const record of live) out.push({ message: withReadTime(record.message, times), archived: false });
  }
  const archived = which.archived ? matchingIn(archivePath(root, agent), accept, filter) : [];
  if (archived.length === 0) return out;
  // A message both archived and live (a crash mid-archive) is live: its live record, matching or not, wins.
  const file = openForRead(path);
  const liveIds = new Set<string>();
  if (file) {
    try {
      const held = trueRecordsOf(file.fd, [[0, file.stat.size]], new Set(archived.map((record) => record.message.id)));
      for (const id of held.keys()) liveIds.add(id);
    } finally {
      closeSync(file.fd);
    }
  }
  for (const record of archived) if (!liveIds.has(record.message.id)) out.push({ message: record.message, archived: true });
  return out;
}
