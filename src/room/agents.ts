/**
 * An agent's row in the room, from what the store knows of it (its registration, its mailbox, its delivery record,
 * its claims) and what this machine's tmux says (the agent CLI in its pane, whether its window is still there): its
 * last activity, and whether it needs looking at (a problem). Pure: the facts and the time are given.
 */
import type { AgentEntry } from "../store/store.ts";
import type { Activity, AgentRow, ClaimRow, MailItem, Problem } from "./model.ts";
import type { Thresholds } from "./thresholds.ts";

/** What the store's mail says of one mailbox, kept up to date by the room as its feed brings changes. */
export interface MailboxFacts {
  /** The newest read time of a copy in it. */
  read: string | null;
  /** The newest acknowledgement (ack, a reply) of a copy in it. */
  acknowledged: string | null;
  /** The newest time one of its hooks put mail in front of it. */
  hook: string | null;
  /** The channel of the newest notification of its mail. */
  channel: string | null;
}

/** What tmux on this machine says of an agent's pane. */
export interface PaneFacts {
  /** The agent CLI holding it (claude, codex, gemini), or null. */
  cli: string | null;
  /** Whether its window is still there; null when not known (another host, no tmux server recorded). */
  open: boolean | null;
  /** The shell in its foreground when no program runs there (`bash`): no agent CLI to put mail before; else null. */
  shell: string | null;
}

export interface AgentInput {
  name: string;
  project: string | null;
  entry: AgentEntry | undefined;
  /** Its copies that are unread (stored or notified, not archived), each with the latest event of its delivery record. */
  unread: { item: MailItem; last: { event: string; reason?: string } | undefined }[];
  mailbox: MailboxFacts | undefined;
  /** When it last sent mail. */
  sent: string | undefined;
  claims: readonly ClaimRow[];
  pane: PaneFacts;
  host: string | null;
  reach: string;
  human: boolean;
  now: number;
  thresholds: Thresholds;
}

const isPerson = (entry: AgentEntry | undefined) => entry?.pane === "person";

/** The claims an agent holds: live ones, and those that ended only because it is gone (stored until released or swept). */
const heldClaims = (claims: readonly ClaimRow[]) => claims.filter((claim) => claim.state === "live" || claim.holder_gone).length;

/** The newest of what the store knows it did. */
export function activityOf(input: Pick<AgentInput, "entry" | "mailbox" | "sent" | "claims">): Activity | null {
  const { entry, mailbox, sent, claims } = input;
  const candidates: [string | null | undefined, Activity["what"]][] = [
    [sent, "sent"],
    [mailbox?.read, "read"],
    [mailbox?.acknowledged, "acknowledged"],
    [mailbox?.hook, "hook"],
    [entry?.updated_at, "status"],
    // On Redis every command records it; the file store reports its registration's time.
    [entry?.last_seen !== entry?.updated_at ? entry?.last_seen : null, "command"],
  ];
  for (const claim of claims) candidates.push([claim.claimed_at, "claimed"]);
  let best: Activity | null = null;
  for (const [at, what] of candidates) {
    if (typeof at !== "string" || !Number.isFinite(Date.parse(at))) continue;
    if (best === null || Date.parse(at) > Date.parse(best.at)) best = { at, what };
  }
  return best;
}

const plural = (count: number, one: string) => `${count} ${one}${count === 1 ? "" : "s"}`;

/** How long ago, in a few characters: `40s`, `21m`, `3h`, `2d`. */
function span(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172800) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86400)}d`;
}

/** Whether the agent needs looking at, and why (see Problem); gone first, then unreachable, then stalled. */
export function problemOf(input: AgentInput): Problem | null {
  const { entry, unread, claims, pane, now, thresholds } = input;
  if (input.human || isPerson(entry) || entry === undefined) return null;
  const held = heldClaims(claims);
  const holding = [unread.length > 0 && plural(unread.length, "unread message"), held > 0 && `holds ${plural(held, "claim")}`]
    .filter(Boolean)
    .join(", ");
  if (holding !== "") {
    if (entry.status === "offline") return { kind: "gone", reason: `offline; ${holding}` };
    if (pane.open === false) return { kind: "gone", reason: `its window is closed; ${holding}` };
  }
  if (unread.length === 0) return null;
  for (const { last } of unread) {
    if (last?.event === "unreachable") return { kind: "unreachable", reason: last.reason ?? "no channel can put its mail in front of it" };
    if (last?.event === "held") return { kind: "unreachable", reason: "Claude Code holds its mail for its user's approval" };
  }
  if (pane.shell !== null) return { kind: "unreachable", reason: `its pane runs a shell (${pane.shell}), no agent CLI` };
  if (entry.status !== "ready" && entry.status !== "work") return null;
  let oldest = Number.POSITIVE_INFINITY;
  for (const { item } of unread) oldest = Math.min(oldest, Date.parse(item.created_at));
  const read = input.mailbox?.read ? Date.parse(input.mailbox.read) : Number.NEGATIVE_INFINITY;
  if (!(now - oldest >= thresholds.stalledMs) || read >= oldest) return null;
  return {
    kind: "stalled",
    reason: `${plural(unread.length, "unread message")}, the oldest for ${span(now - oldest)}; nothing read since`,
  };
}

export function agentRow(input: AgentInput): AgentRow {
  const activity = activityOf(input);
  return {
    name: input.name,
    project: input.project,
    status: input.entry?.status ?? null,
    cli: input.pane.cli,
    unread: input.unread.length,
    last_seen: activity?.at ?? null,
    activity: activity?.what ?? null,
    host: input.entry?.host ?? null,
    reach: input.reach,
    channel: input.mailbox?.channel ?? null,
    claims: heldClaims(input.claims),
    problem: problemOf(input),
    human: input.human,
    person: isPerson(input.entry),
  };
}
