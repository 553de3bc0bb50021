/**
 * How `watch` lays the room out on a terminal: a header, the agents, the feed of mail (newest first), or one
 * thread; and the key line. Pure: the room's data, the size and the time are given; text is made safe and fitted
 * by the screen (output/screen.ts), which every line goes through.
 */
import { age } from "../mail/format.ts";
import { terminalLine } from "../mail/terminal-text.ts";
import { takeColumns, type Line, type Segment, type Style } from "../output/screen.ts";
import type { AgentRow, ClaimRow, Delivery, MailItem, MailmanView, MessageView, NeedRow, Problem } from "../room/model.ts";
import { previewOf } from "../room/preview.ts";
import type { RoomFilter } from "../room/room.ts";

const pad2 = (value: number) => String(value).padStart(2, "0");

/** `12:03:04` today, `01-31 12:03` before, `?` without a usable time: local time, as the person's clock shows it. */
export function clock(iso: string | null, now: Date): string {
  const time = iso === null ? Number.NaN : Date.parse(iso);
  if (!Number.isFinite(time)) return "?";
  const date = new Date(time);
  const sameDay = date.toDateString() === now.toDateString();
  const hm = `${pad2(date.getHours())}:${pad2(date.getMinutes())}`;
  return sameDay ? `${hm}:${pad2(date.getSeconds())}` : `${pad2(date.getMonth() + 1)}-${pad2(date.getDate())} ${hm}`;
}

/** A copy's state as one word: its delivery state, or `archived`. */
export const stateWord = (item: { archived: boolean; delivery: Delivery }) => (item.archived ? "archived" : item.delivery.state);

const STATE_STYLE: Record<string, Style> = { stored: "yellow", read: "dim", archived: "dim", bounced: "red" };

/** `!` urgent or high, `?` needs a response. */
function marks(item: { priority: string; needs_response: boolean }): string {
  return (item.priority === "urgent" || item.priority === "high" ? "!" : "") + (item.needs_response ? "?" : "");
}

export interface Header {
  store: string;
  human: string | null;
  copies: number;
}

/** What the header counts: the rows of the agent list, the copies the mail counts, what needs the person, the mailman. */
export interface Counts {
  agents: number;
  needs: number;
  mailman: MailmanView | null;
}

/** The mailman in a few words: whether it runs for this store, and whether its last sweep failed. */
export function mailmanWord(mailman: MailmanView | null): string {
  if (mailman === null) return "";
  if (!mailman.running) return "no mailman";
  const failing = mailman.last_failure_at !== null && (mailman.last_sweep_at === null || mailman.last_failure_at > mailman.last_sweep_at);
  return failing ? "mailman failing" : "mailman on";
}

export function headerLine(header: Header, counts: Counts): Line {
  const who = header.human === null ? "read-only (no AGENTMAIL_HUMAN)" : `as ${header.human}`;
  const needs = counts.needs > 0 ? ` · ${counts.needs} need you` : "";
  return {
    style: "reverse",
    segments: [
      {
        text: [
          `agentmail watch · ${who}${needs}`,
          `${counts.agents} agents`,
          `${header.copies} copies`,
          mailmanWord(counts.mailman),
          header.store,
        ]
          .filter(Boolean)
          .join(" · "),
      },
    ],
  };
}

/** The mark of an agent that needs looking at: `!` gone, `?` unreachable, `~` stalled. */
const PROBLEM_MARK: Record<Problem["kind"], string> = { gone: "!", unreachable: "?", stalled: "~" };

/** Which agents of the list show, and which one is selected (the list has the keys when `focused`). */
export interface AgentWindow {
  first: number;
  selected: number | null;
  focused: boolean;
}

/** Each activity in at most six columns, for the SEEN column. */
const ACTIVITY_WORD: Record<NonNullable<AgentRow["activity"]>, string> = {
  sent: "sent",
  read: "read",
  acknowledged: "ack",
  hook: "hook",
  claimed: "claim",
  status: "status",
  command: "cmd",
};

/** What an agent did last, and how long ago: `3s sent`. */
export function seenOf(agent: AgentRow, now: Date): string {
  if (agent.last_seen === null) return "-";
  return `${age(agent.last_seen, now.getTime())}${agent.activity ? ` ${ACTIVITY_WORD[agent.activity]}` : ""}`;
}

/**
 * The agent list: a heading (with which agents show, when not all do) and a window of `rows - 1` agents; the agents
 * beyond are reached by moving the selection (Tab gives the list the keys).
 */
