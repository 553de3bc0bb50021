/**
 * When each message was read (`read_at`), kept without ever rewriting a mailbox.
 *
 * A read mark overwrites `false` with `true ` in place and cannot grow the line, so the time goes to a journal
 * beside the mailbox, `<mailbox>.reads`: one `<id> <ISO 8601 time>` line per mark, appended under the receive lock
 * right after the mark. The journal is a side record, never the truth about read state: a time counts only for a
 * message whose `read_flag` is true (a message put back unread keeps its old line until it is read again, and the
 * last line for an id wins). Like the mark it is not fsynced, and failing to write it (a full disk) costs only the
 * time, never the mark: such a message shows as read with no time. The rewrites that already exist (archive and
 * cleanup) fold each time into its record as `read_at` and then remove the journal; a crash between the two leaves
 * lines for records that carry their own `read_at`, which wins.
 */
import { closeSync, ftruncateSync, rmSync } from "node:fs";
import type { Message } from "../core/message.ts";
import { openForAppend, openForRead, readRange, writeFully, type OpenFile } from "./files.ts";

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
  return readTimesIn(text, times);
}

/** The times in journal text (a whole journal, or the lines appended since a reader last looked). */
export function readTimesIn(text: string, times = new Map<string, string>()): Map<string, string> {
  for (const line of text.split("\n")) {
    const match = JOURNAL_LINE.exec(line);
    if (match) times.set(match[1]!, match[2]!);
  }
  return times;
}

/** The record as readers show it: `read_at` from the journal when the record is read and does not carry its own. */
export function withReadTime(message: Message, times: ReadonlyMap<string, string>): Message {
  if (message.read_flag !== true || typeof message.read_at === "string") return message;
  const time = times.get(message.id);
  return time === undefined ? message : { ...message, read_at: time };
}

/** Drops the journal once a rewrite has folded its times into the records. */
export function removeReadTimes(mailbox: string): void {
  rmSync(readsPathOf(mailbox), { force: true });
}
