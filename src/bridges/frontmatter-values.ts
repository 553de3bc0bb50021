/** Reading typed values out of a peer's frontmatter, each failure a reason that names the field. */
import type { Frontmatter } from "./frontmatter.ts";
import { malformed } from "./malformed.ts";

/** A required text field: a non-empty string (a number is taken as its digits: `from: 7`). */
export function requiredText(data: Frontmatter, key: string): string {
  const value = optionalText(data, key);
  if (value === undefined || value.trim() === "") malformed(`required field '${key}' is missing or empty`);
  return value;
}

export function optionalText(data: Frontmatter, key: string): string | undefined {
  const value = data[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  return malformed(`field '${key}' must be text`);
}

/** true/false, also as the words YAML 1.1 writers use (`yes`, `no`). */
export function optionalBoolean(data: Frontmatter, key: string): boolean | undefined {
  const value = data[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value === "boolean") return value;
  if (typeof value === "string" && /^(true|yes|on)$/i.test(value)) return true;
  if (typeof value === "string" && /^(false|no|off)$/i.test(value)) return false;
  return malformed(`field '${key}' must be true or false`);
}

/** A list of texts; a single text is a list of one (`tags: fugue`). */
export function optionalTextList(data: Frontmatter, key: string): string[] | undefined {
  const value = data[key];
  if (value === undefined || value === null) return undefined;
  const items = Array.isArray(value) ? value : [value];
  return items.map((item) => {
    if (typeof item === "string" && item !== "") return item;
    if (typeof item === "number") return String(item);
    return malformed(`field '${key}' must be a list of texts`);
  });
}

/** An ISO 8601 time, returned in the record's form (UTC, milliseconds). */
export function requiredTime(data: Frontmatter, key: string): string {
  const text = requiredText(data, key);
  const time = Date.parse(text);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(text) || Number.isNaN(time)) malformed(`field '${key}' is not an ISO 8601 time ('${text.slice(0, 40)}')`);
  return new Date(time).toISOString();
}

/** The fields not in `known`, for `via.fields`; undefined when there are none. */
export function otherFields(data: Frontmatter, known: readonly string[]): Record<string, unknown> | undefined {
  const rest: Record<string, unknown> = {};
  let any = false;
  for (const [key, value] of Object.entries(data)) {
    if (known.includes(key)) continue;
    Object.defineProperty(rest, key, { value, enumerable: true, writable: true, configurable: true });
    any = true;
  }
  return any ? rest : undefined;
}

/** A record time as peers write it: whole seconds without `.000` (`2024-01-28T15:30:00Z`). */
export function peerTime(iso: string): string {
  return iso.replace(/\.000Z$/, "Z");
}
