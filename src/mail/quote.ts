/**
 * The one rule for a message body shown as text (receive, read, thread, a reply `send --wait-for` prints, the hooks'
 * output and the mailman's frames): every line of the body is quoted, `> ` before it (`>` alone on an empty line),
 * so no line the body holds can pass for one of agentmail's. A frame's opening line (who sent it, that it is mail
 * between agents and not typed by the user), the `From:` and `ID:` lines, the list of the rest and the closing line
 * never start with `>`; a body cannot make a line that does not. The end of a body is the first line without the
 * mark. To read a body back, take each quoted line without its first two characters (one for `>` alone).
 *
 * The body is terminal-safe first (terminal-text.ts), and the two characters that break a line for some readers but
 * not for a terminal, U+2028 and U+2029, are escaped too (`\u2028`): in the text the only line break is `\n`, and
 * each one is followed by the mark. JSON output (`--json`, the MCP tools) carries the body as a JSON string instead,
 * whose closing quote the body cannot write (JSON escapes it).
 *
 * What is counted against a budget is this quoted text, escapes and marks included (quoteWithin).
 */
import { terminalText } from "./terminal-text.ts";

/** What starts every line of a body shown as text. */
export const QUOTE_MARK = "> ";
/** An empty line of the body: the mark without its space. */
const EMPTY_LINE = ">";

const SEPARATORS = /[\u2028\u2029]/g;
const escapeSeparator = (char: string) => (char === "\u2028" ? "\\u2028" : "\\u2029");

/** The body as it is shown: terminal-safe, every line quoted. */
export function quoteBody(body: string): string {
  const safe = terminalText(body);
  const lines = (safe.includes("\u2028") || safe.includes("\u2029") ? safe.replace(SEPARATORS, escapeSeparator) : safe).split("\n");
  let text = "";
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    text += `${index === 0 ? "" : "\n"}${line === "" ? EMPTY_LINE : QUOTE_MARK + line}`;
  }
  return text;
}

/** Whether `at` splits a surrogate pair (a character of two UTF-16 units). */
function splitsPair(text: string, at: number): boolean {
  if (at <= 0 || at >= text.length) return false;
  const before = text.charCodeAt(at - 1);
  const after = text.charCodeAt(at);
  return before >= 0xd800 && before <= 0xdbff && after >= 0xdc00 && after <= 0xdfff;
}

/**
 * The start of the body, quoted as quoteBody quotes it, in at most `max` characters with the `…` that says it goes
 * on; `kept` is how many characters (UTF-16 units) of the body it shows. Counted after escaping: a body of controls,
 * each shown as four or six characters, shows as many as fit, not as many as the budget has characters. Never cuts
 * inside a character or an escape.
 */
export function quoteWithin(body: string, max: number): { text: string; kept: number } {
  const room = max - 2; // `…`, or ` …` after the mark of an empty line
  const fits = (length: number) => quoteBody(body.slice(0, length)).length <= room;
  // Every character of the body shows as one character or more: no more than `room` of them can fit.
  let low = 0;
  let high = Math.max(0, Math.min(body.length, room));
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (fits(middle)) low = middle;
    else high = middle - 1;
  }
  const kept = splitsPair(body, low) ? low - 1 : low;
  const quoted = quoteBody(body.slice(0, kept));
  return { text: quoted.endsWith(`\n${EMPTY_LINE}`) || quoted === EMPTY_LINE ? `${quoted} …` : `${quoted}…`, kept };
}
