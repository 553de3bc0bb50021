/**
 * The file store's delivery record of a mailbox (mail/arrival.ts says what its events mean): `<mailbox>.delivery`
 * beside it, every event one JSON object per line, appended and never rewritten. Each append is one write of whole
 * lines to a file opened O_APPEND, so writers on one machine never interleave; a line torn by a crash is no event,
 * and readers pass over it. The format is issue 23's record, whose `.announced` set is not kept here.
 */
import { closeSync, ftruncateSync } from "node:fs";
import { byMessage, parseEvent, serializeEvent, type DeliveryEvent } from "../mail/arrival.ts";
import { openForAppend, openForRead, writeFully } from "./files.ts";
import { eachLine } from "./line-chunks.ts";
import { mailboxPath } from "./layout.ts";

export const deliveryPathOf = (mailbox: string) => `${mailbox}.delivery`;

const decoder = new TextDecoder();

/** Appends events to the mailbox's record; a failed write is taken back, so no torn line stays behind. */
export function recordEvents(root: string, agent: string, events: readonly DeliveryEvent[]): void {
  if (events.length === 0) return;
  const file = openForAppend(deliveryPathOf(mailboxPath(root, agent)));
  try {
    try {
      // A loop, not map: the hook records what it counted (docs/performance.md).
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

/** The record, grouped by message id, a chunk at a time (it grows with the mailbox); `ids` keeps only those. */
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
