/**
 * D-Mail files: Markdown with frontmatter that must pass the v1 schema (validateDmail below). A tool reads D-Mails
 * from its `inbox/`, writes them to its `outbox/` and keeps processed ones in `archive/`; the file's stem is its name.
 * Here: parsing and writing one, its file name, and how a D-Mail becomes a record and a record a D-Mail.
 */
import { type Frontmatter, malformed, readFrontmatter, writeFrontmatter } from "./frontmatter.ts";
import {
  type BridgeRecord,
  buildRecord,
  DMAIL_KINDS,
  fieldsOf,
  firstLine,
  type Inbound,
  keptFields,
  type MailFields,
  nonEmpty,
  peerSender,
  senderName,
  subjectText,
  titleOf,
  unique,
  type Via,
  withFields,
} from "../fields.ts";
import { peerNameProblem } from "../files.ts";

export interface DmailMessage {
  frontmatter: DmailFrontmatter;
  body: string;
}

export function parseDmail(text: string): DmailMessage {
  const { data, body } = readFrontmatter(text);
  return { frontmatter: validateDmail(data), body };
}

/** The seed's key order; the frontmatter is validated first, so agentmail never writes a D-Mail the schema refuses. */
export function formatDmail(message: DmailMessage): string {
  const { name, kind, description, issues, severity, targets, metadata } = validateDmail({ ...message.frontmatter });
  return writeFrontmatter(
    {
      name,
      kind,
      description,
      issues: issues?.length ? issues : undefined,
      severity,
      targets: targets?.length ? targets : undefined,
      metadata: metadata && Object.keys(metadata).length > 0 ? metadata : undefined,
      "dmail-schema-version": message.frontmatter["dmail-schema-version"],
    },
    message.body,
  );
}

export const dmailFileName = (name: string) => `${name}.md`;

/**
 * phonewave's D-Mail frontmatter schema, version 1 (dmail-frontmatter.v1.schema.json), checked field by field:
 * required dmail-schema-version ("1"), name, kind, description; optional issues, severity, targets, metadata; no
 * other key. Two liberties, both on the side of reading what peers write: the kinds of both editions of the schema
 * are accepted, and severity is compared without case (the paintress documentation writes `HIGH`).
 */
const DMAIL_SCHEMA_VERSION = "1";
const SEVERITIES = ["low", "medium", "high"] as const;

export interface DmailFrontmatter {
  name: string;
  kind: string;
  description: string;
  issues?: string[];
  severity?: string;
  targets?: string[];
  metadata?: Record<string, string>;
  "dmail-schema-version": string;
}

const KEYS = ["dmail-schema-version", "name", "kind", "description", "issues", "severity", "targets", "metadata"];

function texts(value: unknown, key: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((item) => typeof item !== "string" || item === "")) {
    malformed(`D-Mail field '${key}' must be a list of non-empty strings`);
  }
  return value as string[];
}

/** The frontmatter as the schema defines it, or a Malformed naming the first rule it breaks. */
export function validateDmail(data: Frontmatter): DmailFrontmatter {
  const extra = Object.keys(data).find((key) => !KEYS.includes(key));
  if (extra !== undefined) malformed(`D-Mail field '${extra.slice(0, 40)}' is not in the v1 schema`);
  for (const key of ["dmail-schema-version", "name", "kind", "description"]) {
    if (!(key in data)) malformed(`D-Mail is missing required field '${key}'`);
  }
  const version = data["dmail-schema-version"];
  if (version !== DMAIL_SCHEMA_VERSION) {
    malformed(`D-Mail dmail-schema-version must be the string "1", not ${JSON.stringify(version)?.slice(0, 20)}`);
  }
  const { name, kind, description } = data;
  if (typeof name !== "string" || name === "") malformed("D-Mail field 'name' must be a non-empty string");
  const nameProblem = peerNameProblem(name);
  if (nameProblem) malformed(`D-Mail name cannot be a file name: ${nameProblem}`);
  if (typeof kind !== "string" || !(DMAIL_KINDS as readonly string[]).includes(kind)) {
    malformed(`D-Mail kind must be one of ${DMAIL_KINDS.join(", ")}`);
  }
  if (typeof description !== "string") malformed("D-Mail field 'description' must be a string");
  const severity = data.severity;
  if (severity !== undefined && (typeof severity !== "string" || !(SEVERITIES as readonly string[]).includes(severity.toLowerCase()))) {
    malformed(`D-Mail severity must be one of ${SEVERITIES.join(", ")}`);
  }
  const metadata = data.metadata;
  if (metadata !== undefined) {
    if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata)) malformed("D-Mail metadata must be a map");
    if (Object.values(metadata).some((value) => typeof value !== "string")) malformed("D-Mail metadata values must be strings");
  }
  return {
    name,
    kind,
    description,
    issues: texts(data.issues, "issues"),
    severity: severity as string | undefined,
    targets: texts(data.targets, "targets"),
    metadata: metadata as Record<string, string> | undefined,
    "dmail-schema-version": DMAIL_SCHEMA_VERSION,
  };
}

const TRACKER_ID = /^[A-Za-z][A-Za-z0-9]*-\d+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Tags that name tracker issues (`MY-42`, or a Linear issue's UUID) become D-Mail `issues`. */
export const isIssueId = (tag: string) => TRACKER_ID.test(tag) || UUID.test(tag);

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
