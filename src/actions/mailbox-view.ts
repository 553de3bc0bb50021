/** Listing and reading the caller's mail: inbox, read, peek, sent, search, thread. Nothing here marks mail read but read. */
import { roleAddress } from "../mail/addresses.ts";
import { byCreation } from "../mail/order.ts";
import { AgentmailError } from "../mail/errors.ts";
import { isExpired, matchesFilter, matchesText, threadOf, type MailFilter } from "../mail/fields.ts";
import type { Message } from "../mail/message.ts";
import { displayName } from "../mail/names.ts";
import type { MailRecord, Show, Store } from "../store/store.ts";
import { rolesOf } from "./receive.ts";

/** What the arguments of the mailbox's views mean, for their commands' --help and the tools' schemas alike. */
export const VIEW_ARGUMENTS = {
  /** inbox (its filters: FILTER_ARGUMENTS). */
  all: "Read mail too",
  archived: "Your archived mail instead",
  /** read. */
  id: "The message's id (from inbox, receive, search or a reminder)",
  /** thread. */
  threadId: "The id of any message of the thread",
} as const;

export interface InboxOptions {
  /** Read mail too, not only unread. */
  all: boolean;
  /** The archive instead of the live mailbox (read and unread). */
  archived: boolean;
  filter: MailFilter;
  /**
   * Told how many unread messages were left out because their time to live ran out: receive would not show them but
   * return them to their senders (and the mailman or cleanup may first).
   */
  onExpired?: (count: number) => void;
}

/** The caller's mail, oldest first: unread by default. Marks nothing. */
export async function inbox(store: Store, agent: string, options: InboxOptions): Promise<Message[]> {
  // The caller's own mailbox, then the queues of its roles (their mail says `to: role:<role>`).
  const mailboxes = [agent, ...(await rolesOf(store, agent)).map(roleAddress)];
  const wanted = (message: Message) => matchesFilter(message, options.filter);
  const records: MailRecord[] = [];
  for (const mailbox of mailboxes) {
    if (options.all || options.archived) {
      // Only what the filter keeps is held: the read history of a long mailbox is passed over as it is read.
      const which = { live: !options.archived, archived: options.archived };
      for (const record of await store.mailMatching(mailbox, wanted, undefined, which)) records.push(record);
    } else for (const message of await store.unread(mailbox)) if (wanted(message)) records.push({ message, archived: false });
  }
  // Live mail whose time ran out is on its way back to its sender: listed, it would be mail receive never shows.
  const now = Date.now();
  const deliverable = options.archived ? records : records.filter(({ message }) => message.read_flag === true || !isExpired(message, now));
  if (deliverable.length < records.length) options.onExpired?.(records.length - deliverable.length);
  return byCreation(deliverable).map((record) => record.message);
}

function notInMailbox(id: string): AgentmailError {
  return new AgentmailError(
    "not_found",
    `no message ${displayName(id)} in your mailbox; run 'agentmail inbox --all' to list your message ids`,
  );
}

/**
 * One of the caller's messages by id, live or archived: shown through `show`, then, if it was unread, marked read.
 * The record shown already says read, with the time the mark then gets.
 */
export async function readOne(store: Store, agent: string, id: string, show: Show): Promise<Message> {
  const found = await store.find(agent, id);
  if (!found) throw notInMailbox(id);
  if (found.archived || found.message.read_flag === true) {
    await show(found.message);
    return found.message;
  }
  const at = new Date();
  const shown = { ...found.message, read_flag: true, read_at: at.toISOString() };
  await show(shown);
  await store.markRead(agent, id, at);
  return shown;
}

/** The caller's message with this id, live or archived; exit 1 naming how to list ids when there is none. */
export async function ownMessage(store: Store, agent: string, id: string): Promise<MailRecord> {
  const found = await store.find(agent, id);
  if (!found) throw notInMailbox(id);
  return found;
}

