/**
 * How `watch` lays the room out on a terminal: a header, the agents, the feed of mail (newest first), or one
 * thread; and the key line. Pure: the room's data, the size and the time are given; text is made safe and fitted
 * by the screen (output/screen.ts), which every line goes through.
 */
import { age } from "../mail/format.ts";
import { terminalLine } from "../mail/terminal-text.ts";
import { takeColumns, type Line, type Segment, type Style } from "../output/screen.ts";
import type { AgentRow, Delivery, MailItem, MessageView } from "../room/model.ts";
import { previewOf, type RoomFilter } from "../room/room.ts";

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

export function headerLine(header: Header, agents: number): Line {
  const who = header.human === null ? "read-only (no AGENTMAIL_HUMAN)" : `as ${header.human}`;
  return {
    style: "reverse",
    segments: [{ text: `agentmail watch · ${who} · ${agents} agents · ${header.copies} copies · ${header.store}` }],
  };
}

export function agentLines(agents: AgentRow[], rows: number, now: Date): Line[] {
  const hosts = agents.some((agent) => agent.host !== null);
  const head: Line = {
    style: "bold",
    segments: [
      { text: "AGENT", width: 15 },
      { text: "STATUS", width: 8 },
      { text: "CLI", width: 8 },
      { text: "UNREAD", width: 7, right: true },
      { text: " SEEN", width: 7 },
      ...(hosts ? [{ text: "HOST", width: 12 }] : []),
      { text: "REACH" },
    ],
  };
  const lines = [head];
  for (const agent of agents.slice(0, Math.max(0, rows - 1))) {
    const seen = agent.last_seen === null ? "-" : age(agent.last_seen, now.getTime());
    lines.push({
      segments: [
        { text: agent.human ? `${agent.name} (you)` : agent.name, width: 15, style: agent.human ? "cyan" : undefined },
        { text: agent.status ?? "-", width: 8, style: agent.status === "offline" ? "dim" : agent.status === "ready" ? "green" : undefined },
        { text: agent.cli ?? "-", width: 8 },
        { text: String(agent.unread), width: 7, right: true, style: agent.unread > 0 ? "yellow" : undefined },
        { text: ` ${seen}`, width: 7 },
        ...(hosts ? [{ text: agent.host ?? "-", width: 12 }] : []),
        { text: agent.reach },
      ],
    });
  }
  if (agents.length > rows - 1)
    lines[lines.length - 1] = { segments: [{ text: `… ${agents.length - rows + 2} more agents`, style: "dim" }] };
  return lines;
}

export function ruleLine(filter: RoomFilter, shown: number, width: number): Line {
  const parts = [];
  if (filter.agent !== undefined) parts.push(`agent ${filter.agent}`);
  if (filter.text) parts.push(`text "${filter.text}"`);
  const what = parts.length > 0 ? `mail · ${parts.join(" · ")} · esc clears` : "mail";
  const title = `── ${what} (${shown}) `;
  return { style: "bold", segments: [{ text: title }, { text: "─".repeat(Math.max(0, width - [...title].length)) }] };
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
