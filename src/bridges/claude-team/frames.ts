/**
 * The team protocol's structured messages: JSON objects inside an entry's `text` (the entry itself stays a plain
 * "message"). Claude tries JSON only on texts that start with `{` (after white space), and acts on some frames it
 * finds there: a `permission_request` from an outside member opened a permission dialog in the lead. So inbound, a
 * frame becomes a message of a fitting type with a subject that says what it is; outbound, agentmail never writes a
 * text Claude would parse: a body that is JSON is written inside a fenced code block, which Claude shows as text.
 */
import type { MailFields } from "../fields.ts";

/** What each frame becomes in agentmail: its type, and the subject's first words. */
const FRAMES: Record<string, { type: NonNullable<MailFields["type"]>; subject: string; question?: true }> = {
  idle_notification: { type: "status", subject: "idle" },
  shutdown_request: { type: "question", subject: "shutdown requested", question: true },
  shutdown_approved: { type: "response", subject: "shutdown approved" },
  shutdown_rejected: { type: "response", subject: "shutdown rejected" },
  shutdown_response: { type: "response", subject: "shutdown response" },
  plan_approval_request: { type: "question", subject: "plan approval requested", question: true },
  plan_approval_response: { type: "response", subject: "plan approval response" },
  permission_request: { type: "question", subject: "permission requested", question: true },
  permission_response: { type: "response", subject: "permission response" },
  sandbox_permission_request: { type: "question", subject: "sandbox permission requested", question: true },
  sandbox_permission_response: { type: "response", subject: "sandbox permission response" },
  task_assignment: { type: "task", subject: "task assigned" },
  task_completed: { type: "report", subject: "task completed" },
  teammate_terminated: { type: "status", subject: "teammate terminated" },
  team_permission_update: { type: "status", subject: "team permission update" },
  mode_set_request: { type: "question", subject: "mode change requested", question: true },
};

const STARTS_AS_JSON = /^\s*\{/;

/** The frame a text holds (its `type` and fields), or null for a plain message. */
export function frameOf(text: string): { type: string; fields: Record<string, unknown> } | null {
  if (!STARTS_AS_JSON.test(text)) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const type = (value as Record<string, unknown>).type;
  return typeof type === "string" ? { type, fields: value as Record<string, unknown> } : null;
}

const clause = (value: unknown) => (typeof value === "string" && value.trim() !== "" ? value : undefined);

/**
 * The fields a frame gives its message: a known frame its type and a subject (with its reason or summary), needing
 * an answer when it asks a question; an unknown one (a frame this version of agentmail does not know) the type
 * `message` and a subject naming it. The body stays the frame's JSON, as Claude's own model is shown it.
 */
export function frameFields(frame: { type: string; fields: Record<string, unknown> }): MailFields {
  const known = Object.hasOwn(FRAMES, frame.type) ? FRAMES[frame.type] : undefined;
  const detail = clause(frame.fields.reason) ?? clause(frame.fields.summary) ?? clause(frame.fields.idleReason);
  if (!known) return { subject: `Claude team frame ${frame.type}`.slice(0, 200) };
  return {
    subject: detail === undefined ? known.subject : `${known.subject}: ${detail}`,
    type: known.type,
    ...(known.question ? { needs_response: true as const } : {}),
  };
}

/** The text to write for a body: as it is, unless Claude would parse it as JSON; then inside a ```json fence. */
export function inertText(body: string): string {
  if (!STARTS_AS_JSON.test(body)) return body;
  try {
    JSON.parse(body);
  } catch {
    return body;
  }
  return "```json\n" + body + "\n```";
}
