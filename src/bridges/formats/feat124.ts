/**
 * fugue FEAT-124 messages: one Markdown file per message in `.mail/<recipient>/`, named
 * `<timestamp>_<from>_<type>.md`, with frontmatter from, to, type, timestamp (required) and needs_response,
 * priority, tags, in_reply_to, thread_id. agentmail also writes `subject` when a message has one (YAML readers
 * ignore keys they do not know) and reads it back; any other key is kept as it was. Here: parsing and writing one,
 * its file name, and how a FEAT-124 file becomes a record and a record a FEAT-124 file.
 */
import { fileNamePiece } from "../files.ts";
import { formatPeerMessage, parsePeerMessage, type PeerMessage } from "./frontmatter.ts";
import {
  type BridgeRecord,
  buildRecord,
  DEFAULT_TYPE,
  fieldsOf,
  type Inbound,
  keptFields,
  peerFields,
  peerSender,
  senderName,
  type Via,
  withFields,
  without,
} from "../fields.ts";

const FIELDS = {
  from: "required",
  to: "required",
  type: "required",
  timestamp: "time",
  needs_response: "boolean",
  priority: "text",
  tags: "list",
  in_reply_to: "text",
  thread_id: "text",
  subject: "text",
} as const;

export type Feat124Message = PeerMessage<typeof FIELDS>;

export const parseFeat124 = (text: string): Feat124Message => parsePeerMessage(text, FIELDS);

export const formatFeat124 = (message: Feat124Message): string => formatPeerMessage(message, FIELDS);

/**
 * The seed's file name, `2024-01-28T15-30-00_worker-bug-069_status.md`. The n-th file that would get the same name
 * is `…_status_0002.md`: '.' sorts before '_', so it still sorts after the first and in order of time.
 */
export function feat124FileName(message: Pick<Feat124Message, "timestamp" | "from" | "type">, n = 1): string {
  const stem = `${message.timestamp.slice(0, 19).replace(/:/g, "-")}_${fileNamePiece(message.from)}_${fileNamePiece(message.type, 40)}`;
  return n === 1 ? `${stem}.md` : `${stem}_${String(n).padStart(4, "0")}.md`;
}

export function feat124ToRecord(message: Feat124Message, inbound: Inbound): BridgeRecord {
  // FEAT-124's in_reply_to names a file: one agentmail wrote stands for the id of its message.
  const inReplyTo = message.in_reply_to === undefined ? undefined : (inbound.idOfFile?.(message.in_reply_to) ?? message.in_reply_to);
  const fields = peerFields(message, inReplyTo);
  const from = peerSender("feat124", message.from);
  const base = { id: inbound.id, from, to: inbound.to, message: message.body, created_at: message.timestamp };
  return buildRecord(base, fields, withFields(inbound.via as Via, { to: without(message.to, inbound.to), ...message.other }));
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
