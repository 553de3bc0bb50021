/**
 * The Roo "Mailbox Protocol": one Markdown file per recipient, `.roo/mailbox/to-<slug>.md`, with frontmatter from,
 * timestamp, id (required) and priority (`high` or `normal`). The recipient deletes the file once it has dealt with
 * it. agentmail writes the fields Roo has no place for (subject, type, tags, thread_id, in_reply_to,
 * needs_response) as extra keys and reads them back; any other key is kept as it was.
 */
import { formatPeerMessage, parsePeerMessage, type PeerMessage } from "./peer-message.ts";

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
