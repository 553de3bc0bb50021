/**
 * The message record as bridges read and write it: the seed's six fields, the optional fields of rich mail
 * (their values are checked in src/mail/fields.ts; a D-Mail kind is a type too) and `via`, which names the bridge and
 * the source file of an imported message and keeps what the peer said that the record has no field for. Also what
 * every format's mapping shares (formats/*.ts map each peer's message to the record and back, so that every field
 * survives a trip: record → peer file → record keeps every record field, and peer file → record → peer file keeps
 * every peer field, what the record has no field for travelling in `via.fields`). Pure: no I/O.
 */
import { AgentmailError } from "../mail/errors.ts";
import { displayName } from "../mail/names.ts";
import type { Message } from "../mail/message.ts";
import type { BridgeKind } from "./address.ts";

import { DEFAULT_PRIORITY, DEFAULT_TYPE, MESSAGE_TYPES, PRIORITIES } from "../mail/fields.ts";

export { DEFAULT_PRIORITY, DEFAULT_TYPE, MESSAGE_TYPES, PRIORITIES };

/** D-Mail kinds (both editions of phonewave's v1 schema): accepted as types for `dmail:` addresses. */
export const DMAIL_KINDS = ["report", "specification", "feedback", "design-feedback", "implementation-feedback", "convergence"] as const;

/** The optional fields of a record, in the order they are written after the seed's six. */
export interface MailFields {
  subject?: string;
  type?: string;
  priority?: string;
  tags?: string[];
  thread_id?: string;
  in_reply_to?: string;
  needs_response?: true;
}

export const FIELD_ORDER = ["subject", "type", "priority", "tags", "thread_id", "in_reply_to", "needs_response"] as const;

/** Where an imported message came from: the bridge, the source file (as the user sees it), and the peer's own ids. */
export interface Via {
  bridge: BridgeKind;
  /** The D-Mail endpoint's name. */
  endpoint?: string;
  file: string;
  /** Roo: the message's `id`; a Claude Code team: the entry's `msg_id`. */
  id?: string;
  /** A Claude Code team's name. */
  team?: string;
  /** A Claude Code team: the protocol frame the entry held (`shutdown_request`, `idle_notification`, …). */
  frame?: string;
  /** D-Mail: the message's `name`. */
  name?: string;
  /** Frontmatter the record has no field for, kept as the peer wrote it. */
  fields?: Record<string, unknown>;
}

export type BridgeRecord = Message & MailFields & { via?: Via };

/** The record: the seed's six fields first, then the set optional fields in their order, then `via`. */
export function buildRecord(base: Omit<Message, "read_flag"> & { read_flag?: boolean }, fields: MailFields, via?: Via): BridgeRecord {
  const record: Record<string, unknown> = {
    id: base.id,
    from: base.from,
    to: base.to,
    message: base.message,
    read_flag: base.read_flag ?? false,
    created_at: base.created_at,
  };
  for (const key of FIELD_ORDER) if (fields[key] !== undefined) record[key] = fields[key];
  if (via) record.via = via;
  return record as BridgeRecord;
}

/** The optional fields set on a record, in their order. */
export function fieldsOf(record: Record<string, unknown>): MailFields {
  const fields: Record<string, unknown> = {};
  const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);
  fields.subject = text(record.subject);
  fields.type = text(record.type) === DEFAULT_TYPE ? undefined : text(record.type);
  fields.priority = text(record.priority) === DEFAULT_PRIORITY ? undefined : text(record.priority);
  const tags = Array.isArray(record.tags) ? record.tags.filter((tag): tag is string => typeof tag === "string") : [];
  fields.tags = tags.length > 0 ? tags : undefined;
  fields.thread_id = text(record.thread_id);
  fields.in_reply_to = text(record.in_reply_to);
  fields.needs_response = record.needs_response === true ? true : undefined;
  const ordered: Record<string, unknown> = {};
  for (const key of FIELD_ORDER) if (fields[key] !== undefined) ordered[key] = fields[key];
  return ordered as MailFields;
}

