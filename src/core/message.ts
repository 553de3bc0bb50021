import { AgentmailError, errorWithNextStep } from "./errors.ts";
import { newId } from "./ids.ts";

/** One line of a mailbox. Field names are the seed data model's; fields other tools add are kept as they are. */
export interface Message {
  id: string;
  from: string;
  to: string;
  message: string;
  read_flag: boolean;
  created_at: string;
  [field: string]: unknown;
}

/** The seed's six fields first and in their order; the optional fields of a rich message (mail-fields.ts) after them. */
export function createMessage(from: string, to: string, body: string, now: Date = new Date(), fields: object = {}): Message {
  return { id: newId(), from, to, message: body, read_flag: false, created_at: now.toISOString(), ...fields };
}

/** One JSONL line. JSON.stringify escapes "\n", so a message is always exactly one line. */
export function serializeMessage(message: Message): string {
  return JSON.stringify(message) + "\n";
}

/** The message on a line, or null when the line is not a message (torn, garbage, or missing fields). */
export function parseMessage(line: string): Message | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const record = value as Record<string, unknown>;
  if (typeof record.id !== "string" || typeof record.from !== "string" || typeof record.message !== "string") return null;
  if (typeof record.read_flag !== "boolean") return null;
  if (record.to !== undefined && typeof record.to !== "string") return null;
  return record as Message;
}

export interface ReadFlag {
  /** Byte offset of the flag's value (`true` or `false`) within the scanned buffer. */
  offset: number;
  read: boolean;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const KEY = new TextEncoder().encode("read_flag");
const TRUE_BYTES = new TextEncoder().encode("true");
const FALSE_BYTES = new TextEncoder().encode("false");
/** What replaces `false` when a message is marked read: same length, so the mark is an in-place overwrite. */
export const READ_MARK = new TextEncoder().encode("true ");
export const UNREAD_MARK = FALSE_BYTES;

function isSpace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0d || byte === 0x0a;
}

function matchesAt(bytes: Uint8Array, at: number, expected: Uint8Array): boolean {
  if (at + expected.length > bytes.length) return false;
  for (let i = 0; i < expected.length; i++) if (bytes[at + i] !== expected[i]) return false;
  return true;
}

/**
 * Finds the top-level `"read_flag"` value of the JSON object in bytes[start, end) without parsing it, so a
 * receive can skip read lines cheaply and mark one read by overwriting five bytes. Keys and values inside
 * strings or nested objects are never mistaken for it. UTF-8 continuation bytes are never ASCII, so a byte scan
 * is exact.
 */
export function findReadFlag(bytes: Uint8Array, start: number, end: number): ReadFlag | null {
  let depth = 0;
  let i = start;
  while (i < end) {
    const byte = bytes[i]!;
    if (byte === QUOTE) {
      const stringStart = i + 1;
      i++;
      while (i < end && bytes[i] !== QUOTE) i += bytes[i] === BACKSLASH ? 2 : 1;
      const stringEnd = i;
      i++;
      if (depth !== 1 || stringEnd - stringStart !== KEY.length || !matchesAt(bytes, stringStart, KEY)) continue;
      let j = i;
      while (j < end && isSpace(bytes[j])) j++;
      if (bytes[j] !== 0x3a) continue;
      j++;
      while (j < end && isSpace(bytes[j])) j++;
      if (matchesAt(bytes, j, FALSE_BYTES)) return { offset: j, read: false };
      if (matchesAt(bytes, j, TRUE_BYTES)) return { offset: j, read: true };
      return null;
    }
    if (byte === 0x7b || byte === 0x5b) depth++;
    else if (byte === 0x7d || byte === 0x5d) depth--;
    i++;
  }
  return null;
}

/** The largest message body accepted, in UTF-8 bytes, by the CLI and the MCP server alike. */
export const MAX_MESSAGE_BYTES = 256 * 1024;

/** A byte count as people write it: 262,144. */
export const grouped = (count: number): string => String(count).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

/** The size limit, refused: the one wording for every way a message can be too large. */
export function tooLarge(what: string): AgentmailError {
  const limit = grouped(MAX_MESSAGE_BYTES);
  return new AgentmailError("message_too_large", `${what} over the ${limit}-byte limit; send a path to a file instead`);
}

/** Checks a body before anything is stored: non-blank and within the size limit. */
export function validateBody(body: string): string {
  if (body.trim() === "") throw errorWithNextStep("empty_message", "the message is empty", "giveMessage");
  const size = new TextEncoder().encode(body).length;
  if (size > MAX_MESSAGE_BYTES) throw tooLarge(`the message is ${grouped(size)} bytes,`);
  return body;
}
