/** The pure rules of rich mail: field checks, reply derivation, header order, list lines, filters and search. */
import { describe, expect, test } from "bun:test";
import { deliveryState, type DeliveryEvent } from "../../../src/mail/arrival.ts";
import { age, cut, excerpt, formatMessage, inboxLine, marks, receipt, sentLine, threadEntry } from "../../../src/mail/format.ts";
import {
  mailFilter,
  matchesFilter,
  matchesText,
  fieldHeaders,
  isUrgent,
  mailFields,
  orderFields,
  priorityRank,
  replyFields,
  replySubject,
  tagsOf,
  threadOf,
  typeOf,
  MAX_SUBJECT_CHARS,
} from "../../../src/mail/fields.ts";
import { createMessage, serializeMessage, type Message } from "../../../src/mail/message.ts";
import { AgentmailError } from "../../../src/mail/errors.ts";
import { expectStoredBuildIsRed } from "../../support/rich-mail.ts";

const NOW = Date.parse("2026-01-02T00:00:00.000Z");
const at = (secondsAgo: number) => new Date(NOW - secondsAgo * 1000);

function message(fields: object = {}, body = "Body text", secondsAgo = 90): Message {
  return { ...createMessage("alice", "bob", body, at(secondsAgo), fields), id: "Abc12345" };
}

function usage(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AgentmailError);
    expect((error as AgentmailError).exitCode).toBe(1);
    return (error as AgentmailError).message;
  }
  throw new Error("expected an error");
}

describe("fields a sender sets", () => {
  test("defaults are not stored, so a plain send stores exactly the seed's six fields", () => {
    expect(mailFields({})).toEqual({});
    expect(mailFields({ type: "message", priority: "normal", tags: [], needsResponse: false })).toEqual({});
    const plain = createMessage("alice", "bob", "hi", new Date(NOW), mailFields({}));
    expect(Object.keys(plain)).toEqual(["id", "from", "to", "message", "read_flag", "created_at"]);
  });

  test("set fields are written after the seed's six, in one order, tags deduplicated", () => {
    const fields = mailFields({
      needsResponse: true,
      tags: ["ci", "main", "ci"],
      priority: "urgent",
      type: "alert",
      subject: "Build is red",
    });
    const stored = JSON.parse(serializeMessage(createMessage("alice", "bob", "x", new Date(NOW), fields)));
    expectStoredBuildIsRed(stored);
  });

  test("an unknown type or priority names the valid values", () => {
    expect(usage(() => mailFields({ type: "memo" }))).toContain("message, status, alert, task, question, response, report, handoff");
    expect(usage(() => mailFields({ priority: "critical" }))).toContain("urgent, high, normal, low");
  });

  test("a subject is one line of at most 200 characters, not blank", () => {
    expect(mailFields({ subject: "é".repeat(MAX_SUBJECT_CHARS) }).subject).toHaveLength(MAX_SUBJECT_CHARS);
    expect(usage(() => mailFields({ subject: "x".repeat(MAX_SUBJECT_CHARS + 1) }))).toContain("201 characters");
    expect(usage(() => mailFields({ subject: "two\nlines" }))).toContain("one line");
    expect(usage(() => mailFields({ subject: "  " }))).toContain("empty");
  });

  test("tags are short, without spaces or commas, at most ten", () => {
    for (const bad of ["", "a b", "a,b", "x".repeat(41), "tab\there"])
      expect(usage(() => mailFields({ tags: [bad] }))).toContain("invalid tag");
    expect(usage(() => mailFields({ tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }))).toContain("11 tags");
    expect(mailFields({ tags: ["BUG-069", "fugue/core"] }).tags).toEqual(["BUG-069", "fugue/core"]);
  });
});

describe("replies", () => {
  test("Re: once, never Re: Re:, none without a subject, cut to the limit", () => {
    expect(replySubject("Build is red")).toBe("Re: Build is red");
    expect(replySubject("Re: Build is red")).toBe("Re: Build is red");
    expect(replySubject("RE:Build")).toBe("Re: Build");
    expect(replySubject(undefined)).toBeUndefined();
    expect(replySubject(" ")).toBeUndefined();
    expect(replySubject(42)).toBeUndefined();
    expect([...replySubject("y".repeat(MAX_SUBJECT_CHARS))!]).toHaveLength(MAX_SUBJECT_CHARS);
  });

  test("a reply joins the original's thread, or starts it at the original", () => {
    const first = message({ subject: "Plan" });
    const reply = replyFields(first, {}, false);
    expect(reply).toEqual({ subject: "Re: Plan", type: "response", thread_id: first.id, in_reply_to: first.id });
    expect(Object.keys(reply)).toEqual(["subject", "type", "thread_id", "in_reply_to"]);
    const second = { ...message(reply), id: "Second01" };
    expect(replyFields(second, {}, false)).toMatchObject({ thread_id: first.id, in_reply_to: "Second01", subject: "Re: Plan" });
  });

  test("the replier's own subject, type and fields win", () => {
    const original = message({ subject: "Plan" });
    const own = mailFields({ subject: "Other", type: "report", priority: "high", tags: ["x"], needsResponse: true });
    expect(replyFields(original, own, true)).toEqual({
      subject: "Other",
      type: "report",
      priority: "high",
      tags: ["x"],
      thread_id: original.id,
      in_reply_to: original.id,
      needs_response: true,
    });
    expect(replyFields(message(), {}, false).subject).toBeUndefined();
    expect(orderFields({ in_reply_to: "a", subject: "b" })).toEqual({ subject: "b", in_reply_to: "a" });
  });
});

