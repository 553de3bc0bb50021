/**
 * fugue FEAT-124 messages: one Markdown file per message in `.mail/<recipient>/`, named
 * `<timestamp>_<from>_<type>.md`, with frontmatter from, to, type, timestamp (required) and needs_response,
 * priority, tags, in_reply_to, thread_id. agentmail also writes `subject` when a message has one (YAML readers
 * ignore keys they do not know) and reads it back; any other key is kept as it was.
 */
import { fileNamePiece } from "./peer-names.ts";
import { formatPeerMessage, parsePeerMessage, type PeerMessage } from "./peer-message.ts";

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