/** What receive would show next, without marking it: the oldest unread live message whose time to live has not run out. */
export async function peek(store: Store, agent: string): Promise<Message | null> {
  const now = Date.now();
  return (await store.unread(agent)).find((message) => !isExpired(message, now)) ?? null;
}

const REGEX_SYNTAX = /[.*+?^${}()|[\]\\/]/g;

/**
 * A search pattern as a case-insensitive regular expression: the text itself (matched literally), or with `regex`
 * the caller's expression. Matching with the `i` flag costs less than lower-casing every subject and body.
 */
export function searchPattern(pattern: string, regex: boolean): RegExp {
  if (pattern === "") throw new AgentmailError("usage", "the search pattern is empty; give the text to look for");
  if (!regex) return new RegExp(pattern.replace(REGEX_SYNTAX, "\\$&"), "iu");
  try {
    return new RegExp(pattern, "i");
  } catch (error) {
    const reason = regexProblem((error as Error).message, pattern, "i");
    throw new AgentmailError(
      "usage",
      `invalid regular expression '${displayName(pattern)}': ${reason}; fix it, or search without --regex for plain text`,
    );
  }
}

/**
 * What is wrong with a pattern, as the engine says it, without the engine's own "Invalid regular expression:"
 * (and the `/pattern/flags:` that V8 adds after it): said once, with the pattern as typed.
 */
function regexProblem(message: string, pattern: string, flags: string): string {
  const reason = message.replace(/^Invalid regular expression:\s*/i, "");
  const echoed = `/${pattern}/${flags}: `;
  return reason.startsWith(echoed) ? reason.slice(echoed.length) : reason;
}

/**
 * The caller's mail (live and archived) and the mail it sent whose subject or body matches, oldest first. `plain`:
 * the pattern is plain text (searchPattern without --regex), so a stored line that does not hold it needs no parse.
 */
export async function search(store: Store, agent: string, pattern: RegExp, plain = false): Promise<Message[]> {
  const seen = new Set<string>();
  const found: MailRecord[] = [];
  const accept = (message: Message) => matchesText(message, pattern);
  const mine = await store.mailMatching(agent, accept, plain ? pattern : undefined);
  // What the caller sent, read a batch at a time and only the matches kept (a sender of a million messages held them
  // all); newest first reversed is sentBy's order, so the same copy of a message sent to several is the one kept.
  const sentMatching: MailRecord[] = [];
  for await (const batch of store.sentNewestFirst(agent)) for (const record of batch) if (accept(record.message)) sentMatching.push(record);
  sentMatching.reverse();
  // Both lists hold matches only (mailMatching keeps what `accept` takes): a message is kept once, where first found.
  for (const record of [...mine, ...sentMatching]) {
    if (seen.has(record.message.id)) continue;
    seen.add(record.message.id);
    found.push(record);
  }
  return byCreation(found).map((record) => record.message);
}

/** Every message of the thread `id` belongs to, in every mailbox and archive of the store, oldest first. */
export async function thread(store: Store, id: string): Promise<Message[]> {
  const missing = new AgentmailError(
    "not_found",
    `no message ${displayName(id)} in the mail store; check the id with 'agentmail inbox --all' or 'agentmail sent'`,
  );
  const agents = [...new Set([...(await store.mailboxes()), ...(await store.archives())])].sort();
  let start: MailRecord | null = null;
  for (const agent of agents) if ((start = await store.find(agent, id))) break;
  if (!start) throw missing;
  const first = threadOf(start.message);
  // Every line of a member holds the thread's id as JSON text (its thread_id, or its own id for the first message):
  // the stores look only at the lines that hold it, a chunk or a page at a time.
  const needle = JSON.stringify(first);
  const seen = new Set<string>();
  const members: MailRecord[] = [];
  for (const agent of agents) {
    for (const record of await store.mail(agent, { live: true, archived: true }, needle)) {
      if (threadOf(record.message) !== first || seen.has(record.message.id)) continue;
      seen.add(record.message.id);
      members.push(record);
    }
  }
  return byCreation(members).map((record) => record.message);
}
