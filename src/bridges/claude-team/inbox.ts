/**
 * A team member's inbox, `inboxes/<member>.json`: a JSON array of messages, written by Claude Code 2.1.332 as
 *
 *   {"from","text","summary"?,"timestamp","color"?,"from_plugin"?,"msgV":1,"msg_id":"<uuid>","type":"message","read":false}
 *
 * pretty-printed with two spaces. Claude reads an entry when `from`, `text` and `timestamp` are strings (`type`,
 * `color`, `summary`, `from_plugin` strings and `read` a boolean when present) and drops any other; `read: true`
 * means gone. A delivered message is removed from the array, never left marked. An inbox that is not a JSON array
 * Claude reads as empty and replaces on its next write to it, losing what was there: agentmail never writes over
 * one, it reports it.
 *
 * Every change goes through Claude's lock (lock.ts): an append reads the array, adds, and replaces it; a settle
 * removes what was imported. Nothing else in the array is touched, whatever it holds.
 */
import { createHash, randomUUID } from "node:crypto";
import { closeSync, constants, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import { AgentmailError } from "../../mail/errors.ts";
import { writeFully } from "../../store/durable/files.ts";
import { Malformed } from "../formats/frontmatter.ts";
import { makeDurable, replaceTeamFile, requireOwnDirectory, withTeamLock } from "./lock.ts";
import { readTeamFile } from "./read-file.ts";

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = constants;

/** One entry as Claude writes it; keys in Claude's order. Other keys may be present and are kept. */
export interface InboxEntry {
  from: string;
  text: string;
  summary?: string;
  timestamp: string;
  color?: string;
  from_plugin?: string;
  msgV?: number;
  msg_id?: string;
  type?: string;
  read?: boolean;
  [other: string]: unknown;
}

/** An inbox this large is left alone: rewriting it on every settle would cost more than it is worth. */
export const MAX_INBOX_BYTES = 32 * 1024 * 1024;

/** The keys Claude Code 2.1.197–2.1.332 writes in an entry; `lead_sig` only in a signed lead's entries. */
const CLAUDE_KEYS = new Set(["from", "text", "summary", "timestamp", "color", "from_plugin", "msgV", "msg_id", "type", "read", "lead_sig"]);
export const MSG_VERSION = 1;

/** Why Claude would drop this entry, or undefined when it reads it. */
export function entryProblem(item: unknown): string | undefined {
  if (typeof item !== "object" || item === null || Array.isArray(item)) return "it is not an object";
  const entry = item as Record<string, unknown>;
  for (const key of ["from", "text", "timestamp"]) if (typeof entry[key] !== "string") return `its '${key}' is not a string`;
  for (const key of ["type", "color", "summary", "from_plugin"]) {
    if (entry[key] !== undefined && typeof entry[key] !== "string") return `its '${key}' is not a string`;
  }
  if (entry.read !== undefined && typeof entry.read !== "boolean") return "its 'read' is not true or false";
  return undefined;
}

/**
 * How an entry in Claude's own shape (it carries `msgV`) differs from the shape agentmail knows, or undefined. A
 * difference means Claude Code changed its format: the bridge stops rather than guess. Entries without `msgV` are
 * other tools' (Claude reads them by the looser rule above).
 */
export function formatChange(entry: InboxEntry): string | undefined {
  if (entry.msgV === undefined) return undefined;
  if (entry.msgV !== MSG_VERSION) return `msgV is ${JSON.stringify(entry.msgV)}, not ${MSG_VERSION}`;
  if (entry.type !== "message") return `type is ${JSON.stringify(entry.type)}, not "message"`;
  if (typeof entry.msg_id !== "string") return "msg_id is not a string";
  for (const key of Object.keys(entry)) if (!CLAUDE_KEYS.has(key)) return `it has a key '${key}' agentmail does not know`;
  return undefined;
}

export type InboxRead = { state: "absent" } | { state: "unreadable"; reason: string } | { state: "read"; items: unknown[] };

/** What an inbox holds now, without the lock: it is only ever replaced by a rename, so a read is never torn. */
export function readInbox(file: string): InboxRead {
  let text: string | null;
  try {
    text = readTeamFile(file, MAX_INBOX_BYTES);
  } catch (error) {
    if (error instanceof Malformed) return { state: "unreadable", reason: error.message };
    throw error;
  }
  if (text === null) return { state: "absent" };
  // A file just created and not yet written (Claude creates it, then writes "[]"): nothing is in it to lose.
  if (text.trim() === "") return { state: "read", items: [] };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { state: "unreadable", reason: `it is not JSON (${(error as Error).message})` };
  }
  if (!Array.isArray(value)) return { state: "unreadable", reason: "it is not a JSON array" };
  return { state: "read", items: value };
}

