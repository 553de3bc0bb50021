/**
 * What needs the person who runs the agents, first: mail to them they have not read, questions (messages that need
 * a response) nobody answered past the threshold, mail that bounced, mail no channel can put in front of its agent,
 * and agents waiting for a claim. Each row leaves once it is dealt with: read, answered (a reply, or `ack`),
 * archived, delivered, the claim released. Pure: the room keeps the copies that may need the person
 * (`mayNeed`) and hands them in.
 */
import type { DeliveryEvent } from "../mail/arrival.ts";
import type { ClaimRow, MailItem, NeedRow } from "./model.ts";
import { previewOf } from "./preview.ts";
import type { Thresholds } from "./thresholds.ts";

/** How long a bounce stays on the list: the sender has its copy back by then, or the person saw it. */
const BOUNCED_FOR_MS = 24 * 3_600_000;

const unread = (item: MailItem) => !item.archived && (item.delivery.state === "stored" || item.delivery.state === "notified");
const stuck = (event: DeliveryEvent | undefined) => event?.event === "unreachable" || event?.event === "held";

/** Whether a copy may ever need the person (the room keeps these aside, so a look does not go through all the mail). */
export function mayNeed(item: MailItem, human: string | null, last: DeliveryEvent | undefined): boolean {
  if (item.archived) return false;
  return item.mailbox === human || item.needs_response || item.delivery.state === "bounced" || (unread(item) && stuck(last));
}

export interface NeedsInput {
  human: string | null;
  candidates: Iterable<MailItem>;
  /** The ids some message answers (in_reply_to). */
  answered: ReadonlySet<string>;
  lastEvent(item: MailItem): DeliveryEvent | undefined;
  claims: readonly ClaimRow[];
  now: number;
  thresholds: Thresholds;
}

const ORDER: NeedRow["kind"][] = ["to-you", "question", "undeliverable", "bounced", "claim"];

export function needsOf(input: NeedsInput): NeedRow[] {
  const { human, now } = input;
  const rows: NeedRow[] = [];
  const questions = new Map<string, MailItem[]>();
  const row = (kind: NeedRow["kind"], item: MailItem, why: string): NeedRow => ({
    kind,
    id: item.id,
    mailbox: item.mailbox,
    from: item.from,
    at: item.created_at,
    preview: previewOf(item),
    why,
  });
  for (const item of input.candidates) {
    const last = input.lastEvent(item);
    if (item.mailbox === human && unread(item))
      rows.push(row("to-you", item, item.needs_response ? "to you, needs a response" : "to you, unread"));
    else if (item.needs_response && item.from !== human) questions.set(item.id, [...(questions.get(item.id) ?? []), item]);
    if (item.delivery.state === "bounced" && now - Date.parse(item.delivery.at ?? item.created_at) < BOUNCED_FOR_MS)
      rows.push(row("bounced", item, `bounced: ${item.delivery.reason ?? "returned to its sender unread"}`));
    else if (unread(item) && stuck(last) && item.mailbox !== human)
      rows.push(
        row(
          "undeliverable",
          item,
          last?.event === "held" ? "held by Claude Code for its user's approval" : (last?.reason ?? "no channel can reach its agent"),
        ),
      );
  }
  for (const [id, copies] of questions) {
    const first = copies[0]!;
    const age = now - Date.parse(first.created_at);
    const dealt = input.answered.has(id) || copies.some((copy) => copy.delivery.state === "acknowledged" || copy.archived);
    if (dealt || !(age >= input.thresholds.unansweredMs)) continue;
    const to = copies.map((copy) => copy.mailbox).join(", ");
    rows.push({ ...row("question", first, `needs a response from ${to}, unanswered for ${Math.floor(age / 60_000)}m`), mailbox: to });
  }
  for (const claim of input.claims) {
    if (claim.state !== "live" || claim.waiters.length === 0) continue;
    rows.push({
      kind: "claim",
      id: null,
      mailbox: claim.holder,
      from: claim.waiters.join(", "),
      at: claim.claimed_at,
      preview: claim.path,
      why: `${claim.waiters.join(", ")} ${claim.waiters.length === 1 ? "waits" : "wait"} for ${claim.holder}'s claim`,
    });
  }
  const rank = (kind: NeedRow["kind"]) => ORDER.indexOf(kind);
  return rows.sort((a, b) => rank(a.kind) - rank(b.kind) || (a.at < b.at ? -1 : a.at > b.at ? 1 : a.mailbox < b.mailbox ? -1 : 1));
}
