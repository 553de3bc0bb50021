/**
 * fugue FEAT-124 messages: one Markdown file per message in `.mail/<recipient>/`, named
 * `<timestamp>_<from>_<type>.md`, with frontmatter from, to, type, timestamp (required) and needs_response,
 * priority, tags, in_reply_to, thread_id. agentmail also writes `subject` when a message has one (YAML readers
 * ignore keys they do not know) and reads it back; any other key is kept as it was.
 */
import { readFrontmatter, writeFrontmatter } from "./frontmatter.ts";
import {
  optionalBoolean,
  optionalText,
  optionalTextList,
  otherFields,
  peerTime,
  requiredText,
  requiredTime,
} from "./frontmatter-values.ts";
import { fileNamePiece } from "./peer-names.ts";

export interface Feat124Message {
  from: string;
  to: string;
  type: string;
  /** ISO 8601, in the record's form. */
  timestamp: string;
  needs_response?: boolean;
  priority?: string;
  tags?: string[];
  in_reply_to?: string;
  thread_id?: string;
  subject?: string;
  other?: Record<string, unknown>;
  body: string;
}

const KEYS = ["from", "to", "type", "timestamp", "needs_response", "priority", "tags", "in_reply_to", "thread_id", "subject"] as const;

export function parseFeat124(text: string): Feat124Message {
  const { data, body } = readFrontmatter(text);
  return {
    from: requiredText(data, "from"),
    to: requiredText(data, "to"),
    type: requiredText(data, "type"),
    timestamp: requiredTime(data, "timestamp"),
    needs_response: optionalBoolean(data, "needs_response"),
    priority: optionalText(data, "priority"),
    tags: optionalTextList(data, "tags"),
    in_reply_to: optionalText(data, "in_reply_to"),
    thread_id: optionalText(data, "thread_id"),
    subject: optionalText(data, "subject"),
    other: otherFields(data, KEYS),
    body,
  };
}

export function formatFeat124(message: Feat124Message): string {
  return writeFrontmatter(
    {
      from: message.from,
      to: message.to,
      type: message.type,
      timestamp: peerTime(message.timestamp),
      needs_response: message.needs_response,
      priority: message.priority,
      tags: message.tags?.length ? message.tags : undefined,
      in_reply_to: message.in_reply_to,
      thread_id: message.thread_id,
      subject: message.subject,
      ...message.other,
    },
    message.body,
  );
}

/**
 * The seed's file name, `2024-01-28T15-30-00_worker-bug-069_status.md`. The n-th file that would get the same name
 * is `…_status_0002.md`: '.' sorts before '_', so it still sorts after the first and in order of time.
 */
export function feat124FileName(message: Pick<Feat124Message, "timestamp" | "from" | "type">, n = 1): string {
  const stem = `${message.timestamp.slice(0, 19).replace(/:/g, "-")}_${fileNamePiece(message.from)}_${fileNamePiece(message.type, 40)}`;
  return n === 1 ? `${stem}.md` : `${stem}_${String(n).padStart(4, "0")}.md`;
}
