/**
 * A team inbox entry as an agentmail record and back. Pure: no I/O.
 *
 *   entry      record
 *   from       from: claude-team:<team>/<from>
 *   text       message (a frame's JSON as it is)
 *   summary    subject (a frame: what it is, and its reason)
 *   timestamp  created_at (when it is no time: the import's, and the entry's kept in via.fields)
 *   msg_id     via.id
 *   others     via.fields (color, from_plugin, keys of other tools)
 *
 * Outbound only the subject has a place (as `summary`); type, priority, tags and threads stay in agentmail.
 */
import { type BridgeRecord, buildRecord, type MailFields, subjectText, type Via } from "../fields.ts";
import { frameFields, frameOf, inertText } from "./frames.ts";
import { newEntry, type InboxEntry } from "./inbox.ts";

export const teamAddress = (team: string, member: string) => `claude-team:${team}/${member}`;

/** What the record has a field for; everything else an entry holds is kept in via.fields. */
const MAPPED = new Set(["from", "text", "summary", "timestamp", "msg_id", "msgV", "type", "read"]);

export interface EntryInbound {
  id: string;
  to: string;
  team: string;
  /** The inbox as the user sees it. */
  file: string;
  now: Date;
}

export function entryToRecord(entry: InboxEntry, inbound: EntryInbound): BridgeRecord {
  const frame = frameOf(entry.text);
  const fields: MailFields = frame ? frameFields(frame) : { subject: subjectText(entry.summary) };
  if (fields.subject !== undefined) fields.subject = subjectText(fields.subject);
  const time = Date.parse(entry.timestamp);
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entry)) {
    if (!MAPPED.has(key)) Object.defineProperty(kept, key, { value, enumerable: true, writable: true, configurable: true });
  }
  if (Number.isNaN(time)) kept.timestamp = entry.timestamp;
  // A frame's summary is not its subject; keep it.
  if (frame && entry.summary !== undefined) kept.summary = entry.summary;
  const via: Via = {
    bridge: "claude-team",
    team: inbound.team,
    file: inbound.file,
    ...(typeof entry.msg_id === "string" ? { id: entry.msg_id } : {}),
    ...(frame ? { frame: frame.type } : {}),
    ...(Object.keys(kept).length > 0 ? { fields: kept } : {}),
  };
  const created = Number.isNaN(time) ? inbound.now : new Date(time);
  const base = {
    id: inbound.id,
    from: teamAddress(inbound.team, entry.from),
    to: inbound.to,
    message: entry.text,
    created_at: created.toISOString(),
  };
  return buildRecord(base, fields, via);
}

/** The entry agentmail writes for a message from `sender` (an agent's name): Claude's own shape, never a frame. */
export function recordToEntry(record: BridgeRecord, sender: string, now: Date): InboxEntry {
  return newEntry(sender, inertText(record.message), record.subject, now);
}
