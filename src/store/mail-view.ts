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
import { idsIn, parseLine, readRecordFile, readWhole } from "./records.ts";
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
  const whole = readWhole(mailboxPath(root, agent));
  if (!whole) return [];
  const { bytes } = whole;
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const unread: Message[] = [];
  const seen = new Set<string>();
  const moved = MovedCopies.in(bytes);
  // An unread line holds the bytes `false` (its flag's value); a native search finds the candidates, the exact
  // check runs on those lines only.
  for (let at = buffer.indexOf(FALSE, 0); at !== -1; ) {
    const start = bytes.lastIndexOf(NEWLINE, at) + 1;
    const end = bytes.indexOf(NEWLINE, at);
    if (end === -1) break;
    at = buffer.indexOf(FALSE, end + 1);
    if (findReadFlag(bytes, start, end)?.read !== false) continue;
    const message = parseLine(bytes, start, end);
    const key = message && deliveryKey(message);
    if (!message || !key || seen.has(key)) continue;
    seen.add(key);
    if (!moved?.supersede(start, JSON.stringify(message.id), movesOf(message))) unread.push(message);
  }
  return unread;
}

/** One message of the agent's mail by id (live first, then archived), or null. */
export function findMail(root: string, agent: string, id: string): MailRecord | null {
  const needle = new TextEncoder().encode(JSON.stringify(id));
  return agentMail(root, agent, BOTH, needle).find((record) => record.message.id === id) ?? null;
}

/** Every agent that has a live mailbox or an archive. */
export function agentsWithMail(root: string): string[] {
  return [...new Set([...listMailboxes(root), ...listArchives(root)])].sort();
}