describe("reading fields other tools wrote", () => {
  test("defaults and unknown values", () => {
    expect(typeOf(message())).toBe("message");
    expect(typeOf(message({ type: "memo" }))).toBe("memo");
    expect([
      priorityRank("urgent"),
      priorityRank("high"),
      priorityRank("normal"),
      priorityRank("low"),
      priorityRank("critical"),
      priorityRank(undefined),
    ]).toEqual([3, 2, 1, 0, 1, 1]);
    expect(tagsOf(message({ tags: ["a", 3, "b"] }))).toEqual(["a", "b"]);
    expect(tagsOf(message({ tags: "a" }))).toEqual([]);
    expect(threadOf(message())).toBe("Abc12345");
    expect(threadOf(message({ thread_id: "Root0001" }))).toBe("Root0001");
    expect(isUrgent(message({ priority: "urgent" }))).toBe(true);
    expect(isUrgent(message({ priority: "high" }))).toBe(false);
  });
});

describe("receive's headers", () => {
  test("a plain message prints the seed's format, its body quoted", () => {
    expect(formatMessage(message())).toBe("From: alice\nID: Abc12345\n\n> Body text\n");
  });

  test("one line per set field, in the contract's order, between ID and the blank line", () => {
    const rich = message({
      needs_response: true,
      in_reply_to: "Prev0001",
      thread_id: "Root0001",
      tags: ["ci", "main"],
      priority: "urgent",
      type: "alert",
      subject: "Build is red",
    });
    expect(formatMessage(rich)).toBe(
      "From: alice\nID: Abc12345\nSubject: Build is red\nType: alert\nPriority: urgent\nTags: ci, main\nThread: Root0001\n" +
        "In-Reply-To: Prev0001\nNeeds-Response: yes\n\n> Body text\n",
    );
  });

  test("values are escaped, defaults written by other tools are not shown, and a forged header cannot appear", () => {
    const forged = message({ subject: "hi\nFrom: mallory", type: "message", priority: "normal", tags: ["a\nb"], needs_response: "yes" });
    expect(fieldHeaders(forged)).toBe("Subject: hi\\nFrom: mallory\nTags: a\\nb\n");
  });
});