export function agentLines(
  agents: AgentRow[],
  rows: number,
  now: Date,
  window: AgentWindow = { first: 0, selected: null, focused: false },
): Line[] {
  const hosts = agents.some((agent) => agent.host !== null);
  const projects = agents.some((agent) => agent.project !== null);
  const room = Math.max(0, rows - 1);
  const first = Math.max(0, Math.min(window.first, agents.length - room));
  const shown = agents.slice(first, first + room);
  // Which agents show, when not all do: `8-13/13` (Tab gives the list the keys to reach the others).
  const range = shown.length < agents.length ? ` ${first + 1}-${first + shown.length}/${agents.length}` : "";
  const head: Line = {
    style: window.focused ? "reverse" : "bold",
    segments: [
      { text: `  AGENT${range}`, width: 17 },
      ...(projects ? [{ text: "PROJECT", width: 10 }] : []),
      { text: "STATUS", width: 8 },
      { text: "CLI", width: 7 },
      { text: "UNREAD", width: 7, right: true },
      { text: " SEEN", width: 11 },
      ...(hosts ? [{ text: "HOST", width: 12 }] : []),
      { text: "REACH OR PROBLEM" },
    ],
  };
  const lines = [head];
  shown.forEach((agent, i) => {
    const problem = agent.problem;
    const selected = window.selected === first + i;
    lines.push({
      style: selected && window.focused ? "reverse" : undefined,
      segments: [
        { text: problem ? PROBLEM_MARK[problem.kind] : selected ? ">" : " ", width: 2, style: "red" },
        {
          text: agent.human ? `${agent.name} (you)` : agent.person ? `${agent.name} (person)` : agent.name,
          width: 15,
          style: agent.human ? "cyan" : undefined,
        },
        ...(projects ? [{ text: agent.project ?? "-", width: 10 }] : []),
        { text: agent.status ?? "-", width: 8, style: agent.status === "offline" ? "dim" : agent.status === "ready" ? "green" : undefined },
        { text: agent.cli ?? "-", width: 7 },
        { text: String(agent.unread), width: 7, right: true, style: agent.unread > 0 ? "yellow" : undefined },
        { text: ` ${seenOf(agent, now)}`, width: 11 },
        ...(hosts ? [{ text: agent.host ?? "-", width: 12 }] : []),
        problem
          ? { text: `${problem.kind}: ${problem.reason}`, style: "red" as Style }
          : { text: agent.channel ? `${agent.reach} (${agent.channel})` : agent.reach },
      ],
    });
  });
  return lines;
}

const NEED_WORD: Record<NeedRow["kind"], string> = {
  "to-you": "to you",
  question: "question",
  bounced: "bounced",
  undeliverable: "stuck",
  claim: "claim",
};

/** One thing that needs the person: what kind, from whom to whom, the subject, why. */
export function needLine(need: NeedRow, selected: boolean, width: number, now: Date): Line {
  const fixed = 2 + 9 + 11 + 3 + 12 + 5;
  return {
    style: selected ? "reverse" : undefined,
    segments: [
      { text: selected ? "> " : "  ", width: 2 },
      { text: NEED_WORD[need.kind], width: 9, style: need.kind === "to-you" ? "cyan" : "yellow" },
      { text: need.from, width: 11 },
      { text: "→ ", width: 2 },
      { text: need.mailbox, width: 13 },
      { text: need.preview, width: Math.max(10, Math.floor((width - fixed) / 2)) },
      { text: ` ${need.why} · ${age(need.at, now.getTime())}`, style: "dim" },
    ],
  };
}

/** One claim: path, holder, shared or exclusive, time left or why it ended, waiters, reason. */
export function claimLine(claim: ClaimRow, now: Date): Line {
  const left = Date.parse(claim.expires_at) - now.getTime();
  const state =
    claim.state === "live"
      ? `${age(new Date(now.getTime() - Math.max(0, left)).toISOString(), now.getTime())} left`
      : `ended: ${claim.why}`;
  const waiters = claim.waiters.length > 0 ? ` · waiting: ${claim.waiters.join(", ")}` : "";
  return {
    segments: [
      { text: claim.holder_gone ? "! " : "  ", width: 2, style: "red" },
      { text: claim.path, width: 24 },
      { text: claim.holder, width: 14 },
      { text: claim.shared ? "shared" : "exclusive", width: 10 },
      { text: `${state}${waiters}${claim.reason ? ` · ${claim.reason}` : ""}`, style: claim.state === "live" ? undefined : "dim" },
    ],
  };
}

