import { AgentmailError } from "../../mail/errors.ts";
import type { Memberships } from "../store.ts";

/**
 * Group and role lists as the Redis store keeps them: one JSON object per kind (name -> members), in the same form
 * as the file store's `.groups.json`, keys sorted, so an unchanged list serializes to the same text and a change
 * can be stored only if nobody else changed it meanwhile (scripts.ts REPLACE_LISTS).
 */
export function parseLists(json: string, where: string): Memberships {
  const lists: Memberships = new Map();
  if (json === "") return lists;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    value = undefined;
  }
  const fix = "fix that key, or delete it to start over";
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new AgentmailError("io", `the key ${where} on the mail server is not a JSON object of name lists; ${fix}`);
  }
  for (const [name, members] of Object.entries(value as Record<string, unknown>)) {
    if (!Array.isArray(members) || !members.every((member) => typeof member === "string")) {
      throw new AgentmailError("io", `the key ${where} on the mail server holds something that is not a list of names; ${fix}`);
    }
    lists.set(name, [...new Set(members as string[])]);
  }
  return lists;
}

/** The lists as stored: empty lists dropped, names sorted; '' when none is left. */
export function serializeLists(lists: Memberships): string {
  const object: Record<string, string[]> = Object.create(null);
  const names = [...lists.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const name of names) if (lists.get(name)!.length > 0) object[name] = lists.get(name)!;
  return names.some((name) => lists.get(name)!.length > 0) ? JSON.stringify(object) : "";
}
