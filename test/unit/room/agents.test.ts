/**
 * An agent's row in the room (src/room/agents.ts): its last activity, whatever it was, and its problem — gone first,
 * then unreachable, then stalled — with the thresholds of src/room/thresholds.ts.
 */
import { describe, expect, test } from "bun:test";
import { activityOf, type AgentInput, agentRow, problemOf } from "../../../src/room/agents.ts";
import type { ClaimRow, MailItem } from "../../../src/room/model.ts";
import { DEFAULT_THRESHOLDS, thresholdsOf } from "../../../src/room/thresholds.ts";
import type { AgentEntry } from "../../../src/store/store.ts";

const NOW = Date.parse("2026-01-01T12:00:00.000Z");
const at = (secondsAgo: number) => new Date(NOW - secondsAgo * 1000).toISOString();

const entry = (extra: Partial<AgentEntry> = {}): AgentEntry => ({
  name: "bob",
  status: "ready",
  since: at(3600),
  updated_at: at(3600),
  pane: "%1",
  ...extra,
});
const copy = (secondsAgo: number): MailItem => ({
  id: `m${secondsAgo}`,
  mailbox: "bob",
  from: "alice",
  created_at: at(secondsAgo),
  subject: null,
  type: "message",
  priority: "normal",
  needs_response: false,
  thread: `m${secondsAgo}`,
  in_reply_to: null,
  body: "hi",
  archived: false,
  delivery: { state: "stored", at: at(secondsAgo) },
});
const claim = (extra: Partial<ClaimRow> = {}): ClaimRow => ({
  id: "c1",
  path: "src/**",
  holder: "bob",
  project: null,
  shared: false,
  reason: null,
  claimed_at: at(120),
  expires_at: at(-3600),
  waiters: [],
  state: "live",
  why: null,
  holder_gone: false,
  ...extra,
});
const input = (extra: Partial<AgentInput> = {}): AgentInput => ({
  name: "bob",
  project: null,
  entry: entry(),
  unread: [],
  mailbox: { read: null, acknowledged: null, hook: null, channel: null },
  sent: undefined,
  claims: [],
  pane: { cli: "claude", open: true, shell: null },
  host: null,
  reach: "pull",
  human: false,
  now: NOW,
  thresholds: { stalledMs: 60_000, unansweredMs: 60_000 },
  ...extra,
});

describe("last activity", () => {
  test("the newest of what the store knows, and what it was: sent, read, acknowledged, hook, claimed, status, command", () => {
    expect(activityOf(input())).toEqual({ at: at(3600), what: "status" });
    expect(activityOf(input({ sent: at(30) }))).toEqual({ at: at(30), what: "sent" });
    const box = { read: at(20), acknowledged: at(25), hook: at(10), channel: "stop-hook" };
    expect(activityOf(input({ sent: at(30), mailbox: box }))).toEqual({ at: at(10), what: "hook" });
    expect(activityOf(input({ sent: at(30), mailbox: box, claims: [claim({ claimed_at: at(5) })] }))).toEqual({
      at: at(5),
      what: "claimed",
    });
    // On Redis every command records its time (last_seen), apart from the registration's.
    expect(activityOf(input({ entry: entry({ last_seen: at(2) }) }))).toEqual({ at: at(2), what: "command" });
    expect(activityOf(input({ entry: undefined }))).toBeNull();
  });
});

describe("problems", () => {
  test("stalled: ready or working, unread mail older than the threshold, nothing read since; not before, not once read", () => {
    expect(problemOf(input({ unread: [{ item: copy(90), last: undefined }] }))).toEqual({
      kind: "stalled",
      reason: "1 unread message, the oldest for 1m; nothing read since",
    });
    expect(problemOf(input({ unread: [{ item: copy(30), last: undefined }] }))).toBeNull();
    const readSince = { read: at(10), acknowledged: null, hook: null, channel: null };
    expect(problemOf(input({ unread: [{ item: copy(90), last: undefined }], mailbox: readSince }))).toBeNull();
    expect(problemOf(input({ unread: [{ item: copy(90), last: undefined }], entry: entry({ status: "work" }) }))?.kind).toBe("stalled");
  });

  test("unreachable: what the delivery record says (no channel, held by Claude), or a shell in its pane", () => {
    const unread = (last: { event: string; reason?: string } | undefined) => [{ item: copy(5), last }];
    expect(problemOf(input({ unread: unread({ event: "unreachable", reason: "an idle Gemini CLI takes no mail" }) }))).toEqual({
      kind: "unreachable",
      reason: "an idle Gemini CLI takes no mail",
    });
    expect(problemOf(input({ unread: unread({ event: "held" }) }))?.reason).toBe("Claude Code holds its mail for its user's approval");
    expect(problemOf(input({ unread: unread(undefined), pane: { cli: null, open: true, shell: "bash" } }))?.reason).toBe(
      "its pane runs a shell (bash), no agent CLI",
    );
    expect(problemOf(input({ pane: { cli: null, open: true, shell: "bash" } }))).toBeNull();
  });

  test("gone: offline or its window closed, while holding unread mail or claims; gone outranks the rest", () => {
    const offline = input({ entry: entry({ status: "offline" }), unread: [{ item: copy(600), last: { event: "held" } }] });
    expect(problemOf(offline)).toEqual({ kind: "gone", reason: "offline; 1 unread message" });
    const closed = input({
      pane: { cli: null, open: false, shell: null },
      claims: [claim(), claim({ id: "c2", state: "ended", why: "expired" })],
    });
    expect(problemOf(closed)).toEqual({ kind: "gone", reason: "its window is closed; holds 1 claim" });
    // A claim that ended because its holder went offline is still its own, until released or swept.
    const ended = claim({ state: "ended", why: "its holder went offline", holder_gone: true });
    expect(problemOf(input({ entry: entry({ status: "offline" }), claims: [ended] }))).toEqual({
      kind: "gone",
      reason: "offline; holds 1 claim",
    });
    expect(problemOf(input({ entry: entry({ status: "offline" }) }))).toBeNull();
  });

  test("the person, another person and an agent that never registered have none", () => {
    const unread = [{ item: copy(600), last: undefined }];
    expect(problemOf(input({ unread, human: true }))).toBeNull();
    expect(problemOf(input({ unread, entry: entry({ pane: "person" }) }))).toBeNull();
    expect(problemOf(input({ unread, entry: undefined }))).toBeNull();
  });

  test("the row carries it all: problem, activity, channel, live claims, person", () => {
    const row = agentRow(
      input({
        unread: [{ item: copy(90), last: undefined }],
        claims: [claim()],
        mailbox: { read: null, acknowledged: null, hook: null, channel: "claude-inbox" },
      }),
    );
    expect(row).toMatchObject({
      unread: 1,
      claims: 1,
      channel: "claude-inbox",
      activity: "claimed",
      problem: { kind: "stalled" },
      person: false,
    });
  });
});

describe("thresholds", () => {
  test("from the environment, as durations; refused with the variable's name; defaults otherwise", () => {
    expect(thresholdsOf({})).toEqual(DEFAULT_THRESHOLDS);
    expect(thresholdsOf({ AGENTMAIL_STALLED_AFTER: "3s", AGENTMAIL_UNANSWERED_AFTER: "2m" })).toEqual({
      stalledMs: 3_000,
      unansweredMs: 120_000,
    });
    expect(() => thresholdsOf({ AGENTMAIL_STALLED_AFTER: "soon" })).toThrow(/AGENTMAIL_STALLED_AFTER takes a duration/);
  });
});
