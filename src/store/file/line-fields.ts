/**
 * A stored line's fields read from its bytes, without parsing it, where the bytes tell: a scan of a million lines
 * that wants one field of each (a sender's name, an id) pays a few byte compares a line instead of a JSON.parse and
 * the object it makes. In a line with no backslash every quote delimits a string, so `"id":` is a key wherever it
 * stands; a reader that is unsure parses the line.
 */
import { fnv1aOfText } from "./fnv1a.ts";

export const BACKSLASH = 0x5c;
export const NEWLINE = 0x0a;
export const QUOTE = 0x22;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
const COLON = 0x3a;

export const ID_KEY = Buffer.from('"id"');
/** The start of `"moves"` and `"moved_from"`: a line holding neither is a copy stored where it was sent (moves 0). */
export const MOVE_KEYS = Buffer.from('"move');

/** KeyReader: the key is not in the line. */
export const ABSENT = -2;
/** KeyReader: the bytes do not tell (the key's text twice, a space before its colon, a value that is no string). */
export const UNSURE = -1;

/** Where the string found by the last KeyReader.value ends (its closing quote). */
let stringClose = -1;
export const lastStringEnd = (): number => stringClose;

/**
 * Where the string right after a key's colon starts (lastStringEnd(): where it ends), or UNSURE. `length`: how long
 * it usually is (an id, a time), looked at before any search for its end.
 */
function stringAfter(chunk: Buffer, colon: number, end: number, length = -1): number {
  if (chunk[colon] !== COLON || chunk[colon + 1] !== QUOTE) return UNSURE;
  const open = colon + 2;
  stringClose =
    length >= 0 && open + length < end && chunk[open + length] === QUOTE && !holdsQuote(chunk, open, open + length)
      ? open + length
      : chunk.indexOf(QUOTE, open);
  return stringClose === -1 || stringClose >= end ? UNSURE : open;
}

/** Whether bytes [from, to) hold a quote (a loop: cheaper than a native call for a few bytes). */
function holdsQuote(chunk: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (chunk[i] === QUOTE) return true;
  return false;
}

/**
 * The value of one key (quoted) in the lines of chunks read in order (lines may be passed over), where a line has no
 * backslash: where the string's text starts (and lastStringEnd(), where it ends) when the line holds the key's text
 * once, right before a colon and a string; ABSENT or UNSURE otherwise. The search that tells whether a line holds
 * the key twice finds the next line's, which is kept for it, so a line costs one search for the key, not two; and no
 * object is made per line (a scan of a million lines made a million pieces of garbage).
 */
export class KeyReader {
  #chunk: Buffer | null = null;
  #next = -1;

  constructor(readonly key: Buffer) {}

  /** Where the key's colon is in the line [start, end) of `chunk` when it holds the key once; ABSENT or UNSURE. */
  colon(chunk: Buffer, start: number, end: number): number {
    if (chunk !== this.#chunk) {
      this.#chunk = chunk;
      this.#next = chunk.indexOf(this.key, start);
    } else if (this.#next !== -1 && this.#next < start) this.#next = chunk.indexOf(this.key, start);
    const at = this.#next;
    if (at === -1 || at >= end) return ABSENT;
    this.#next = chunk.indexOf(this.key, at + 1);
    return this.#next !== -1 && this.#next < end ? UNSURE : at + this.key.length;
  }

  /** The value's start in the line [start, end) of `chunk`, ABSENT or UNSURE (see above); `length` as its usual length. */
  value(chunk: Buffer, start: number, end: number, length = -1): number {
    const colon = this.colon(chunk, start, end);
    return colon < 0 ? colon : stringAfter(chunk, colon, end, length);
  }
}

/**
 * A message id as a number: an id of eight letters and digits (as agentmail makes them) is its value in base 62 plus
 * one, exact; any other, a negative hash of it, so two such ids with the same number must be compared as text.
 */
export function idNumber(id: string): number {
  return madeIdValue(id) || hashed(id);
}

/**
 * An id as agentmail makes them, eight base-62 digits (0-9, A-Z, a-z), as its value plus one: exact (below 2^48), and
 * never 0, which says the text is not such an id. The one decoding of ids to numbers (idNumber, LineIds, id-map.ts).
 */
export function madeIdValue(id: string): number {
  if (id.length !== 8) return 0;
  let value = 0;
  for (let i = 0; i < 8; i++) {
    const digit = base62(id.charCodeAt(i));
    if (digit === -1) return 0;
    value = value * 62 + digit;
  }
  return value + 1;
}

/** madeIdValue of the eight UTF-8 bytes at bytes[start]. */
function madeIdValueOfBytes(bytes: Uint8Array, start: number): number {
  let value = 0;
  for (let i = start; i < start + 8; i++) {
    const digit = base62(bytes[i]!);
    if (digit === -1) return 0;
    value = value * 62 + digit;
  }
  return value + 1;
}

const base62 = (c: number): number => (c >= 48 && c <= 57 ? c - 48 : c >= 65 && c <= 90 ? c - 55 : c >= 97 && c <= 122 ? c - 61 : -1);

const hashed = (id: string): number => -1 - fnv1aOfText(id);

/** idNumber of the id whose text is the UTF-8 bytes[start, end) (no escape). */
export function idNumberOfBytes(bytes: Buffer, start: number, end: number): number {
  return (end - start === 8 && madeIdValueOfBytes(bytes, start)) || idNumber(bytes.toString("utf8", start, end));
}

/**
 * The next place of some bytes in a chunk at or after a position, searched for again only once passed: each byte
 * of a chunk is searched once per needle, however many lines (an indexOf per line would search to the chunk's end).
 */
export class Next {
  #at = -2;
  constructor(
    readonly chunk: Buffer,
    readonly needle: Buffer | number,
  ) {}

