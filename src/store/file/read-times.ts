/**
 * When each message was read (`read_at`), kept without ever rewriting a mailbox.
 *
 * A read mark overwrites `false` with `true ` in place and cannot grow the line, so the time goes to a journal
 * beside the mailbox, `<mailbox>.reads`: one `<id> <ISO 8601 time>` line per mark, appended under the receive lock
 * right before the mark, so whoever sees a record read finds its time already here (a rewrite reads the mailbox
 * without the receive lock). The journal is a side record, never the truth about read state: a time counts only for
 * a message whose `read_flag` is true (a receive killed between the two leaves a time for an unread message, which
 * counts for nothing; a message put back unread keeps its old line until it is read again, and the last line for an
 * id wins). Like the mark it is not fsynced, and failing to write it (a full disk) costs only the time, never the
 * mark: such a message shows as read with no time. Archiving folds each time into its record as `read_at` and then
 * keeps only the lines of records that carry none (archive-move.ts); a crash between the two leaves lines for
 * records that carry their own `read_at`, which wins.
 */
import { closeSync, ftruncateSync, rmSync } from "node:fs";
import type { Message } from "../../mail/message.ts";
import { openForAppend, openForRead, readRange, replaceFile, writeFully, type OpenFile } from "../durable/files.ts";
import { IdMap } from "./id-map.ts";
import { eachChunk } from "../durable/line-chunks.ts";
import { idNumber, idNumberOfBytes } from "./line-fields.ts";

export const readsPathOf = (mailbox: string) => `${mailbox}.reads`;

const JOURNAL_LINE = /^([A-Za-z0-9]{8}) (\d{4}-\d\d-\d\dT[\d:.]+Z)$/;

/** Appends one mark's time; returns it, or undefined when the journal could not be written. Call under the lock. */
export function appendReadTime(mailbox: string, id: string, at: Date = new Date()): string | undefined {
  const time = at.toISOString();
  const path = readsPathOf(mailbox);
  let file: OpenFile;
  try {
    file = openForAppend(path);
  } catch {
    return undefined;
  }
  try {
    writeFully(file.fd, `${id} ${time}\n`);
    return time;
  } catch {
    // A full disk: leave the journal as it was (a new one removed), so no torn or empty file stays behind.
    try {
      if (file.stat.size === 0) rmSync(path, { force: true });
      else ftruncateSync(file.fd, file.stat.size);
    } catch {
      // The time is lost either way; the mark is not.
    }
    return undefined;
  } finally {
    closeSync(file.fd);
  }
}

/** Calls `visit` for each line of journal text that parses (a torn last line does not). */
function eachTime(text: string, visit: (id: string, time: string) => void): void {
  for (const line of text.split("\n")) {
    const match = JOURNAL_LINE.exec(line);
    if (match) visit(match[1]!, match[2]!);
  }
}

/** Read times looked up by id. */
export interface TimeLookup {
  get(id: string): string | undefined;
}

/**
 * A journal read as it grows: `refresh` reads the lines appended since the last call (complete ones only; a line
 * being appended is read by the next call), so a reader that keeps up never reads a line twice. Times are kept as
 * numbers by id (id-map.ts): a journal of a million reads costs megabytes, not a string per line.
 */
export class JournalReader implements TimeLookup {
  readonly #times = new IdMap();
  /** Times that are not as toISOString writes them, kept as they are (their entry in #times is NaN). */
  readonly #verbatim = new Map<string, string>();
  #read = 0;

  constructor(readonly mailbox: string) {}

  get(id: string): string | undefined {
    const time = this.#times.get(id);
    if (time === undefined) return undefined;
    return Number.isNaN(time) ? this.#verbatim.get(id) : new Date(time).toISOString();
  }

  refresh(): void {
    let bytes: Uint8Array;
    try {
      const file = openForRead(readsPathOf(this.mailbox));
      if (!file) return;
      try {
        bytes = readRange(file.fd, this.#read, file.stat.size);
      } finally {
        closeSync(file.fd);
      }
    } catch {
      return;
    }
    const complete = bytes.lastIndexOf(0x0a) + 1;
    this.#read += complete;
    eachTime(new TextDecoder().decode(bytes.subarray(0, complete)), (id, time) => {
      const ms = Date.parse(time);
      const exact = Number.isFinite(ms) && new Date(ms).toISOString() === time;
      this.#times.put(id, exact ? ms : Number.NaN);
      if (!exact) this.#verbatim.set(id, time);
    });
  }
}

/** Every id's last read time; lines that do not parse (a torn last line) are ignored. */
export function readTimes(mailbox: string): Map<string, string> {
  const times = new Map<string, string>();
  let text: string;
  try {
    const file = openForRead(readsPathOf(mailbox));
    if (!file) return times;
    try {
      text = new TextDecoder().decode(readRange(file.fd, 0, file.stat.size));
    } finally {
      closeSync(file.fd);
    }
  } catch {
    return times;
  }
  eachTime(text, (id, time) => times.set(id, time));
  return times;
}

/**
 * The last read time of each of these ids (a listing's records), the journal read a chunk at a time: memory is a
 * chunk and the times asked for, however many marks it holds (every id's time, in a map, was hundreds of megabytes
 * for a million). A line is looked at closer only when its first eight bytes are one of these ids.
 */
export function readTimesOf(mailbox: string, ids: Iterable<string>): Map<string, string> {
  const times = new Map<string, string>();
  const wanted = new Set<number>();
  for (const id of ids) {
    const number = idNumber(id);
    // An id that is not eight letters and digits (a negative number) has no line the journal's form allows.
    if (number > 0) wanted.add(number);
  }
  if (wanted.size === 0) return times;
  let file: OpenFile | null;
  try {
    file = openForRead(readsPathOf(mailbox));
  } catch {
    return times;
  }
  if (!file) return times;
  try {
    eachChunk(file.fd, 0, file.stat.size, (chunk) => {
      for (let start = 0; start < chunk.length; ) {
        const end = chunk.indexOf(0x0a, start);
        if (end - start > 9 && chunk[start + 8] === 0x20 && wanted.has(idNumberOfBytes(chunk, start, start + 8))) {
          const match = JOURNAL_LINE.exec(chunk.toString("latin1", start, end));
          if (match) times.set(match[1]!, match[2]!);
        }
        start = end + 1;
      }
    });
  } catch {
    // A journal that cannot be read costs only the times.
  } finally {
    closeSync(file.fd);
  }
  return times;
}

/** The times in journal text: the lines a reader appended since it last looked (store/file/feed.ts). */
export function readTimesIn(text: string): Map<string, string> {
  const times = new Map<string, string>();
  eachTime(text, (id, time) => times.set(id, time));
  return times;
}

/** Replaces the journal by these times (none: no journal), as one atomic rename. */
export function replaceReadTimes(mailbox: string, times: Iterable<[string, string]>): void {
  let text = "";
  for (const [id, time] of times) text += `${id} ${time}\n`;
  if (text === "") removeReadTimes(mailbox);
  else replaceFile(readsPathOf(mailbox), text);
}

/** The record as readers show it: `read_at` from the journal when the record is read and does not carry its own. */
export function withReadTime(message: Message, times: TimeLookup): Message {
  if (message.read_flag !== true || typeof message.read_at === "string") return message;
  const time = times.get(message.id);
  return time === undefined ? message : { ...message, read_at: time };
}

/** Drops the journal once a rewrite has folded its times into the records. */
export function removeReadTimes(mailbox: string): void {
  rmSync(readsPathOf(mailbox), { force: true });
}