/** The mailman's state in a line: since when it runs, its last sweep, its last failure. */
export function mailmanLine(mailman: MailmanView | null, now: Date): Line {
  const ago = (iso: string | null) => (iso === null ? "-" : `${age(iso, now.getTime())} ago`);
  if (mailman === null) return { segments: [{ text: "mailman: not known here (no local store)", style: "dim" }] };
  if (!mailman.running)
    return { segments: [{ text: "mailman: not running for this store (agents pull their mail: agentmail mailman start)" }] };
  const failure = mailman.last_failure === null ? "" : ` · last failure ${ago(mailman.last_failure_at)}: ${mailman.last_failure}`;
  return {
    segments: [
      {
        text: `mailman: running (pid ${mailman.pid}) since ${clock(mailman.since, now)} · last sweep ${ago(mailman.last_sweep_at)}${failure}`,
      },
    ],
  };
}

/** A section's rule: `── title ───…` across the width. */
export function sectionLine(title: string, width: number, focused = false): Line {
  const text = `── ${title} `;
  return { style: focused ? "reverse" : "bold", segments: [{ text }, { text: "─".repeat(Math.max(0, width - [...text].length)) }] };
}

/** The mail's rule: how many copies the filter lets through, of all the copies the header counts. */
export function ruleLine(filter: RoomFilter, matching: number, total: number, width: number, focused = false): Line {
  const parts = [];
  if (filter.agent !== undefined) parts.push(`agent ${filter.agent}`);
  if (filter.text) parts.push(`text "${filter.text}"`);
  const what = parts.length > 0 ? `mail · ${parts.join(" · ")} · ${matching} of ${total} copies · esc clears` : `mail · ${total} copies`;
  return sectionLine(what, width, focused);
}

/** One copy in the feed: `> 12:03:04 alice → bob  ! task  subject or start of body  stored`. */
export function feedLine(item: MailItem, selected: boolean, width: number, now: Date): Line {
  const type = item.type === "message" ? "" : item.type;
  const fixed = 2 + 9 + 11 + 3 + 11 + 3 + (type ? 10 : 0) + 9;
  const segments: Segment[] = [
    { text: selected ? "> " : "  ", width: 2 },
    { text: clock(item.created_at, now), width: 9 },
    { text: item.from, width: 11 },
    { text: "→ ", width: 2 },
    { text: item.mailbox, width: 12 },
    { text: marks(item), width: 3, style: "red" },
    ...(type ? [{ text: type, width: 10, style: "cyan" as Style }] : []),
    { text: previewOf(item), width: Math.max(1, width - fixed) },
    { text: stateWord(item), width: 9, right: true, style: STATE_STYLE[stateWord(item)] },
  ];
  return { segments, style: selected ? "reverse" : undefined };
}

/** Text that may hold new lines and tabs as screen lines of at most `width` columns, each safe for a terminal. */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const raw of text.split("\n")) {
    let rest = terminalLine(raw.replaceAll("\t", "    "));
    if (rest === "") lines.push("");
    while (rest !== "") {
      const [piece, after] = takeColumns(rest, width);
      lines.push(piece);
      rest = after;
    }
  }
  return lines;
}

/** Text as screen lines of at most `width` columns, broken between words where it can be (an error, a status). */
export function wrapWords(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split("\n")) {
    let line = "";
    for (const word of paragraph.split(" ")) {
      const next = line === "" ? word : `${line} ${word}`;
      if ([...terminalLine(next)].length <= width) {
        line = next;
        continue;
      }
      if (line !== "") lines.push(line);
      // A word longer than the line is cut where it must be.
      const pieces = wrap(word, width);
      line = pieces.pop() ?? "";
      lines.push(...pieces);
    }
    lines.push(line);
  }
  return lines;
}

/** The lines of a thread: each message's header (sender, recipients with their states, time, fields) and body. */
export function threadLines(messages: MessageView[], width: number, now: Date): Line[] {
  const lines: Line[] = [];
  for (const message of messages) {
    const copies = message.copies.map((copy) => `${copy.mailbox} (${stateWord(copy)})`).join(", ");
    const fields = [message.type === "message" ? "" : message.type, message.priority === "normal" ? "" : message.priority]
      .filter(Boolean)
      .join(" ");
    lines.push({
      style: "bold",
      segments: [{ text: `${message.from} → ${copies}  ${clock(message.created_at, now)}  ${message.id}${fields ? `  [${fields}]` : ""}` }],
    });
    if (message.subject !== null) lines.push({ segments: [{ text: `Subject: ${message.subject}`, style: "cyan" }] });
    for (const text of wrap(message.body, Math.max(10, width - 2))) lines.push({ segments: [{ text: `  ${text}` }] });
    lines.push({ segments: [] });
  }
  return lines;
}

export function keyLine(text: string, style?: Style): Line {
  return { style: style ?? "reverse", segments: [{ text }] };
}
