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

/** Why a reader passes over a stored record that parseMessage refuses, in every engine's skip report. */
export const NOT_A_MESSAGE = "it is not a message (unparseable, or missing id, from, message or read_flag)";

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
  if (record.moves !== undefined && !isMoveCount(record.moves)) return null;
  return record as Message;
}

/**
 * How many times `agentmail name` moved this copy from one mailbox to another (a renamed window's unread mail): 0 for
 * a copy where it was first stored. A move appends a copy with the count one higher (and `moved_from`, the mailbox it
 * left), so a copy that comes back to a mailbox that still holds the message as read is a new line there, not a
 * repeat of the old one: a mailbox delivers the first line of each (id, moves), and shows one record per id, the one
 * moved most (records.ts). A move killed and run again makes the same copy, which the mailbox already holds.
 */
export const movesOf = (message: Message): number => (typeof message.moves === "number" ? message.moves : 0);

/**
 * One record per id, the rule every reader of every engine keeps: the copy moved most, else the first. Whether `copy`
 * stands for its id in place of the record held so far (`heldMoves`, its move count; undefined when none is held).
 */
export const standsForId = (copy: Message, heldMoves: number | undefined): boolean => heldMoves === undefined || movesOf(copy) > heldMoves;

/** Records kept one per id as they come (standsForId), as readers show a mailbox, in the place of the id's first record. */
export class OnePerId<T extends { message: Message }> {
  readonly records: T[] = [];
  readonly #at = new Map<string, number>();

  add(record: T): void {
    const at = this.#at.get(record.message.id);
    if (at === undefined) {
      this.#at.set(record.message.id, this.records.length);
      this.records.push(record);
    } else if (standsForId(record.message, movesOf(this.records[at]!.message))) this.records[at] = record;
  }
}

/** A move count as a record may hold it: a whole number from 0 to 10^15 - 1, so the byte scan reads it exactly. */
const isMoveCount = (value: unknown): boolean => Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) < 1e15;

/**
 * What tells a mailbox's lines apart for delivery (the first line with a key wins): the id's canonical JSON text,
 * then `#` and the move count for a moved copy. No id's text ends in a digit (it ends in a quote), so a moved copy's
 * key is never another message's.
 */
export function deliveryKey(message: Message): string {
  const moves = movesOf(message);
  return moves === 0 ? JSON.stringify(message.id) : `${JSON.stringify(message.id)}#${moves}`;
}

function colonsIn(text: string): number {
  let colons = 0;
  for (let at = text.indexOf(":"); at !== -1; at = text.indexOf(":", at + 1)) colons++;
  return colons;
}

/** The keys at every depth of a parsed value, plus the colons in its keys and strings. */
function keysAndColons(value: unknown): number {
  if (typeof value === "string") return colonsIn(value);
  if (value === null || typeof value !== "object") return 0;
  let total = 0;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) total += keysAndColons(value[i]);
    return total;
  }
  const keys = Object.keys(value);
  for (let i = 0; i < keys.length; i++) total += 1 + colonsIn(keys[i]!) + keysAndColons((value as Record<string, unknown>)[keys[i]!]);
  return total;
}

/**
 * Whether the JSON text `line`, whose parse is `value`, certainly gives no key twice at any depth, told without a
 * byte scan: every colon of valid JSON is either a key's or inside a string, and JSON.parse keeps one of each key,
 * so a line with a key twice has more colons than its parse has keys and colons in strings, unless an escaped colon
 * (`\u003a`, which adds one to a decoded string) makes up for it; a line with one is not certain. False means "not
 * certain": the caller scans (scanLine).
 */
export function surelyNoRepeatedKey(line: string, value: unknown): boolean {
  return line.indexOf("u003a") === -1 && line.indexOf("u003A") === -1 && colonsIn(line) === keysAndColons(value);
}

/**
 * The unread messages among complete JSONL lines (`text`, newline-separated), each delivery key counted once (its
 * first line wins): what a per-line parse and surelyNoRepeatedKey would count, told with native calls over the whole text
 * (a JS pass over every line is most of a receive's count on a long inbox). Null when that is not certain: a line
 * that is not a message, or may give a key twice, or an escaped colon; the caller then judges line by line.
 */