  from(position: number): number {
    if (this.#at === -2 || (this.#at !== -1 && this.#at < position)) this.#at = this.chunk.indexOf(this.needle, position);
    return this.#at;
  }

  /** Whether it occurs in [from, to). */
  within(from: number, to: number): boolean {
    const at = this.from(from);
    return at !== -1 && at < to;
  }
}

/**
 * Which lines of a chunk are plain, asked in order: a line that starts and ends an object and holds no escape and no
 * move (almost every line). In a plain line every quote delimits a string, so a key's bytes are a key wherever they
 * stand, and no key was moved. `flat`: no nested object either (a brace after the line's first), where a key could
 * be another object's. The one statement of the byte fast path's condition; each needle is searched for once a chunk.
 */
export class PlainLines {
  readonly #flat: boolean;
  #chunk: Buffer | null = null;
  #backslashes: Next | null = null;
  #moves: Next | null = null;
  #braces: Next | null = null;

  constructor({ flat = false } = {}) {
    this.#flat = flat;
  }

  /** Whether the line [start, end) of `chunk` (its newline excluded) is plain. */
  isPlain(chunk: Buffer, start: number, end: number): boolean {
    if (chunk !== this.#chunk) {
      this.#chunk = chunk;
      this.#backslashes = new Next(chunk, BACKSLASH);
      this.#moves = new Next(chunk, MOVE_KEYS);
      this.#braces = this.#flat ? new Next(chunk, OPEN_BRACE) : null;
    }
    return (
      chunk[start] === OPEN_BRACE &&
      chunk[end - 1] === CLOSE_BRACE &&
      !this.#backslashes!.within(start, end) &&
      !this.#moves!.within(start, end) &&
      (this.#braces === null || !this.#braces.within(start + 1, end))
    );
  }
}

/** LineIds.of: a plain line that names no id (it is no message). idNumber is never 0. */
export const NO_ID = 0;
/** LineIds.of: the bytes do not tell the line's id; parse it. */
export const UNKNOWN_ID = Number.NaN;

/**
 * The ids of a file's lines read in order, chunk by chunk (line-chunks.ts), from their bytes where a line is plain: an
 * object with no escape and no move (almost every line), whose one `"id":` key is the message's. A million lines
 * cost about two native searches each (the line's end, which the caller finds, and the next `"id"`).
 */
export class LineIds {
  readonly #plain = new PlainLines();
  readonly #key = new KeyReader(ID_KEY);

  /**
   * idNumber of the id of the line [start, end) of `chunk` (its newline excluded), NO_ID, or UNKNOWN_ID. Asked of the
   * lines of a chunk in order.
   */
  of(chunk: Buffer, start: number, end: number): number {
    if (!this.#plain.isPlain(chunk, start, end)) return UNKNOWN_ID;
    const colon = this.#key.colon(chunk, start, end);
    if (colon === ABSENT) return NO_ID;
    if (colon === UNSURE || chunk[colon] !== COLON || chunk[colon + 1] !== QUOTE) return UNKNOWN_ID;
    const open = colon + 2;
    // An id as agentmail makes them, read without a search for its end (no quote is a digit in base 62).
    if (chunk[open + 8] === QUOTE) {
      const value = madeIdValueOfBytes(chunk, open);
      if (value !== 0) return value;
    }
    const close = chunk.indexOf(QUOTE, open);
    return close === -1 || close >= end ? UNKNOWN_ID : idNumberOfBytes(chunk, open, close);
  }
}
