/**
 * The optional fields of a rich message (subject, type, priority, tags, threads, needs_response, read_at): their
 * valid values, their checks, and the rules that derive them. Pure: no I/O. A stored record may hold values another
 * tool wrote; readers take them as they are and fall back to the defaults where a rule needs a known value.
 */
import { AgentmailError } from "./errors.ts";
import { displayName } from "./names.ts";
import type { Message } from "./message.ts";

/** `bounce`: mail agentmail returned to its sender unread (mail/bounce.ts). */
export const MESSAGE_TYPES = ["message", "status", "alert", "task", "question", "response", "report", "handoff", "bounce"] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];
export const DEFAULT_TYPE: MessageType = "message";

/** Types only agentmail writes: mail a sender set one on would pass for agentmail's own (a returned message). */
const SYSTEM_TYPES: readonly string[] = ["bounce"];
/** The types a sender may set (send, reply, the web page; CLI and MCP): every type but agentmail's own. */
export const SENDABLE_TYPES = MESSAGE_TYPES.filter((type) => !SYSTEM_TYPES.includes(type)) as [MessageType, ...MessageType[]];

/** Most urgent first. */
export const PRIORITIES = ["urgent", "high", "normal", "low"] as const;
export type Priority = (typeof PRIORITIES)[number];
export const DEFAULT_PRIORITY: Priority = "normal";

export const MAX_SUBJECT_CHARS = 200;
export const MAX_TAG_CHARS = 40;
export const MAX_TAGS = 10;

/**
 * What each field means, worded once for `send --help`, `reply --help` and the send and reply tools' schemas (each
 * interface adds only how it is given: a flag repeated or an array, the values listed or a schema's enum).
 */
export const FIELD_ARGUMENTS = {
  subject: `A one-line subject, at most ${MAX_SUBJECT_CHARS} characters`,
  type: "The kind of message (default message)",
  priority: "How urgent (default normal)",
  tag: "A tag to filter by: short, without spaces or commas",
  needsResponse: "Ask the recipient to answer",
} as const;

/** What each filter of a mailbox's listing means (mailFilter), for `inbox --help` and the inbox tool alike. */
export const FILTER_ARGUMENTS = {
  from: "Only mail from this sender",
  type: "Only this type",
  priority: "Only this priority or above",
  tag: "Only mail with this tag",
  thread: "Only mail of this thread (its first message's id)",
} as const;

/** The optional fields a sender sets, in the order they are written after the seed's six. */
export interface MailFields {
  subject?: string;
  type?: MessageType;
  priority?: Priority;
  tags?: string[];
  thread_id?: string;
  in_reply_to?: string;
  needs_response?: true;
  /** When the message is returned to its sender unless read (`send --ttl`), ISO 8601. */
  expires_at?: string;
}

/** What a sender asked for, before it is checked (from CLI flags or MCP arguments). */
export interface MailFieldInput {
  subject?: string;
  type?: string;
  priority?: string;
  tags?: readonly string[];
  needsResponse?: boolean;
}

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const TAG_FORBIDDEN = /[\s,\u0000-\u001f\u007f-\u009f]/;

/** A message type; `extraTypes` are the more a peer takes (D-Mail kinds, for `dmail:` addresses). */
export function parseType(value: string, extraTypes: readonly string[] = []): MessageType {
  const valid = [...MESSAGE_TYPES, ...extraTypes.filter((type) => !(MESSAGE_TYPES as readonly string[]).includes(type))];
  if (valid.includes(value)) return value as MessageType;
  throw new AgentmailError("usage", `unknown type '${displayName(value)}'; use one of ${valid.join(", ")}`);
}

export function parsePriority(value: string): Priority {
  if ((PRIORITIES as readonly string[]).includes(value)) return value as Priority;
  throw new AgentmailError("usage", `unknown priority '${displayName(value)}'; use one of ${PRIORITIES.join(", ")}`);
}

