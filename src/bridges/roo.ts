/**
 * The Roo "Mailbox Protocol": one Markdown file per recipient, `.roo/mailbox/to-<slug>.md`, with frontmatter from,
 * timestamp, id (required) and priority (`high` or `normal`). The recipient deletes the file once it has dealt with
 * it. agentmail writes the fields Roo has no place for (subject, type, tags, thread_id, in_reply_to,
 * needs_response) as extra keys and reads them back; any other key is kept as it was.
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

export interface RooMessage {
  from: string;
  /** ISO 8601, in the record's form. */
  timestamp: string;
  id: string;
  priority?: string;
  subject?: string;
  type?: string;
  tags?: string[];
  thread_id?: string;
  in_reply_to?: string;
  needs_response?: boolean;
  other?: Record<string, unknown>;
  body: string;
}

const KEYS = ["from", "timestamp", "id", "priority", "subject", "type", "tags", "thread_id", "in_reply_to", "needs_response"] as const;

const FILE = /^to-(.+)\.md$/;

/** The slug a Roo file is for (`to-tester.md` is for `tester`), or null when the name is not a Roo message's. */
export function rooSlugOf(fileName: string): string | null {
  return FILE.exec(fileName)?.[1] ?? null;
}

export const rooFileName = (slug: string) => `to-${slug}.md`;

export function parseRoo(text: string): RooMessage {
  const { data, body } = readFrontmatter(text);
  return {
    from: requiredText(data, "from"),
    timestamp: requiredTime(data, "timestamp"),
    id: requiredText(data, "id"),
    priority: optionalText(data, "priority"),
    subject: optionalText(data, "subject"),
    type: optionalText(data, "type"),
    tags: optionalTextList(data, "tags"),
    thread_id: optionalText(data, "thread_id"),
    in_reply_to: optionalText(data, "in_reply_to"),
    needs_response: optionalBoolean(data, "needs_response"),
    other: otherFields(data, KEYS),
    body,
  };
}

export function formatRoo(message: RooMessage): string {
  return writeFrontmatter(
    {
      from: message.from,
      timestamp: peerTime(message.timestamp),
      id: message.id,
      priority: message.priority,
      subject: message.subject,
      type: message.type,
      tags: message.tags?.length ? message.tags : undefined,
      thread_id: message.thread_id,
      in_reply_to: message.in_reply_to,
      needs_response: message.needs_response,
      ...message.other,
    },
    message.body,
  );
}
