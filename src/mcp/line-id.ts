/**
 * The request id of a line too long to parse, read from the few kilobytes kept of its start and end: the error that
 * answers it then names it, and the client fails that call at once instead of waiting for a reply that never comes.
 * Clients differ in where they put the id: serde-based ones first (`{"jsonrpc":"2.0","id":7,"method":…`), the
 * TypeScript SDK last (`{"method":…,"params":{…},"jsonrpc":"2.0","id":7}`), so both ends are read. Only a top-level
 * `id` counts: a tool's `id` argument, inside params, is not the request's.
 */

/** A JSON-RPC id: a string or a number, or null when none can be found. */
export type RequestId = string | number | null;

/** A scalar JSON value at the very start of `text`, its number or string complete (followed by more text). */
const SCALAR = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?(?=[\s,}])|"(?:[^"\\\u0000-\u001f]|\\.)*"|null\b)/;

/** `"id": <scalar>` as the last member of the object the line ends with, which is the top-level one. */
const LAST_MEMBER_ID = /[{,]\s*"id"\s*:\s*(-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\\u0000-\u001f]|\\.)*"|null)\s*\}\s*$/;

function asId(literal: string): RequestId | undefined {
  const value: unknown = JSON.parse(literal);
  return typeof value === "string" || typeof value === "number" || value === null ? value : undefined;
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && " \t\r\n".includes(text[at]!)) at++;
  return at;
}

/** The index just past the string that opens at `at`, or -1 when `text` ends inside it. */
function stringEnd(text: string, at: number): number {
  for (let i = at + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === '"') return i + 1;
  }
  return -1;
}

/** The index just past the value that starts at `at` (nested objects and arrays included), or -1 when cut off. */
function valueEnd(text: string, at: number): number {
  let depth = 0;
  for (let i = at; i < text.length; i++) {
    const char = text[i]!;
    if (char === '"') {
      i = stringEnd(text, i) - 1;
      if (i < 0) return -1;
      if (depth === 0) return i + 1;
    } else if (char === "{" || char === "[") depth++;
    else if (char === "}" || char === "]") {
      if (depth === 0) return i;
      if (--depth === 0) return i + 1;
    } else if (depth === 0 && (char === "," || " \t\r\n".includes(char))) return i;
  }
  return -1;
}

/** The top-level id among the members the line's start holds whole, walking them in order. */
function idFromStart(head: string): RequestId | undefined {
  let at = skipSpace(head, 0);
  if (head[at] !== "{") return undefined;
  at++;
  for (;;) {
    at = skipSpace(head, at);
    if (head[at] !== '"') return undefined;
    const keyEnd = stringEnd(head, at);
    if (keyEnd < 0) return undefined;
    const key = head.slice(at, keyEnd);
    at = skipSpace(head, keyEnd);
    if (head[at] !== ":") return undefined;
    at = skipSpace(head, at + 1);
    if (key === '"id"') {
      const scalar = SCALAR.exec(head.slice(at, at + 1024));
      return scalar ? asId(scalar[0]) : undefined;
    }
    at = valueEnd(head, at);
    if (at < 0) return undefined;
    at = skipSpace(head, at);
    if (head[at] !== ",") return undefined;
    at++;
  }
}

/** The request id of a line of which only `head` (its start) and `tail` (its end) were kept; null when neither says. */
export function idOfCutLine(head: string, tail: string): RequestId {
  const fromStart = idFromStart(head);
  if (fromStart !== undefined) return fromStart;
  const last = LAST_MEMBER_ID.exec(tail);
  return (last ? asId(last[1]!) : undefined) ?? null;
}