export function unreadMessagesIn(text: string): number | null {
  if (text.indexOf("u003a") !== -1 || text.indexOf("u003A") !== -1) return null;
  const lines = text.split("\n");
  const messages: Message[] = [];
  for (let i = 0; i < lines.length; i++) {
    const message = parseMessage(lines[i]!);
    if (message === null) return null;
    messages.push(message);
  }
  // As in surelyNoRepeatedKey, over all lines at once: their colons are those of their parses (one per key, plus
  // those in strings) only when no line gives a key twice.
  if (text.split(":").length !== JSON.stringify(messages).split(":").length) return null;
  let moved = false;
  for (let i = 0; i < messages.length && !moved; i++) moved = messages[i]!.moves !== undefined;
  const superseded = moved ? supersededIn(messages) : null;
  const used = new Set<string>();
  let unread = 0;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    const key = deliveryKey(message);
    if (!message.read_flag && !used.has(key) && superseded?.[i] !== true) unread++;
    used.add(key);
  }
  return unread;
}

/** Which of these lines a later copy of the same message, moved more times, supersedes (see MovedCopies in store/file/mailbox.ts). */
function supersededIn(messages: readonly Message[]): boolean[] {
  const superseded: boolean[] = [];
  const mostMovesAfter = new Map<string, number>();
  for (let i = messages.length - 1; i >= 0; i--) {
    const { id } = messages[i]!;
    const moves = movesOf(messages[i]!);
    const after = mostMovesAfter.get(id);
    superseded[i] = after !== undefined && after > moves;
    if (after === undefined || moves > after) mostMovesAfter.set(id, moves);
  }
  return superseded;
}

export interface ReadFlag {
  /** Byte offset of the flag's value (`true` or `false`) within the scanned buffer. */
  offset: number;
  read: boolean;
}

/** What a byte scan of one line finds at the top level of its JSON object. */
export interface LineScan {
  /** The read_flag when there is exactly one and it is a literal `true` or `false`. */
  flag: ReadFlag | null;
  /**
   * The id's string literal, quotes included, as bytes[idStart, idEnd); -1 when the id is missing or not a string.
   * Ids are named by their canonical JSON text (`"AbCd1234"`): see idText and idBytes.
   */
  idStart: number;
  idEnd: number;
  /** The literal has an escape, so its bytes are not yet its canonical text. */
  idEscaped: boolean;
  /** The first top-level key found twice (id and read_flag are always checked, other keys when asked), or null. */
  duplicateKey: string | null;
  /** The top-level `moves` (see movesOf): 0 when there is none. A value that is not a plain count makes no message. */
  moves: number;
  /**
   * How many top-level keys the line has, repeats included: JSON.parse keeps one of each, so a line whose parse has
   * fewer gives a key twice (a check that needs no second scan, for counting).
   */
  keys: number;
}

/** The id of a scanned line as canonical JSON text, or null when it has none (or an invalid escape). */
export function idText(bytes: Uint8Array, scan: LineScan): string | null {
  if (scan.idStart < 0) return null;
  const raw = keyDecoder.decode(bytes.subarray(scan.idStart, scan.idEnd));
  if (!scan.idEscaped) return raw;
  try {
    return JSON.stringify(JSON.parse(raw) as string);
  } catch {
    return null;
  }
}

/** The id of a scanned line as the UTF-8 bytes of its canonical JSON text, without a copy when it has no escape. */
export function idBytes(bytes: Uint8Array, scan: LineScan): Uint8Array | null {
  if (scan.idStart < 0) return null;
  if (!scan.idEscaped) return bytes.subarray(scan.idStart, scan.idEnd);
  const text = idText(bytes, scan);
  return text === null ? null : new TextEncoder().encode(text);
}

/** The delivery key of a scanned line (see deliveryKey) as UTF-8 bytes: its id's, without a copy, unless it was moved. */
export function keyBytes(bytes: Uint8Array, scan: LineScan): Uint8Array | null {
  const id = idBytes(bytes, scan);
  if (id === null || scan.moves === 0) return id;
  const suffix = keyEncoder.encode(`#${scan.moves}`);
  const key = new Uint8Array(id.length + suffix.length);
  key.set(id);
  key.set(suffix, id.length);
  return key;
}

/** The delivery key of a scanned line as text (see deliveryKey), or null when it has no id. */
export function keyText(bytes: Uint8Array, scan: LineScan): string | null {
  const id = idText(bytes, scan);
  return id === null || scan.moves === 0 ? id : `${id}#${scan.moves}`;
}

const keyEncoder = new TextEncoder();

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const READ_FLAG_KEY = new TextEncoder().encode("read_flag");
const ID_KEY = new TextEncoder().encode("id");
const MOVES_KEY = new TextEncoder().encode("moves");
const TRUE_BYTES = new TextEncoder().encode("true");
const FALSE_BYTES = new TextEncoder().encode("false");
/** What replaces `false` when a message is marked read: same length, so the mark is an in-place overwrite. */
export const READ_MARK = new TextEncoder().encode("true ");
const keyDecoder = new TextDecoder();

function isSpace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0d || byte === 0x0a;
}