export function validateSubject(subject: string): string {
  if (subject.trim() === "")
    throw new AgentmailError("usage", "the subject is empty; give a short one-line subject or leave --subject out");
  if (CONTROL.test(subject))
    throw new AgentmailError("usage", "the subject must be one line without control characters; put details in the message");
  const length = [...subject].length;
  if (length > MAX_SUBJECT_CHARS) {
    throw new AgentmailError(
      "usage",
      `the subject is ${length} characters, over the ${MAX_SUBJECT_CHARS}-character limit; shorten it and put details in the message`,
    );
  }
  return subject;
}

export function validateTag(tag: string): string {
  if (tag === "" || TAG_FORBIDDEN.test(tag) || [...tag].length > MAX_TAG_CHARS) {
    throw new AgentmailError(
      "usage",
      `invalid tag '${displayName(tag)}'; a tag is 1 to ${MAX_TAG_CHARS} characters without spaces or commas; give one --tag per tag`,
    );
  }
  return tag;
}

/** Checks what a sender asked for and keeps only what differs from the defaults, so a plain send stores a plain record. */
export function mailFields(input: MailFieldInput, extraTypes: readonly string[] = []): MailFields {
  const fields: MailFields = {};
  if (input.subject !== undefined) fields.subject = validateSubject(input.subject);
  if (input.type !== undefined && SYSTEM_TYPES.includes(input.type)) {
    throw new AgentmailError(
      "usage",
      `type '${input.type}' is agentmail's own (mail it returned to its sender unread); no sender may set it; use one of ${SENDABLE_TYPES.join(", ")}`,
    );
  }
  const type = input.type === undefined ? DEFAULT_TYPE : parseType(input.type, extraTypes);
  if (type !== DEFAULT_TYPE) fields.type = type;
  const priority = input.priority === undefined ? DEFAULT_PRIORITY : parsePriority(input.priority);
  if (priority !== DEFAULT_PRIORITY) fields.priority = priority;
  const tags = input.tags?.length ? [...new Set(input.tags.map(validateTag))] : [];
  if (tags.length > MAX_TAGS)
    throw new AgentmailError("usage", `${tags.length} tags, over the limit of ${MAX_TAGS}; keep the ones a reader would filter by`);
  if (tags.length > 0) fields.tags = tags;
  if (input.needsResponse) fields.needs_response = true;
  return fields;
}

const RE_PREFIX = /^re:\s*/i;

/** The subject of a reply: `Re: <subject>`, never `Re: Re:`; none when the original had none. */
export function replySubject(original: unknown): string | undefined {
  if (typeof original !== "string" || original.trim() === "") return undefined;
  const subject = `Re: ${original.replace(RE_PREFIX, "")}`;
  return [...subject].length > MAX_SUBJECT_CHARS ? [...subject].slice(0, MAX_SUBJECT_CHARS).join("") : subject;
}

/** The thread a message belongs to: its thread_id, or its own id when it started one. */
export function threadOf(message: Message): string {
  return typeof message.thread_id === "string" && message.thread_id !== "" ? message.thread_id : message.id;
}

/**
 * The fields of a reply to `original`: its thread, in reply to it, `Re:` its subject, type `response` unless the
 * replier chose one. The replier's own subject, priority, tags and needs_response are kept.
 */
export function replyFields(original: Message, own: MailFields, typeGiven: boolean): MailFields {
  const fields: MailFields = { ...own };
  const subject = own.subject ?? replySubject(original.subject);
  if (subject !== undefined) fields.subject = subject;
  else delete fields.subject;
  if (!typeGiven) fields.type = "response";
  fields.thread_id = threadOf(original);
  fields.in_reply_to = original.id;
  return orderFields(fields);
}

const FIELD_ORDER = ["subject", "type", "priority", "tags", "thread_id", "in_reply_to", "needs_response", "expires_at"] as const;

/** The fields in their one written order, so every record lists them alike. */
export function orderFields(fields: MailFields): MailFields {
  const ordered: Record<string, unknown> = {};
  for (const key of FIELD_ORDER) if (fields[key] !== undefined) ordered[key] = fields[key];
  return ordered as MailFields;
}