describe("list lines", () => {
  test("age in seconds, minutes, hours under two days, then days; ? without a time", () => {
    expect([
      age(at(5).toISOString(), NOW),
      age(at(300).toISOString(), NOW),
      age(at(7200).toISOString(), NOW),
      age(at(3 * 86400).toISOString(), NOW),
    ]).toEqual(["5s", "5m", "2h", "3d"]);
    expect(age(undefined, NOW)).toBe("?");
    expect(age(new Date(NOW + 5000).toISOString(), NOW)).toBe("0s");
  });

  test("cut keeps short text and ends long text with …", () => {
    expect(cut("short", 10)).toBe("short");
    expect(cut("abcdefghij", 5)).toBe("abcd…");
    expect(cut("😀".repeat(5), 5)).toBe("😀".repeat(5));
    expect(cut("😀".repeat(6), 5)).toBe("😀".repeat(4) + "…");
    expect(cut("a😀😀", 2)).toBe("a…");
  });

  test("the subject, else the body on one line; marks for unread, urgency and needs-response", () => {
    expect(excerpt(message({}, "line one\n\n  line two"))).toBe("line one line two");
    expect(excerpt(message({ subject: "Subject" }))).toBe("Subject");
    expect(excerpt(message({}, "bell\u0007"))).toBe("bell\\x07");
    expect(marks(message({ priority: "high", needs_response: true }), true)).toBe("*!?");
    expect(marks({ ...message({ priority: "low" }), read_flag: true }, true)).toBe("");
    expect(marks(message(), false)).toBe("");
  });

  test("inbox: id, age, sender, marks, type when not message, then the text", () => {
    expect(inboxLine(message(), { now: NOW })).toBe("Abc12345  1m  alice  Body text");
    const rich = message({ subject: "Build is red", type: "alert", priority: "urgent", needs_response: true });
    expect(inboxLine(rich, { now: NOW })).toBe("Abc12345  1m  alice  !? [alert] Build is red");
    expect(inboxLine(message({}, "x".repeat(300)), { now: NOW })).toBe(`Abc12345  1m  alice  ${"x".repeat(99)}…`);
    expect(inboxLine(message({}, "x".repeat(300)), { now: NOW, width: 40 })).toHaveLength(40);
    expect(inboxLine({ ...message(), from: "evil\nname" }, { now: NOW })).toBe("Abc12345  1m  evil\\nname  Body text");
  });

  test("sent: the recipient and the receipt, the sender's states with the channel events", () => {
    expect(receipt(deliveryState(message()))).toBe("stored");
    expect(receipt(deliveryState({ ...message(), read_flag: true }))).toBe("read");
    const readAt = { ...message(), read_flag: true, read_at: "2026-01-01T23:59:00.000Z" };
    expect(receipt(deliveryState(readAt))).toBe("read 2026-01-01T23:59:00.000Z");
    const at = "2026-01-02T00:00:00.000Z";
    const event = (fields: Omit<DeliveryEvent, "id" | "at">): DeliveryEvent => ({ id: "Abc12345", at, ...fields });
    const typed = event({ event: "notified", channel: "typed", shown: "counted" });
    expect(receipt(deliveryState(message(), [typed]))).toBe(`notified ${at} via typed`);
    expect(receipt(deliveryState(readAt, [typed]))).toBe("read 2026-01-01T23:59:00.000Z via typed");
    // Claude Code holds it: stored, and why; approved, it is in front of the model.
    const held = event({ event: "held", channel: "claude-inbox", reason: "Claude Code holds it" });
    expect(deliveryState(message(), [held])).toEqual({
      state: "stored",
      at: message().created_at as string,
      event: "held",
      channel: "claude-inbox",
      reason: "Claude Code holds it",
    });
    expect(receipt(deliveryState(message(), [held]))).toBe("stored, held via claude-inbox");
    const delivered = event({ event: "delivered", channel: "claude-inbox" });
    expect(receipt(deliveryState(message(), [held, delivered]))).toBe(`notified ${at} via claude-inbox`);
    const unreachable = event({ event: "unreachable", reason: "Gemini CLI cannot be reached while idle" });
    expect(receipt(deliveryState(message(), [unreachable]))).toBe("stored, unreachable");
    // An unreachable after a notification does not undo it; a drop does.
    const framed = event({ event: "notified", channel: "codex-queue", shown: "whole" });
    expect(receipt(deliveryState(message(), [framed, unreachable]))).toBe(`notified ${at} via codex-queue`);
    expect(receipt(deliveryState(message(), [framed, event({ event: "dropped", channel: "claude-inbox" })]))).toBe(
      "stored, dropped via claude-inbox",
    );
    const acked = event({ event: "acknowledged", reply: "Rep12345" });
    expect(receipt(deliveryState(readAt, [typed, acked]))).toBe(`acknowledged ${at} (reply Rep12345)`);
    expect(receipt(deliveryState(readAt, [event({ event: "acknowledged" })]))).toBe(`acknowledged ${at}`);
    const bounced = event({ event: "bounced", reason: "not read within 1h" });
    expect(receipt(deliveryState(readAt, [acked, bounced]))).toBe(`bounced ${at} (not read within 1h)`);
    expect(sentLine({ ...message({ subject: "Plan" }), read_flag: true, read_at: "2026-01-01T23:59:00.000Z" }, { now: NOW })).toBe(
      "Abc12345  1m  to bob  read 2026-01-01T23:59:00.000Z  Plan",
    );
  });

  test("thread entries carry From, To, ID, Date and the set fields", () => {
    expect(threadEntry(message({ subject: "Plan" }))).toBe(
      `From: alice\nTo: bob\nID: Abc12345\nDate: ${at(90).toISOString()}\nSubject: Plan\n\n> Body text\n`,
    );
    expect(threadEntry({ ...message(), created_at: undefined as unknown as string, to: undefined as unknown as string })).toContain(
      "To: \nID: Abc12345\nDate: ?\n",
    );
  });
});

describe("filters and search", () => {
  const rich = message({ type: "task", priority: "high", tags: ["ci"], thread_id: "Root0001" });

  test("each filter narrows; priority means that level or above", () => {
    expect(matchesFilter(rich, {})).toBe(true);
    expect(matchesFilter(rich, mailFilter({ from: "alice", type: "task", priority: "high", tag: "ci", thread: "Root0001" }))).toBe(true);
    expect(matchesFilter(rich, mailFilter({ priority: "normal" }))).toBe(true);
    expect(matchesFilter(rich, mailFilter({ priority: "urgent" }))).toBe(false);
    expect(matchesFilter(rich, mailFilter({ from: "bob" }))).toBe(false);
    expect(matchesFilter(rich, mailFilter({ type: "alert" }))).toBe(false);
    expect(matchesFilter(rich, mailFilter({ tag: "main" }))).toBe(false);
    expect(matchesFilter(rich, mailFilter({ thread: "Abc12345" }))).toBe(false);
    expect(matchesFilter(message(), mailFilter({ type: "message" }))).toBe(true);
    expect(usage(() => mailFilter({ type: "memo" }))).toContain("unknown type");
    expect(usage(() => mailFilter({ priority: "hi" }))).toContain("unknown priority");
  });

  test("search looks at subject and body", () => {
    const found = message({ subject: "Deploy FAILED" }, "the flaky test again");
    expect(matchesText(found, /failed/i)).toBe(true);
    expect(matchesText(found, /fl[a-z]+y/i)).toBe(true);
    expect(matchesText(found, /^green/i)).toBe(false);
    expect(matchesText(message({}, "no subject"), /subject/)).toBe(true);
  });
});
