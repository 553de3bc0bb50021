/**
 * The message record as bridges read and write it: the seed's six fields, the optional fields of rich mail
 * (their values are checked in src/core/mail-fields.ts; a D-Mail kind is a type too) and `via`, which names the bridge and
 * the source file of an imported message and keeps what the peer said that the record has no field for.
 */
import { AgentmailError } from "../core/errors.ts";
import { displayName } from "../core/names.ts";
import type { Message } from "../core/message.ts";
import type { BridgeKind } from "./address.ts";

import { DEFAULT_PRIORITY, DEFAULT_TYPE, MESSAGE_TYPES, PRIORITIES } from "../core/mail-fields.ts";

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
