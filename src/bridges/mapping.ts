/**
 * Mapping between the peers' messages and agentmail's record, both ways, so that every field survives a trip:
 * record → peer file → record keeps every record field, and peer file → record → peer file keeps every peer field
 * (what the record has no field for travels in `via.fields`). Pure: no I/O.
 */
import type { BridgeKind } from "./address.ts";
import type { DmailMessage } from "./dmail.ts";
import type { Feat124Message } from "./feat124.ts";
import {
  buildRecord,
  DEFAULT_PRIORITY,
  DEFAULT_TYPE,
  DMAIL_KINDS,
  fieldsOf,
  type BridgeRecord,
  type MailFields,
  type Via,
} from "./fields.ts";
import type { RooMessage } from "./roo.ts";

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
function firstLine(body: string): string | undefined {
  const first = body.split("\n").find((line) => line.trim() !== "");
  return first === undefined ? undefined : subjectText(first.replace(/^ {0,3}#{1,6}[ \t]+/, ""));
}

const TRACKER_ID = /^[A-Za-z][A-Za-z0-9]*-\d+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Tags that name tracker issues (`MY-42`, or a Linear issue's UUID) become D-Mail `issues`. */
export const isIssueId = (tag: string) => TRACKER_ID.test(tag) || UUID.test(tag);

const unique = (values: string[]) => [...new Set(values)];
const nonEmpty = <T>(values: T[] | undefined) => (values && values.length > 0 ? values : undefined);
const without = (value: string | undefined, fallback: string) => (value === fallback ? undefined : value);

function withFields(via: Via, fields: Record<string, unknown>): Via {
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

const peerSender = (kind: BridgeKind, name: string) => `${kind}:${name}`;

/** The record's fields from the ones FEAT-124 and Roo files share; a default (type message, priority normal) is left out. */
function peerFields(message: Feat124Message | RooMessage, inReplyTo: string | undefined): MailFields {
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

export function feat124ToRecord(message: Feat124Message, inbound: Inbound): BridgeRecord {
  // FEAT-124's in_reply_to names a file: one agentmail wrote stands for the id of its message.
  const inReplyTo = message.in_reply_to === undefined ? undefined : (inbound.idOfFile?.(message.in_reply_to) ?? message.in_reply_to);
  const fields = peerFields(message, inReplyTo);
  const from = peerSender("feat124", message.from);
  const base = { id: inbound.id, from, to: inbound.to, message: message.body, created_at: message.timestamp };
  return buildRecord(base, fields, withFields(inbound.via as Via, { to: without(message.to, inbound.to), ...message.other }));
}

export function rooToRecord(message: RooMessage, inbound: Inbound): BridgeRecord {
  const fields = peerFields(message, message.in_reply_to);
  const from = peerSender("roo", message.from);
  const base = { id: inbound.id, from, to: inbound.to, message: message.body, created_at: message.timestamp };
  return buildRecord(base, fields, withFields({ ...(inbound.via as Via), id: message.id }, { ...message.other }));
}

/** The severity a priority is written as: urgent and high are high, low is low, normal says nothing. */
function severityOf(priority: string | undefined): string | undefined {
  return priority === "urgent" || priority === "high" ? "high" : priority === "low" ? "low" : undefined;
}

function priorityOfSeverity(severity: string | undefined): string | undefined {
  const level = severity?.toLowerCase();
  return level === "high" || level === "low" ? level : undefined;
}

export function dmailToRecord(message: DmailMessage, inbound: Inbound): BridgeRecord {
  const front = message.frontmatter;
  const metadata = front.metadata ?? {};
  // A description that only repeats the body's first line (what agentmail writes when there is no subject) is no subject.
  const described = subjectText(front.description);
  const subject = (described === firstLine(message.body) ? undefined : described) ?? titleOf(message.body);
  const givenTime = metadata.created_at === undefined ? NaN : Date.parse(metadata.created_at);
  const time = Number.isNaN(givenTime) ? undefined : new Date(givenTime).toISOString();
  const fields: MailFields = {
    subject,
    type: front.kind,
    priority: metadata.priority === "urgent" ? "urgent" : priorityOfSeverity(front.severity),
    // metadata.tags (written by agentmail) holds every tag in order; issues add those it does not name.
    tags: nonEmpty(unique([...(metadata.tags?.split(",").filter((tag) => tag !== "") ?? []), ...(front.issues ?? [])])),
    thread_id: metadata.thread_id,
    in_reply_to: metadata.in_reply_to,
    needs_response: metadata.needs_response === "true" ? true : undefined,
  };
  // Metadata that became a record field is not kept twice; anything else (another tool's keys, agentmail's own id
  // and sender) travels in via.fields.
  const consumed = new Set(["thread_id", "in_reply_to", "tags"]);
  if (time !== undefined) consumed.add("created_at");
  if (metadata.priority === "urgent") consumed.add("priority");
  if (metadata.needs_response === "true") consumed.add("needs_response");
  const otherMetadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(metadata)) if (!consumed.has(key)) otherMetadata[key] = value;
  const keep = {
    description: front.description === (subject ?? firstLine(message.body) ?? "") ? undefined : front.description,
    // Kept only when the priority would not write it back as it is (HIGH, medium).
    severity: front.severity === severityOf(fields.priority) ? undefined : front.severity,
    targets: front.targets,
    metadata: Object.keys(otherMetadata).length > 0 ? otherMetadata : undefined,
  };
  const base = {
    id: inbound.id,
    from: peerSender("dmail", inbound.via.endpoint ?? "unknown"),
    to: inbound.to,
    message: message.body,
    created_at: time ?? inbound.fileTime ?? new Date().toISOString(),
  };
  return buildRecord(base, fields, withFields({ ...(inbound.via as Via), name: front.name }, keep));
}

/** What came in through this bridge kind and is kept for the way back (via.fields), else nothing. */
function keptFields(record: BridgeRecord, kind: BridgeKind): Record<string, unknown> {
  return record.via?.bridge === kind && record.via.fields ? { ...record.via.fields } : {};
}

/** The sender as a peer names it: an agent's name, or a peer's own name for a message that came in from one. */
function senderName(from: string): string {
  const colon = from.indexOf(":");
  return colon > 0 && ["feat124", "roo", "dmail", "claude-team"].includes(from.slice(0, colon)) ? from.slice(colon + 1) : from;
}

export function recordToFeat124(record: BridgeRecord, to: string, fileOfId?: (id: string) => string | undefined): Feat124Message {
  const fields = fieldsOf(record);
  const { to: keptTo, ...other } = keptFields(record, "feat124");
  return {
    from: senderName(record.from),
    to: typeof keptTo === "string" ? keptTo : to,
    type: fields.type ?? DEFAULT_TYPE,
    timestamp: record.created_at,
    needs_response: fields.needs_response,
    priority: fields.priority,
    tags: fields.tags,
    in_reply_to: fields.in_reply_to === undefined ? undefined : (fileOfId?.(fields.in_reply_to) ?? fields.in_reply_to),
    thread_id: fields.thread_id,
    subject: fields.subject,
    other: Object.keys(other).length > 0 ? other : undefined,
    body: record.message,
  };
}

export function recordToRoo(record: BridgeRecord): RooMessage {
  const fields = fieldsOf(record);
  const other = keptFields(record, "roo");
  const roo = record.via?.bridge === "roo" ? record.via : undefined;
  return {
    from: senderName(record.from),
    timestamp: record.created_at,
    id: roo?.id ?? record.id,
    // Roo knows high and normal only: urgent is high; low is normal.
    priority: fields.priority === "urgent" || fields.priority === "high" ? "high" : "normal",
    subject: fields.subject,
    type: fields.type,
    tags: fields.tags,
    thread_id: fields.thread_id,
    in_reply_to: fields.in_reply_to,
    needs_response: fields.needs_response,
    other: Object.keys(other).length > 0 ? other : undefined,
    body: record.message,
  };
}

/** A type as a D-Mail kind: a D-Mail kind as it is, `report` as report, anything else (a request) as specification. */
export function dmailKindOf(type: string | undefined): string {
  return type !== undefined && (DMAIL_KINDS as readonly string[]).includes(type) ? type : "specification";
}

/** What a D-Mail that came in keeps for the way back. */
interface DmailKept {
  description?: string;
  severity?: string;
  targets?: string[];
  metadata?: Record<string, string>;
}

export function recordToDmail(record: BridgeRecord): DmailMessage {
  const fields = fieldsOf(record);
  const kept = keptFields(record, "dmail") as DmailKept;
  const kind = dmailKindOf(fields.type);
  const tags = fields.tags ?? [];

  const severityPriority = priorityOfSeverity(kept.severity);
  const keepSeverity = kept.severity !== undefined && severityPriority === fields.priority;
  const severity = keepSeverity ? kept.severity!.toLowerCase() : severityOf(fields.priority);
  const metadata: Record<string, string> = { ...kept.metadata };
  const set = (key: string, value: string | undefined) => {
    if (value !== undefined) metadata[key] = value;
  };
  if (record.via?.bridge !== "dmail") {
    set("agentmail_id", record.id);
    set("from", senderName(record.from));
  }
  set("created_at", record.created_at);
  set("thread_id", fields.thread_id);
  set("in_reply_to", fields.in_reply_to);
  set("needs_response", fields.needs_response ? "true" : undefined);
  // Issues alone cannot say the order of all tags or hold the others: metadata.tags has them all.
  set("tags", tags.some((tag) => !isIssueId(tag)) ? tags.join(",") : undefined);
  set("priority", fields.priority === "urgent" ? "urgent" : undefined);
  const name = record.via?.bridge === "dmail" && record.via.name ? record.via.name : `${kind}-${record.id}`;
  return {
    frontmatter: {
      name,
      kind,
      description: kept.description ?? fields.subject ?? firstLine(record.message) ?? "",
      issues: nonEmpty(tags.filter(isIssueId)),
      severity,
      targets: kept.targets,
      metadata,
      "dmail-schema-version": "1",
    },
    body: record.message,
  };
}
