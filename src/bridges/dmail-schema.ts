/**
 * phonewave's D-Mail frontmatter schema, version 1 (dmail-frontmatter.v1.schema.json), checked field by field:
 * required dmail-schema-version ("1"), name, kind, description; optional issues, severity, targets, metadata; no
 * other key. Two liberties, both on the side of reading what peers write: the kinds of both editions of the schema
 * are accepted, and severity is compared without case (the paintress documentation writes `HIGH`).
 */
import { DMAIL_KINDS } from "./fields.ts";
import type { Frontmatter } from "./frontmatter.ts";
import { malformed } from "./malformed.ts";
import { peerNameProblem } from "./peer-names.ts";

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
