/**
 * The one rule for text shown on a terminal: control characters (C0 but newline and tab, DEL, C1) and bidi
 * overrides become visible escapes; everything else, including backslashes, emoji and zero-width joiners, is kept.
 */
import { describe, expect, test } from "bun:test";
import { formatMessage } from "../../../src/mail/format.ts";
import { displayName } from "../../../src/mail/names.ts";
import { jsonForTerminal, terminalLine, terminalText } from "../../../src/mail/terminal-text.ts";
import { log } from "../../../src/output/log.ts";
import { printJson, setSink } from "../../../src/output/streams.ts";

const ESC = "\u001b";
const BEL = "\u0007";
/** Every character that may act on a terminal: C0 but newline and tab, DEL, C1, and the bidi controls. */
const ACTIVE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe("terminalText", () => {
  test("escapes OSC, CSI, CR, backspace and C1; keeps newline and tab", () => {
    const body = `title ${ESC}]0;pwned${BEL} clip ${ESC}]52;c;aGk=${BEL} clear ${ESC}[2J cr\rbs\b c1\u009b31m\nnext\tline`;
    const shown = "title \\x1b]0;pwned\\x07 clip \\x1b]52;c;aGk=\\x07 clear \\x1b[2J cr\\rbs\\x08 c1\\x9b31m\nnext\tline";
    expect(terminalText(body)).toBe(shown);
  });

  test("escapes DCS, NUL, DEL and every C1 control as \\xHH", () => {
    expect(terminalText(`${ESC}P1$r${ESC}\\ \u0000 \u007f \u0080 \u0085 \u009f`)).toBe("\\x1bP1$r\\x1b\\ \\x00 \\x7f \\x80 \\x85 \\x9f");
  });

  test("escapes bidi embeddings, overrides and isolates as \\uHHHH", () => {
    expect(terminalText("a\u202eb\u2066c\u2069d\u202ae")).toBe("a\\u202eb\\u2066c\\u2069d\\u202ae");
  });

  test("keeps what does not act on a terminal: backslashes, emoji, zero-width joiners, marks, U+2028", () => {
    const kept = "C:\\path \\x1b literally 👩‍💻 e\u0301 中文 zw\u200bsp \u200e lrm \u2028 \u00a0 ü";
    expect(terminalText(kept)).toBe(kept);
  });

  test("nothing it returns can act on a terminal, for every code point below U+0100 and the bidi ranges", () => {
    let all = "";
    for (let code = 0; code < 0x100; code++) all += String.fromCharCode(code);
    all += "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069";
    expect(ACTIVE.test(terminalText(all))).toBe(false);
    expect(ACTIVE.test(terminalLine(all))).toBe(false);
  });
});

describe("terminalLine", () => {
  test("also escapes newline and tab, so a name is always one line", () => {
    expect(terminalLine("a\nb\tc\u0001\r")).toBe("a\\nb\\tc\\x01\\r");
    expect(terminalLine("bob smith")).toBe("bob smith");
  });

  test("is what displayName shows for agent names", () => {
    const name = `evil${ESC}]0;x${BEL}\n\u009b`;
    expect(displayName(name)).toBe(terminalLine(name));
  });
});

describe("formatMessage", () => {
  test("escapes the sender, the id and the body, so a body cannot wipe or forge the From: line", () => {
    const message = `\r${ESC}[1AFrom: mallory\nok`;
    const text = formatMessage({ id: `i${ESC}[2J`, from: `al\rice`, to: "bob", message, read_flag: false, created_at: "" });
    expect(text).toBe("From: al\\rice\nID: i\\x1b[2J\n\n> \\r\\x1b[1AFrom: mallory\n> ok\n");
  });
});

describe("jsonForTerminal", () => {
  test("writes DEL, C1 and bidi controls as JSON escapes: the same value, no active byte", () => {
    const value = { message: `a\u009bb\u007fc\u202ed${ESC}e`, from: "x" };
    const json = jsonForTerminal(value);
    expect(JSON.parse(json)).toEqual(value);
    expect(ACTIVE.test(json)).toBe(false);
    expect(json).toBe('{"message":"a\\u009bb\\u007fc\\u202ed\\u001be","from":"x"}');
  });
});

describe("the output layer", () => {
  test("every diagnostic line (errors, warnings, the mailman's log) is shown escaped", () => {
    let stderr = "";
    setSink({ stdout: () => {}, stderr: (text) => void (stderr += text) });
    try {
      log.warn(`cannot open /tmp/${ESC}]0;x${BEL}/store`);
      log.info(`reminded "\u009b2J" in %1`);
    } finally {
      setSink(null);
    }
    expect(stderr).toBe('warning: cannot open /tmp/\\x1b]0;x\\x07/store\nreminded "\\x9b2J" in %1\n');
  });

  test("printJson writes the exact value with no active byte", () => {
    let stdout = "";
    setSink({ stdout: (text) => void (stdout += text), stderr: () => {} });
    try {
      printJson({ message: "a\u009bb" });
    } finally {
      setSink(null);
    }
    expect(stdout).toBe('{"message":"a\\u009bb"}\n');
  });
});