export function typeOf(message: Message): string {
  return typeof message.type === "string" && message.type !== "" ? message.type : DEFAULT_TYPE;
}

/** 3 for urgent down to 0 for low; a value another tool wrote that is not one of ours counts as normal. */
export function priorityRank(value: unknown): number {
  // Most mail has none: no search of the list for it (a listing asks once a line).
  const index = value === undefined ? -1 : PRIORITIES.indexOf(value as Priority);
  return PRIORITIES.length - 1 - (index === -1 ? DEFAULT_INDEX : index);
}

const DEFAULT_INDEX = PRIORITIES.indexOf(DEFAULT_PRIORITY);

/**
 * Whether the message's time to live ran out at `now` (ms): it is returned to its sender, never delivered. A plain
 * field check (no regular expression): receive runs it on every message it takes (docs/performance.md).
 */
export function isExpired(message: Message, now: number): boolean {
  return typeof message.expires_at === "string" && Date.parse(message.expires_at) <= now;
}

export function isUrgent(message: Message): boolean {
  return message.priority === "urgent";
}

export function tagsOf(message: Message): string[] {
  return Array.isArray(message.tags) ? message.tags.filter((tag): tag is string => typeof tag === "string") : [];
}

/**
 * The header lines a message shows after `From:` and `ID:`, one per set field, in the contract's order. Values
 * are escaped like names: a subject or tag cannot start a header line of its own.
 */
export function fieldHeaders(message: Message): string {
  const lines: string[] = [];
  const text = (value: unknown) => (typeof value === "string" && value !== "" ? displayName(value) : null);
  const add = (label: string, value: string | null) => {
    if (value !== null) lines.push(`${label}: ${value}\n`);
  };
  add("Subject", text(message.subject));
  add("Type", message.type === DEFAULT_TYPE ? null : text(message.type));
  add("Priority", message.priority === DEFAULT_PRIORITY ? null : text(message.priority));
  const tags = tagsOf(message);
  add("Tags", tags.length > 0 ? tags.map(displayName).join(", ") : null);
  add("Thread", text(message.thread_id));
  add("In-Reply-To", text(message.in_reply_to));
  if (message.needs_response === true) lines.push("Needs-Response: yes\n");
  add("Expires", text(message.expires_at));
  return lines.join("");
}

export interface MailFilter {
  from?: string;
  type?: MessageType;
  /** This level or above. */
  priority?: Priority;
  tag?: string;
  /** A thread's id: its first message's. */
  thread?: string;
}

/** Checks the filter values a caller gave; unknown type or priority names the valid ones. */
export function mailFilter(input: { from?: string; type?: string; priority?: string; tag?: string; thread?: string }): MailFilter {
  const filter: MailFilter = {};
  if (input.from !== undefined) filter.from = input.from;
  if (input.type !== undefined) filter.type = parseType(input.type);
  if (input.priority !== undefined) filter.priority = parsePriority(input.priority);
  if (input.tag !== undefined) filter.tag = input.tag;
  if (input.thread !== undefined) filter.thread = input.thread;
  return filter;
}

export function matchesFilter(message: Message, filter: MailFilter): boolean {
  if (filter.from !== undefined && message.from !== filter.from) return false;
  if (filter.type !== undefined && typeOf(message) !== filter.type) return false;
  if (filter.priority !== undefined && priorityRank(message.priority) < priorityRank(filter.priority)) return false;
  if (filter.tag !== undefined && !tagsOf(message).includes(filter.tag)) return false;
  if (filter.thread !== undefined && threadOf(message) !== filter.thread) return false;
  return true;
}

/** Whether subject or body matches the pattern (searchPattern makes plain text a case-insensitive expression). */
export function matchesText(message: Message, pattern: RegExp): boolean {
  return (typeof message.subject === "string" && pattern.test(message.subject)) || pattern.test(String(message.message));
}
