/**
 * What needs the person (src/room/needs.ts): their unread mail, questions unanswered past the threshold, bounced and
 * stuck mail, claims waited for; each gone once it is dealt with.
 */
import { expect, test } from "bun:test";
import type { DeliveryEvent } from "../../../src/mail/arrival.ts";
import type { ClaimRow, MailItem } from "../../../src/room/model.ts";
import { mayNeed, needsOf } from "../../../src/room/needs.ts";

const NOW = Date.parse("2026-01-01T12:00:00.000Z");
const at = (secondsAgo: number) => new Date(NOW - secondsAgo * 1000).toISOString();
const item = (id: string, extra: Partial<MailItem> = {}): MailItem => ({
  id,
  mailbox: "bob",
  from: "alice",
  created_at: at(600),
  subject: id,
  type: "message",
  priority: "normal",
  needs_response: false,
  thread: id,
  in_reply_to: null,
  body: "",
  archived: false,
  delivery: { state: "stored", at: at(600) },
  ...extra,
});
const needs = (items: MailItem[], options: { answered?: string[]; events?: Record<string, DeliveryEvent>; claims?: ClaimRow[] } = {}) =>
  needsOf({
    human: "ana",
    candidates: items.filter((each) => mayNeed(each, "ana", options.events?.[each.id])),
    answered: new Set(options.answered ?? []),
    lastEvent: (each) => options.events?.[each.id],
    claims: options.claims ?? [],
    now: NOW,
    thresholds: { stalledMs: 60_000, unansweredMs: 300_000 },
  });

test("the person's unread mail first, then questions past the threshold, stuck mail, bounces, claims waited for", () => {
  const rows = needs(
    [
      item("bounce", { delivery: { state: "bounced", at: at(60), reason: "its time to live ran out" } }),
      item("mine", { mailbox: "ana" }),
      item("question", { needs_response: true }),
      item("young", { needs_response: true, created_at: at(60) }),
      item("stuck"),
      item("plain"),
    ],
    {
      events: { stuck: { id: "stuck", event: "unreachable", at: at(500), reason: "an idle Gemini CLI" } },
      claims: [
        {
          id: "c",
          path: "src/**",
          holder: "bob",
          project: null,
          shared: false,
          reason: null,
          claimed_at: at(30),
          expires_at: at(-60),
          waiters: ["dave"],
          state: "live",
          why: null,
          holder_gone: false,
        },
      ],
    },
  );
  expect(rows.map((row) => [row.kind, row.id ?? row.preview, row.why])).toEqual([
    ["to-you", "mine", "to you, unread"],
    ["question", "question", "needs a response from bob, unanswered for 10m"],
    ["undeliverable", "stuck", "an idle Gemini CLI"],
    ["bounced", "bounce", "bounced: its time to live ran out"],
    ["claim", "src/**", "dave waits for bob's claim"],
  ]);
});

test("each leaves once dealt with: read, answered, acknowledged, archived, delivered, an old bounce", () => {
  expect(needs([item("mine", { mailbox: "ana", delivery: { state: "read", at: at(10) } })])).toEqual([]);
  expect(needs([item("question", { needs_response: true })], { answered: ["question"] })).toEqual([]);
  expect(needs([item("question", { needs_response: true, delivery: { state: "acknowledged", at: at(10) } })])).toEqual([]);
  expect(needs([item("question", { needs_response: true, archived: true })])).toEqual([]);
  expect(needs([item("old", { delivery: { state: "bounced", at: at(2 * 86_400) } })])).toEqual([]);
  // A question the person asked is theirs to wait for, not to answer.
  expect(needs([item("asked", { needs_response: true, from: "ana" })])).toEqual([]);
});
