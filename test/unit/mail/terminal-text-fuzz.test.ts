/**
 * terminalText and terminalLine look for active characters with a loop before they compile their regular expression
 * (a receive prints short names and bodies); the result must be what the expressions alone give, on any text.
 */
import { describe, expect, test } from "bun:test";
import { terminalLine, terminalText } from "../../../src/mail/terminal-text.ts";

const IN_TEXT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
const IN_LINE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
const escaped = (char: string) =>
  char === "\n"
    ? "\\n"
    : char === "\t"
      ? "\\t"
      : char === "\r"
        ? "\\r"
        : char.charCodeAt(0) <= 0xff
          ? `\\x${char.charCodeAt(0).toString(16).padStart(2, "0")}`
          : `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;

/** Characters at and around every boundary of the active ranges, and plain ones. */
const CODES = [0, 8, 9, 10, 11, 13, 31, 32, 65, 126, 127, 0x9f, 0xa0, 0xe9, 0x2029, 0x202a, 0x202e, 0x202f, 0x2065, 0x2066];
const ALPHABET = [...CODES, 0x2069, 0x206a, 0x1f600].map((code) => String.fromCodePoint(code));

describe("the loop before the expression", () => {
  test("gives what the expressions alone give, on 5,000 random texts, short and past the loop's limit", () => {
    let state = 7;
    const next = () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32;
    for (let n = 0; n < 5_000; n++) {
      const length = n % 50 === 0 ? 4000 + Math.floor(next() * 200) : Math.floor(next() * 40);
      let text = "";
      for (let i = 0; i < length; i++) text += next() < 0.7 ? "a" : ALPHABET[Math.floor(next() * ALPHABET.length)];
      expect(terminalText(text)).toBe(text.replace(IN_TEXT, escaped));
      expect(terminalLine(text)).toBe(text.replace(IN_LINE, escaped));
    }
  });
});