function matchesAt(bytes: Uint8Array, at: number, expected: Uint8Array): boolean {
  if (at + expected.length > bytes.length) return false;
  for (let i = 0; i < expected.length; i++) if (bytes[at + i] !== expected[i]) return false;
  return true;
}

/** Set by stringEnd for the string it just walked: whether it holds an escape. */
let walkedEscape = false;

/**
 * The next backslash at or after `from` in `bytes`, or -1: remembered across calls, so scanning a region line by
 * line searches each of its bytes for a backslash once, however few the backslashes (most lines have none).
 */
let backslashesIn: Uint8Array | null = null;
let backslashFrom = 0;
let backslashAt = -1;
function nextBackslash(bytes: Uint8Array, from: number): number {
  if (bytes !== backslashesIn || from < backslashFrom || (backslashAt !== -1 && backslashAt < from)) {
    backslashesIn = bytes;
    backslashAt = bytes.indexOf(BACKSLASH, from);
  }
  backslashFrom = from;
  return backslashAt;
}

/**
 * The end of the JSON string whose opening quote is at `at`: the index of its closing quote (or `end`, or past it
 * when the line ends in a backslash). Quotes and backslashes are found by the native indexOf, not a byte loop: in a
 * process that lives a few milliseconds, interpreted code costs ~0.1 µs a byte, and a receive scans whole lines.
 */
function stringEnd(bytes: Uint8Array, at: number, end: number): number {
  walkedEscape = false;
  let i = at + 1;
  let quote = -1;
  for (;;) {
    if (i >= end) return i;
    if (quote < i) quote = bytes.indexOf(QUOTE, i);
    const backslash = nextBackslash(bytes, i);
    if (backslash === -1 || backslash >= end || (quote !== -1 && quote < backslash)) return quote === -1 || quote >= end ? end : quote;
    walkedEscape = true;
    i = backslash + 2;
  }
}

function isAscii(bytes: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i <= to; i++) if (bytes[i]! >= 0x80) return false;
  return true;
}

/** Whether bytes[a, aEnd] and bytes[b, bEnd] are the same bytes. */
function sameBytes(bytes: Uint8Array, a: number, aEnd: number, b: number, bEnd: number): boolean {
  if (aEnd - a !== bEnd - b) return false;
  for (let i = 0; a + i <= aEnd; i++) if (bytes[a + i] !== bytes[b + i]) return false;
  return true;
}

/** The key in bytes[open, close] (quotes included) as canonical JSON text; escapes decoded, so `"\u0069d"` is `"id"`. */
function objectKeyText(bytes: Uint8Array, open: number, close: number, escaped: boolean): string {
  const raw = keyDecoder.decode(bytes.subarray(open, close + 1));
  if (!escaped) return raw;
  try {
    return JSON.stringify(JSON.parse(raw) as string);
  } catch {
    return raw;
  }
}

const READ_FLAG_TEXT = '"read_flag"';
const ID_TEXT = '"id"';
const MOVES_TEXT = '"moves"';

/** Which of the keys the scan cares about the string in bytes[open, close] is, if any. */
function knownKey(bytes: Uint8Array, open: number, close: number, escaped: boolean): "read_flag" | "id" | "moves" | null {
  if (escaped) {
    const key = objectKeyText(bytes, open, close, true);
    return key === READ_FLAG_TEXT ? "read_flag" : key === ID_TEXT ? "id" : key === MOVES_TEXT ? "moves" : null;
  }
  const length = close - open - 1;
  if (length === READ_FLAG_KEY.length && matchesAt(bytes, open + 1, READ_FLAG_KEY)) return "read_flag";
  if (length === ID_KEY.length && matchesAt(bytes, open + 1, ID_KEY)) return "id";
  if (length === MOVES_KEY.length && matchesAt(bytes, open + 1, MOVES_KEY)) return "moves";
  return null;
}

/**
 * The move count written at `at`: digits with no leading zero (or a lone 0), at most 15 of them, then the end of the
 * value (`,`, `}` or a space). -1 for anything else (a fraction, an exponent, a string): as JSON.parse reads those
 * differently or not as a count, such a line is no message.
 */
function moveCountAt(bytes: Uint8Array, at: number, end: number): number {
  let i = at;
  let count = 0;
  while (i < end && bytes[i]! >= 0x30 && bytes[i]! <= 0x39) count = count * 10 + (bytes[i++]! - 0x30);
  const digits = i - at;
  if (digits === 0 || digits > 15 || (digits > 1 && bytes[at] === 0x30)) return -1;
  return i < end && (bytes[i] === 0x2c || bytes[i] === 0x7d || isSpace(bytes[i])) ? count : -1;
}

