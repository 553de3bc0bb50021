/** How a message is shown on one line of a list. */
import type { MailItem } from "./model.ts";

/** Longest preview of a body in a list row (characters). */
const PREVIEW_CHARS = 200;

/** The subject, or the start of the body on one line. Raw text: each view makes it safe for where it shows it. */
export function previewOf(item: Pick<MailItem, "subject" | "body">): string {
  const start = (item.subject ?? item.body).slice(0, PREVIEW_CHARS * 4);
  const line = start.replace(/\s+/g, " ").trim();
  return line.length > PREVIEW_CHARS ? `${line.slice(0, PREVIEW_CHARS - 1)}…` : line;
}
