/**
 * The Roo "Mailbox Protocol": one Markdown file per recipient, `.roo/mailbox/to-<slug>.md`, with frontmatter from,
 * timestamp, id (required) and priority (`high` or `normal`). The recipient deletes the file once it has dealt with
 * it. agentmail writes the fields Roo has no place for (subject, type, tags, thread_id, in_reply_to,
 * needs_response) as extra keys and reads them back; any other key is kept as it was. Here: parsing and writing one,
 * its file name, and how a Roo file becomes a record and a record a Roo file.
 */
import { formatPeerMessage, parsePeerMessage, type PeerMessage } from "./frontmatter.ts";
import {
  buildRecord,
  fieldsOf,
  keptFields,
  peerFields,
  peerSender,
  senderName,
  withFields,
  type BridgeRecord,
  type Inbound,
  type Via,
} from "../fields.ts";

const FIELDS = {
  from: "required",
  timestamp: "time",
  id: "required",
  priority: "text",
  subject: "text",
  type: "text",
  tags: "list",
  thread_id: "text",
  in_reply_to: "text",
  needs_response: "boolean",
} as const;

export type RooMessage = PeerMessage<typeof FIELDS>;

const FILE = /^to-(.+)\.md$/;

/** The slug a Roo file is for (`to-tester.md` is for `tester`), or null when the name is not a Roo message's. */
export function rooSlugOf(fileName: string): string | null {
  return FILE.exec(fileName)?.[1] ?? null;
}

export const rooFileName = (slug: string) => `to-${slug}.md`;

export const parseRoo = (text: string): RooMessage => parsePeerMessage(text, FIELDS);

export const formatRoo = (message: RooMessage): string => formatPeerMessage(message, FIELDS);

export function rooToRecord(message: RooMessage, inbound: Inbound): BridgeRecord {
  const fields = peerFields(message, message.in_reply_to);
  const from = peerSender("roo", message.from);
  const base = { id: inbound.id, from, to: inbound.to, message: message.body, created_at: message.timestamp };
  return buildRecord(base, fields, withFields({ ...(inbound.via as Via), id: message.id }, { ...message.other }));
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
