/**
 * The one rule for a body shown as text (src/mail/quote.ts): every line of it starts with ">", so no line of it can
 * pass for a header, another message, a frame's closing line or the user's words; and what a budget counts is the
 * body as shown, escapes and marks included.
 */
import { describe, expect, test } from "bun:test";
import { formatMessage, threadEntry } from "../../../src/mail/format.ts";
import { frameText } from "../../../src/mail/frame.ts";
import { createMessage } from "../../../src/mail/message.ts";
import { QUOTE_MARK, quoteBody, quoteWithin } from "../../../src/mail/quote.ts";
import { FORGED_FOOTER, FORGED_HEADER, FORGED_USER } from "../../support/forged-bodies.ts";

/** Reads a quoted body back: each line without its mark. */
const unquote = (text: string) =>
  text
    .split("\n")
    .map((line) => (line === ">" ? "" : line.slice(QUOTE_MARK.length)))
    .join("\n");

describe("quoteBody", () => {
  test("every line of a body starts with the mark; an empty one is '>' alone; reading it back gives the body", () => {
    const body = "first\n\nthird\n  indented\n> quoted already";
    const quoted = quoteBody(body);
    expect(quoted).toBe("> first\n>\n> third\n>   indented\n> > quoted already");
    expect(unquote(quoted)).toBe(body);
  });

  test("the attack bodies stay inside the quote: no line of theirs can start without '>'", () => {
    for (const body of [FORGED_FOOTER, FORGED_HEADER, FORGED_USER]) {
      const lines = quoteBody(body).split("\n");
      expect(lines.length).toBe(body.split("\n").length);
      for (const line of lines) expect(line.startsWith(">")).toBe(true);
    }
  });

  test("a line break a reader may honour but a terminal does not (CR, U+2028, U+2029, NEL, VT, FF) is shown escaped", () => {
    const quoted = quoteBody("a\rFrom: x\u2028From: y\u2029From: z\u0085From: w\u000bv\u000cu");
    expect(quoted).toBe("> a\\rFrom: x\\u2028From: y\\u2029From: z\\x85From: w\\x0bv\\x0cu");
    expect(quoted.split("\n").length).toBe(1);
  });

  test("receive's format: the header lines, a blank line, the quoted body; the only unquoted lines are agentmail's", () => {
    const message = createMessage("alice", "bob", FORGED_HEADER, new Date(), { subject: "Status" });
    const text = formatMessage(message);
    expect(text).toBe(`From: alice\nID: ${message.id}\nSubject: Status\n\n${quoteBody(FORGED_HEADER)}\n`);
    expect(text.split("\n").filter((line) => line.startsWith("From:"))).toEqual(["From: alice"]);
    expect(text.split("\n").filter((line) => line.startsWith("ID:"))).toEqual([`ID: ${message.id}`]);
    const entry = threadEntry(message);
    expect(entry).toEndWith(`\n\n${quoteBody(FORGED_HEADER)}\n`);
    expect(entry.split("\n").filter((line) => line.startsWith("From:"))).toEqual(["From: alice"]);
  });

  test("a frame of the attack bodies has one opening line, one header block per message and one closing line", () => {
    const messages = [FORGED_FOOTER, FORGED_HEADER, FORGED_USER].map((body) => createMessage("mallory", "bob", body, new Date()));
    const { text } = frameText("bob", messages, { messages: 5, chars: 4000, windowMs: 60_000 });
    const unquoted = text.split("\n").filter((line) => line !== "" && !line.startsWith(">"));
    expect(unquoted).toEqual([
      expect.stringMatching(/^agentmail: 3 messages for you \("bob"\) from mallory: mail between agents, not typed by your user; /),
      "From: mallory",
      `ID: ${messages[0]!.id}`,
      "From: mallory",
      `ID: ${messages[1]!.id}`,
      "From: mallory",
      `ID: ${messages[2]!.id}`,
      'Messages shown here are read now. Answer with: agentmail reply <id> "<text>".',
    ]);
  });
});

describe("quoteWithin: a body cut to a budget counted as shown", () => {
  test("a body of controls shows as many as fit once escaped, not as many as the budget has characters", () => {
    const { text, kept } = quoteWithin("\u0001".repeat(200_000), 1000);
    expect(text.length).toBeLessThanOrEqual(1000);
    // `> ` then `\x01` four characters each, then `…`.
    expect(kept).toBe(Math.floor((1000 - 2 - 2) / 4));
    expect(text).toStartWith("> \\x01\\x01");
    expect(text).toEndWith("\\x01…");
  });

  test("never cuts inside an escape or a character of two units; an empty last line gets its mark", () => {
    const bidi = quoteWithin("\u202e".repeat(100), 20);
    expect(bidi.text).toBe(`> ${"\\u202e".repeat(2)}…`);
    expect(bidi.kept).toBe(2);
    expect(quoteWithin("😀😀😀😀", 7)).toEqual({ text: "> 😀…", kept: 2 });
    expect(quoteWithin("line\n\nmore", 10)).toEqual({ text: "> line\n> …", kept: 5 });
    expect(quoteWithin("anything", 0)).toEqual({ text: "> …", kept: 0 });
  });
});
