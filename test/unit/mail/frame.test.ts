import { describe, expect, test } from "bun:test";
import { announces, arrivalOf, byMessage, effectOn, parseEvent, serializeEvent, type DeliveryEvent } from "../../../src/mail/arrival.ts";
import { createMessage, type Message } from "../../../src/mail/message.ts";
import { budgetOf, composeMail, DEFAULT_BUDGET, frameText } from "../../../src/mail/frame.ts";

const mail = (from: string, body: string, fields: object = {}): Message => createMessage(from, "bob", body, new Date(), fields);

describe("the token budget of a frame or hook", () => {
  test("defaults are 5 messages and 4,000 characters; the environment sets others; a bad value keeps the default", () => {
    expect(DEFAULT_BUDGET).toEqual({ messages: 5, chars: 4000, windowMs: 60_000 });
    expect(budgetOf({})).toEqual(DEFAULT_BUDGET);
    expect(budgetOf({ AGENTMAIL_DELIVERY_MESSAGES: "2", AGENTMAIL_DELIVERY_CHARS: "900", AGENTMAIL_DELIVERY_WINDOW: "5" })).toEqual({
      messages: 2,
      chars: 900,
      windowMs: 5000,
    });
    expect(budgetOf({ AGENTMAIL_DELIVERY_MESSAGES: "0", AGENTMAIL_DELIVERY_CHARS: "lots", AGENTMAIL_DELIVERY_WINDOW: "-1" })).toEqual(
      DEFAULT_BUDGET,
    );
  });

  test("mail that fits is shown whole, each in the receive format, and nothing is listed", () => {
    const messages = [mail("alice", "one"), mail("carol", "two", { subject: "Build" })];
    const composed = composeMail(messages, DEFAULT_BUDGET);
    expect(composed.text).toBe(
      `From: alice\nID: ${messages[0]!.id}\n\n> one\n\nFrom: carol\nID: ${messages[1]!.id}\nSubject: Build\n\n> two\n`,
    );
    expect([...composed.shown.values()]).toEqual(["whole", "whole"]);
  });

  test("a burst of 50: at most N shown, the rest listed by subject while they fit, then counted; the text stays within K", () => {
    const messages = Array.from({ length: 50 }, (_, i) => mail(`agent${i}`, `body ${i} `.repeat(20), { subject: `Subject ${i}` }));
    const budget = { messages: 5, chars: 2000, windowMs: 60_000 };
    const composed = composeMail(messages, budget);
    expect(composed.text.length).toBeLessThanOrEqual(2000);
    const kinds = [...composed.shown.values()];
    expect(composed.shown.size).toBe(50);
    expect(kinds.filter((kind) => kind === "whole").length).toBe(5);
    expect(kinds.slice(5).every((kind) => kind === "listed" || kind === "counted")).toBe(true);
    expect(kinds).toContain("counted");
    expect(composed.text).toContain("(45 more unread, not shown here: run agentmail receive to read each)");
    expect(composed.text).toContain(`- ${messages[5]!.id} from agent5: Subject 5`);
    expect(composed.text).toMatch(/- and \d+ more \(agentmail inbox lists them\)\n$/);
  });

  test("a body over the budget is cut with a note that says how to read it whole; the first message is always shown", () => {
    const long = mail("alice", "x".repeat(10_000));
    const composed = composeMail([long, mail("carol", "short")], { messages: 5, chars: 1000, windowMs: 60_000 });
    expect(composed.shown.get(long.id)).toBe("cut");
    expect(composed.text).toContain(`of 10000 characters shown; the whole message: agentmail read ${long.id}]`);
    expect(composed.text.length).toBeLessThanOrEqual(1000);
    expect([...composed.shown.values()]).toEqual(["cut", "listed"]);
  });

  test("a native frame says it is agentmail mail, for whom, from whom, not from the user, and how to answer", () => {
    const messages = [mail("alice", "PR #12 is ready"), mail("alice", "and #13")];
    const { text, shown } = frameText("bob", messages, DEFAULT_BUDGET);
    expect(text).toStartWith(
      'agentmail: 2 messages for you ("bob") from alice: mail between agents, not typed by your user; ' +
        'each message\'s text is quoted, its every line starting with ">".\n\n',
    );
    expect(text).toContain("\n> PR #12 is ready\n");
    expect(text).toEndWith('Messages shown here are read now. Answer with: agentmail reply <id> "<text>".');
    expect(shown.size).toBe(2);
    expect(frameText("bob", messages, { messages: 5, chars: 500, windowMs: 60_000 }).text.length).toBeLessThanOrEqual(500);
  });

  test("the budget is counted as shown: bodies of escaped characters stay within it (U+202E x 60,000, \\x01 x 200,000)", () => {
    const bidi = mail("alice", "\u202e".repeat(60_000));
    const controls = mail("carol", "\u0001".repeat(200_000));
    for (const [message, shownAs] of [
      [bidi, "\\u202e"],
      [controls, "\\x01"],
    ] as const) {
      const { text, shown } = frameText("bob", [message], DEFAULT_BUDGET);
      expect(text.length).toBeLessThanOrEqual(DEFAULT_BUDGET.chars);
      expect(shown.get(message.id)).toBe("cut");
      const kept = Number(/\[cut: (\d+) of (\d+) characters shown/.exec(text)![1]);
      // What the note says was kept is what shows: each escape counted as the characters it takes.
      expect(text.split(shownAs).length - 1).toBe(kept);
      expect(kept).toBeGreaterThan(DEFAULT_BUDGET.chars / shownAs.length - 200);
    }
    const both = composeMail([bidi, controls], DEFAULT_BUDGET);
    expect(both.text.length).toBeLessThanOrEqual(DEFAULT_BUDGET.chars);
    expect([...both.shown.values()]).toEqual(["cut", "listed"]);
  });

  test("a frame names five senders at most and counts the others", () => {
    const messages = Array.from({ length: 8 }, (_, i) => mail(`agent${i}`, "hi"));
    const { text } = frameText("bob", messages, DEFAULT_BUDGET);
    expect(text).toStartWith('agentmail: 8 messages for you ("bob") from agent0, agent1, agent2, agent3, agent4 and 3 others: ');
  });
});

describe("the delivery record's events", () => {
  const event = (fields: Partial<DeliveryEvent>): DeliveryEvent => ({
    id: "Ab3dE5gH",
    event: "notified",
    at: "2026-01-01T00:00:00.000Z",
    ...fields,
  });

  test("a notification (but a typed or an MCP count), a hold or an approval announces; a refusal, a drop or a failure withdraws", () => {
    expect(announces(event({ channel: "claude-inbox", shown: "listed" }))).toBe(true);
    expect(announces(event({ channel: "stop-hook", shown: "counted" }))).toBe(true);
    expect(announces(event({ channel: "typed", shown: "counted" }))).toBe(false);
    // An MCP receive's "N more unread" counts the mail: the hooks still bring each message.
    expect(announces(event({ channel: "mcp", shown: "counted" }))).toBe(false);
    // The sender's events leave the announced set alone (a message acknowledged or bounced is read).
    expect(effectOn(event({ event: "acknowledged" }))).toBe("=");
    expect(effectOn(event({ event: "bounced", reason: "r" }))).toBe("=");
    expect(announces(event({ event: "held" }))).toBe(true);
    expect(announces(event({ event: "delivered" }))).toBe(true);
    expect(effectOn(event({ event: "refused" }))).toBe("-");
    expect(effectOn(event({ event: "denied" }))).toBe("=");
    expect(effectOn(event({ event: "dropped" }))).toBe("-");
    expect(effectOn(event({ event: "unreachable" }))).toBe("=");
  });

  test("a line round-trips with its keys in order; a line that is no event is passed over", () => {
    const line = serializeEvent(event({ reason: "r", channel: "codex-steer", pane: "%1", shown: "whole" }));
    expect(line).toBe(
      '{"id":"Ab3dE5gH","event":"notified","at":"2026-01-01T00:00:00.000Z","channel":"codex-steer","shown":"whole","pane":"%1","reason":"r"}',
    );
    expect(parseEvent(line)).toEqual(JSON.parse(line));
    expect(parseEvent("not json")).toBeNull();
    expect(parseEvent('{"id":1}')).toBeNull();
    expect(parseEvent("null")).toBeNull();
  });

  test("a message's state is its latest event, but an unreachable after a notification does not undo it", () => {
    const notified = event({ channel: "claude-inbox" });
    const unreachable = event({ event: "unreachable", reason: "gone" });
    expect(arrivalOf(undefined)).toBeNull();
    expect(arrivalOf([notified, unreachable])).toBe(notified);
    expect(arrivalOf([unreachable])).toBe(unreachable);
    const held = event({ event: "held" });
    expect(arrivalOf([notified, held])).toBe(held);
    // A typed count is a notification too; the sender's acknowledged and bounced are not about the arrival.
    const typed = event({ channel: "typed", shown: "counted" });
    expect(arrivalOf([typed, unreachable])).toBe(typed);
    expect(arrivalOf([notified, event({ event: "acknowledged" }), event({ event: "bounced" })])).toBe(notified);
    expect([...byMessage([notified, event({ id: "other" }), held]).keys()]).toEqual(["Ab3dE5gH", "other"]);
  });
});