/** Checks the fields a sender gives for a bridge address: D-Mail kinds are types only for `dmail:`. */
export function checkOutboundFields(kind: BridgeKind, fields: MailFields): MailFields {
  const types: readonly string[] = kind === "dmail" ? [...MESSAGE_TYPES, ...DMAIL_KINDS.filter((k) => k !== "report")] : MESSAGE_TYPES;
  if (fields.type !== undefined && !types.includes(fields.type)) {
    throw new AgentmailError("usage", `unknown type '${displayName(fields.type)}' for a ${kind} address; use one of ${types.join(", ")}`);
  }
  if (fields.priority !== undefined && !(PRIORITIES as readonly string[]).includes(fields.priority)) {
    throw new AgentmailError("usage", `unknown priority '${displayName(fields.priority)}'; use one of ${PRIORITIES.join(", ")}`);
  }
  return fields;
}

const MAX_SUBJECT_CHARS = 200;
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
const HEADING = /^ {0,3}#{1,6}[ \t]+(.*?)[ \t#]*$/;
const BOLD_LINE = /^\*\*(.+)\*\*$/;

/** One line of at most 200 characters without control characters; undefined when nothing is left. */
export function subjectText(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const line = (text.split("\n").find((part) => part.trim() !== "") ?? "").replace(CONTROL, " ").trim();
  const cut = [...line].slice(0, MAX_SUBJECT_CHARS).join("");
  return cut === "" ? undefined : cut;
}

/** The body's title: its first non-blank line when that is a heading (`## Status Update`) or wholly bold. */
export function titleOf(body: string): string | undefined {
  const first = body.split("\n").find((line) => line.trim() !== "");
  if (first === undefined) return undefined;
  const heading = HEADING.exec(first) ?? BOLD_LINE.exec(first.trim());
  return heading ? subjectText(heading[1]) : undefined;
}

/** The body's first non-blank line without heading marks: a D-Mail description when there is no subject. */
export function firstLine(body: string): string | undefined {
  const first = body.split("\n").find((line) => line.trim() !== "");
  return first === undefined ? undefined : subjectText(first.replace(/^ {0,3}#{1,6}[ \t]+/, ""));
}

export const unique = (values: string[]) => [...new Set(values)];
export const nonEmpty = <T>(values: T[] | undefined) => (values && values.length > 0 ? values : undefined);
export const without = (value: string | undefined, fallback: string) => (value === fallback ? undefined : value);

export function withFields(via: Via, fields: Record<string, unknown>): Via {
  const kept: Record<string, unknown> = {};
  let any = false;
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    Object.defineProperty(kept, key, { value, enumerable: true, writable: true, configurable: true });
    any = true;
  }
  return any ? { ...via, fields: kept } : via;
}

export interface Inbound {
  /** The id of the new message. */
  id: string;
  /** The agentmail recipient. */
  to: string;
  via: Omit<Via, "fields">;
  /** Maps a file name agentmail wrote (a FEAT-124 in_reply_to) back to the id of the message it carried. */
  idOfFile?: (fileName: string) => string | undefined;
  /** When the peer gives no time (a D-Mail without metadata.created_at): the file's modification time. */
  fileTime?: string;
}

export const peerSender = (kind: BridgeKind, name: string) => `${kind}:${name}`;

/** The fields FEAT-124 and Roo messages share with the record. */
export interface PeerMailFields {
  subject?: string;
  type?: string;
  priority?: string;
  tags?: string[];
  thread_id?: string;
  needs_response?: boolean;
  body: string;
}

/** The record's fields from the ones FEAT-124 and Roo files share; a default (type message, priority normal) is left out. */
export function peerFields(message: PeerMailFields, inReplyTo: string | undefined): MailFields {
  return {
    subject: subjectText(message.subject) ?? titleOf(message.body),
    type: without(message.type, DEFAULT_TYPE),
    priority: without(message.priority, DEFAULT_PRIORITY),
    tags: nonEmpty(message.tags),
    thread_id: message.thread_id,
    in_reply_to: inReplyTo,
    needs_response: message.needs_response ? true : undefined,
  };
}

/** What came in through this bridge kind and is kept for the way back (via.fields), else nothing. */
export function keptFields(record: BridgeRecord, kind: BridgeKind): Record<string, unknown> {
  return record.via?.bridge === kind && record.via.fields ? { ...record.via.fields } : {};
}

/** The sender as a peer names it: an agent's name, or a peer's own name for a message that came in from one. */
export function senderName(from: string): string {
  const colon = from.indexOf(":");
  return colon > 0 && ["feat124", "roo", "dmail", "claude-team"].includes(from.slice(0, colon)) ? from.slice(colon + 1) : from;
}
