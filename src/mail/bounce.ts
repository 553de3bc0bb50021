/**
 * A bounce: mail returned to its sender unread, because its time to live ran out (`send --ttl`) or its recipient was
 * gone too long (see dead-letters/dead-letters.ts). Pure: what the returned message says, and its id.
 *
 * A bounce's id is made from the id it returns, the same every time, so a bounce stored twice (its taker killed
 * after storing it and before the original was marked taken out, then taken again) is stored once: a mailbox keeps
 * one record per id.
 */
import { senderAddress, SYSTEM_NAME } from "./addresses.ts";
import { cut, excerpt } from "./format.ts";
import { BASE62, ID_LENGTH } from "./ids.ts";
import type { Message } from "./message.ts";
import { displayName } from "./names.ts";

/** Who a bounce is from: agentmail itself, not an agent (a reply to it goes nowhere; `inbox --from agentmail` lists them). */
export const BOUNCE_SENDER = SYSTEM_NAME;
export const BOUNCE_TYPE = "bounce";

/**
 * The field a copy sent into another project's store carries (actions/send-elsewhere.ts): the store it was sent from,
 * where its bounce goes (the git common dir on the file store, the namespace on Redis).
 */
export const SENDER_STORE = "sender_store";
/** A bounce kept in the recipient's store because its sender's store could not take it (dead-letters/return-path.ts): where it is to go, and why it waits. */
export const RETURN_STORE = "return_store";
export const KEPT_BECAUSE = "kept_because";

/**
 * The sender of another project whose bounces a mailbox named for its address (`alice@app`) keeps until its store
 * takes them (dead-letters/return-path.ts), or null for any other mailbox.
 */
export function keptFor(mailbox: string): { name: string; project: string } | null {
  const address = senderAddress(mailbox);
  return address.kind === "agent" && address.project !== undefined ? { name: address.name, project: address.project } : null;
}

/**
 * Whether a mailbox is an agent's: not one of kept bounces (keptFor), which no agent reads. What lists the store's
 * agents from its mailboxes (the mailman's sweep and its status, the mail room) leaves the others out.
 */
export const isAgentMailbox = (mailbox: string): boolean => keptFor(mailbox) === null;

/** A message a receive took out and returned to its sender (`to`) instead of showing it, and why. */
export interface ReturnedMail {
  id: string;
  to: string;
  reason: string;
}

/**
 * What a receiver is told of a message a receive took out instead of showing it, because its time to live ran out:
 * it went back to its sender (`to`; "" when it was agentmail's own bounce, which just goes). One line, worded once,
 * wherever a receive takes mail: the CLI's stderr, the MCP receive's result, the hooks' output.
 */
export function returnedNotice(returned: ReturnedMail): string {
  const to = returned.to === "" ? "nobody (agentmail's own bounce)" : displayName(returned.to);
  return `returned ${displayName(returned.id)} to ${to}: ${displayName(returned.reason)}`;
}

/** How many returned messages a hook or an MCP result names one by one; the rest are counted. */
const NOTICES_NAMED = 5;

/** The notices of mail returned during one hook or MCP call, a line each: the first few named, the rest counted. */
export function returnedNotices(returned: readonly ReturnedMail[]): string {
  const lines = returned.slice(0, NOTICES_NAMED).map(returnedNotice);
  const more = returned.length - NOTICES_NAMED;
  if (more > 0) lines.push(`returned ${more} more to their senders: their time to live ran out, unread`);
  return lines.join("\n");
}

/** How much of the returned body a bounce carries. */
const BODY_KEPT = 8000;

/**
 * The bounce's id for a message id: each character moved along the alphabet by a step that never maps one onto
 * itself (7·i + 13 + position, mod 62: 6·i is even, so it never meets −13 ≡ 49), so it is never the id it returns.
 */
export function bounceId(id: string): string {
  let bounce = "";
  for (let at = 0; at < id.length && at < ID_LENGTH; at++) {
    const index = BASE62.indexOf(id[at]!);
    bounce += BASE62[((((index < 0 ? 0 : index) * 7 + 13 + at) % 62) + 62) % 62];
  }
  return bounce.padEnd(ID_LENGTH, "A");
}

/** A message agentmail returned: it is never returned again (no bounce of a bounce). */
export const isBounce = (message: Message): boolean => message.type === BOUNCE_TYPE && message.from === BOUNCE_SENDER;

/**
 * The bounce of `original` for its sender's mailbox `to` (the sender's name in the store it is returned to), saying
 * why in `reason`, with the start of what was sent: nothing is dropped without its sender hearing of it.
 */
export function bounceOf(original: Message, to: string, reason: string, now: Date): Message {
  const recipient = String(original.to ?? "");
  const body = String(original.message);
  const kept = body.length > BODY_KEPT ? `${cut(body, BODY_KEPT)}\n(cut: ${body.length} characters in all)` : body;
  const subject = cut(`Undelivered: ${excerpt(original)}`, 200);
  return {
    id: bounceId(original.id),
    from: BOUNCE_SENDER,
    to,
    message: `Your message ${original.id} to ${recipient} was not delivered: ${reason}. It was taken out of the mailbox unread. It said:\n\n${kept}`,
    read_flag: false,
    created_at: now.toISOString(),
    subject,
    type: BOUNCE_TYPE,
    priority: "high",
    thread_id: typeof original.thread_id === "string" && original.thread_id !== "" ? original.thread_id : original.id,
    in_reply_to: original.id,
    bounce_of: original.id,
    bounce_reason: reason,
  };
}