/**
 * Walks the top level of the JSON object in bytes[start, end) without parsing it, so a receive can pass over read
 * lines cheaply and mark one read by overwriting five bytes. Keys and values inside strings or nested objects are
 * never mistaken for top-level ones; an escaped key (`"read\u005fflag"`) is the key it decodes to, as for
 * JSON.parse. UTF-8 continuation bytes are never ASCII, so a byte scan is exact.
 *
 * A key given twice is where a byte scan and JSON.parse (which keeps the last value) could disagree: a line with
 * read_flag or id twice has no flag here, so it is never a message; `allKeys` checks every key, for a line about to
 * be delivered.
 */
export function scanLine(bytes: Uint8Array, start: number, end: number, allKeys = false): LineScan {
  let depth = 0;
  let flag: ReadFlag | null = null;
  let flags = 0;
  let idStart = -1;
  let idEnd = -1;
  let idEscaped = false;
  let ids = 0;
  let duplicateKey: string | null = null;
  let keyCount = 0;
  let moves = 0;
  let movesGiven = 0;
  // Every key is checked against the earlier ones by its bytes while all are plain ASCII (most lines): no string is
  // made per key, which for a count over a long inbox cost more than the rest of the scan. A key that is escaped or
  // not ASCII turns the check into one by decoded text, for every key of the line.
  const plainKeys: number[] = [];
  let keys: Set<string> | null = null;
  let i = start;
  while (i < end) {
    const byte = bytes[i]!;
    if (byte !== QUOTE) {
      if (byte === 0x7b || byte === 0x5b) depth++;
      else if (byte === 0x7d || byte === 0x5d) depth--;
      i++;
      continue;
    }
    const open = i;
    const close = stringEnd(bytes, open, end);
    i = close + 1;
    if (depth !== 1) continue;
    let j = i;
    while (j < end && isSpace(bytes[j])) j++;
    if (bytes[j] !== COLON) continue;
    j++;
    while (j < end && isSpace(bytes[j])) j++;
    keyCount++;
    const escaped = walkedEscape;
    if (allKeys) {
      if (keys === null && !escaped && isAscii(bytes, open, close)) {
        for (let k = 0; k < plainKeys.length; k += 2) {
          if (sameBytes(bytes, plainKeys[k]!, plainKeys[k + 1]!, open, close)) duplicateKey ??= objectKeyText(bytes, open, close, false);
        }
        plainKeys.push(open, close);
      } else {
        if (keys === null) {
          keys = new Set<string>();
          for (let k = 0; k < plainKeys.length; k += 2) keys.add(objectKeyText(bytes, plainKeys[k]!, plainKeys[k + 1]!, false));
        }
        const key = objectKeyText(bytes, open, close, escaped);
        if (keys.has(key)) duplicateKey ??= key;
        keys.add(key);
      }
    }
    const known = knownKey(bytes, open, close, escaped);
    if (known === "read_flag") {
      flags++;
      if (matchesAt(bytes, j, FALSE_BYTES)) flag = { offset: j, read: false };
      else if (matchesAt(bytes, j, TRUE_BYTES)) flag = { offset: j, read: true };
      else flag = null;
      if (flags === 2) duplicateKey ??= READ_FLAG_TEXT;
    } else if (known === "id") {
      ids++;
      if (ids === 2) duplicateKey ??= ID_TEXT;
      if (bytes[j] === QUOTE) {
        idStart = j;
        idEnd = stringEnd(bytes, j, end) + 1;
        idEscaped = walkedEscape;
      } else idStart = idEnd = -1;
    } else if (known === "moves") {
      movesGiven++;
      if (movesGiven === 2) duplicateKey ??= MOVES_TEXT;
      moves = moveCountAt(bytes, j, end);
    }
  }
  if (flags > 1 || ids > 1 || movesGiven > 1 || moves < 0) {
    return { flag: null, idStart: -1, idEnd: -1, idEscaped: false, duplicateKey, moves: 0, keys: keyCount };
  }
  return { flag, idStart, idEnd, idEscaped, duplicateKey, moves, keys: keyCount };
}

/** The top-level read_flag of the JSON object in bytes[start, end): see scanLine. */
export function findReadFlag(bytes: Uint8Array, start: number, end: number): ReadFlag | null {
  return scanLine(bytes, start, end).flag;
}

/** The largest message body accepted, in UTF-8 bytes, by the CLI and the MCP server alike. */
export const MAX_MESSAGE_BYTES = 256 * 1024;

/** What a message's text may be, for the arguments that take one: `what` names it ("The message"). */
export const describeBody = (what: string): string =>
  `${what}: plain text or Markdown, at most ${MAX_MESSAGE_BYTES / 1024} KiB (for more, send a file path)`;

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