const unreadableInbox = (file: string, reason: string) =>
  new AgentmailError(
    "invalid_message",
    `${file} cannot be read as a team inbox: ${reason}; agentmail does not write over it (Claude Code would replace it on its ` +
      "next write to it, losing what is in it): save what it holds, then fix or remove it",
  );

const changedFormat = (file: string, reason: string) => new AgentmailError("conflict", `${file}: ${reason}. ${FORMAT_STOP}`);

export const FORMAT_STOP =
  "Claude Code has changed its team format: agentmail knows msgV 1 (Claude Code 2.1.197 to 2.1.332) and stops this " +
  "bridge rather than write what Claude might not read; update agentmail, or remove the bridge";

/** The identity of an entry for importing and settling: its msg_id, else a hash of who, when and what. */
export function entryKey(entry: InboxEntry): string {
  if (typeof entry.msg_id === "string" && entry.msg_id !== "") return `msg:${entry.msg_id}`;
  const hash = createHash("sha256").update(`${entry.from}\u0000${entry.timestamp}\u0000${entry.text}`).digest("hex");
  return `sha256:${hash}`;
}

/** The entry Claude itself would write for a message. */
export function newEntry(from: string, text: string, summary: string | undefined, now: Date): InboxEntry {
  return {
    from,
    text,
    ...(summary === undefined ? {} : { summary }),
    timestamp: now.toISOString(),
    msgV: MSG_VERSION,
    msg_id: randomUUID(),
    type: "message",
    read: false,
  };
}

/** Creates the inbox as `[]` when it does not exist, as Claude does before it locks (an existing one is kept). */
function createIfAbsent(file: string): void {
  // Not recursive: a team directory that is gone (its lead exited) must not be made again here.
  requireOwnDirectory(dirname(dirname(file)));
  try {
    mkdirSync(dirname(file), { mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new AgentmailError("not_found", `${dirname(dirname(file))} is gone: the team ended (its lead exited)`);
    if (code !== "EEXIST") throw error;
  }
  requireOwnDirectory(dirname(file));
  let fd: number;
  try {
    fd = openSync(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return;
    throw error;
  }
  try {
    writeFully(fd, "[]");
  } finally {
    closeSync(fd);
  }
}

/** The array under the lock, or an error: an inbox agentmail will not write over, or one in a changed format. */
function lockedItems(file: string): unknown[] {
  const read = readInbox(file);
  if (read.state === "absent") return [];
  if (read.state === "unreadable") throw unreadableInbox(file, read.reason);
  for (const item of read.items) {
    const change = entryProblem(item) === undefined ? formatChange(item as InboxEntry) : undefined;
    if (change !== undefined) throw changedFormat(file, change);
  }
  return read.items;
}

/** Appends entries to an inbox under Claude's lock; every entry already there stays as it is. */
export async function appendToInbox(file: string, entries: InboxEntry[], retries?: readonly number[]): Promise<void> {
  createIfAbsent(file);
  await withTeamLock(
    file,
    () => {
      const items = lockedItems(file);
      replaceTeamFile(file, JSON.stringify([...items, ...entries], null, 2));
    },
    retries,
  );
  makeDurable(file);
}

/**
 * Settles imported entries the way Claude settles delivered ones: under the lock, removes the first `count` entries
 * of each key, and any entry marked read; everything else stays, entries added since the snapshot included. How
 * many were removed; 0 when the inbox is gone (its team ended). An inbox that became unreadable is an error: it is
 * left as it is.
 */
export async function settleInbox(file: string, counts: ReadonlyMap<string, number>, retries?: readonly number[]): Promise<number> {
  // The team's directory is gone (its lead exited): so is everything to settle, and the lock cannot be made.
  if (!existsSync(file)) return 0;
  const removed = await withTeamLock(
    file,
    () => {
      const read = readInbox(file);
      if (read.state === "absent") return 0;
      if (read.state === "unreadable") throw unreadableInbox(file, read.reason);
      const left = new Map(counts);
      const kept = read.items.filter((item) => {
        if (entryProblem(item) !== undefined) return true;
        const entry = item as InboxEntry;
        if (entry.read === true) return false;
        const key = entryKey(entry);
        const more = left.get(key) ?? 0;
        if (more === 0) return true;
        left.set(key, more - 1);
        return false;
      });
      const removed = read.items.length - kept.length;
      if (removed > 0) replaceTeamFile(file, JSON.stringify(kept, null, 2));
      return removed;
    },
    retries,
  );
  if (removed > 0) makeDurable(file);
  return removed;
}
