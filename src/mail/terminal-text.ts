/**
 * Text from other agents (message bodies, ids, window names, and whatever later commands print, such as subjects)
 * is hostile input that must never act on the terminal it is shown on: an OSC sets the window title or the
 * clipboard, a CSI clears the screen, a CR or a backspace overwrites the `From:` line above it, a C1 byte is a CSI
 * of its own, and a bidi override reorders what follows. This is the one place that makes text safe to show.
 *
 * Escapes, written as in a JavaScript string: `\n` and `\t` (only where text must stay on one line), `\r`, `\xHH`
 * for every other C0 control, DEL and the C1 controls U+0080–U+009F, and `\uHHHH` for the bidi embeddings,
 * overrides and isolates (U+202A–U+202E, U+2066–U+2069). A backslash is left as it is, so a body that holds the
 * text `\x1b` looks like one that held ESC: `--json` shows the exact text. Zero-width characters, the LRM/RLM
 * marks and U+2028/U+2029 are kept: they move no cursor and change no terminal state, and joiners are part of
 * emoji and of several scripts.
 */
const ACTIVE_IN_TEXT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
const ACTIVE_IN_LINE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
/** What JSON.stringify leaves raw but a terminal would act on; C0 controls it escapes itself. */
const ACTIVE_IN_JSON = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

const hex = (char: string, width: number) => char.charCodeAt(0).toString(16).padStart(width, "0");

function escapeControl(char: string): string {
  if (char === "\n") return "\\n";
  if (char === "\t") return "\\t";
  if (char === "\r") return "\\r";
  return char.charCodeAt(0) <= 0xff ? `\\x${hex(char, 2)}` : `\\u${hex(char, 4)}`;
}

/** Below this length a loop looks for active characters before any regular expression runs (docs/performance.md). */
const LOOP_LIMIT = 4096;

/** Whether text may hold a character a terminal acts on (lines and tabs count unless `keepLines`). */
function mayBeActive(text: string, keepLines: boolean): boolean {
  if (text.length > LOOP_LIMIT) return true;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20) {
      if (!(keepLines && (code === 0x0a || code === 0x09))) return true;
    } else if (code >= 0x7f && (code <= 0x9f || (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069))) return true;
  }
  return false;
}

/** Text of any length for a terminal: lines and tabs stay, every other control is shown escaped. */
export function terminalText(text: string): string {
  return mayBeActive(text, true) ? text.replace(ACTIVE_IN_TEXT, escapeControl) : text;
}

/** Text that must stay on one line of terse output (a name, an id): newlines and tabs are escaped too. */
export function terminalLine(text: string): string {
  return mayBeActive(text, false) ? text.replace(ACTIVE_IN_LINE, escapeControl) : text;
}

/**
 * A value as one line of JSON that no terminal acts on: the characters JSON.stringify leaves raw but a terminal
 * would act on are written as JSON escapes, so the document parses to exactly the same value.
 */
export function jsonForTerminal(value: unknown): string {
  return JSON.stringify(value).replace(ACTIVE_IN_JSON, (char) => `\\u${hex(char, 4)}`);
}
