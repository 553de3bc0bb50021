/**
 * One sentence for what is wrong with a request's params or a tool's arguments, from the first problem zod found:
 * `recipient must be a string (…), not a number`. A model reads these and corrects its next call; a dump of every
 * issue as JSON (what the SDK sends) tells it less.
 */
import type { z } from "zod";

type Issue = z.core.$ZodIssue;

const EXPECTED: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "true or false",
  object: "an object",
  record: "an object",
  array: "an array",
};

/** A JSON value's type as a sentence names it. */
function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "boolean") return "true or false";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) value = value !== null && typeof value === "object" ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  return value;
}

/**
 * The sentence for the first issue. `about` is what the field is for (a schema description), shown in parentheses
 * so the model knows what to put there.
 */
export function describeIssue(issue: Issue, input: unknown, about?: string): string {
  const field = issue.path.map(String).join(".") || "the input";
  const purpose = about ? ` (${about.charAt(0).toLowerCase()}${about.slice(1)})` : "";
  const value = valueAt(input, issue.path);
  switch (issue.code) {
    case "invalid_type": {
      const expected = EXPECTED[issue.expected] ?? issue.expected;
      if (value === undefined) return `${field} is missing: give ${expected}${purpose}`;
      return `${field} must be ${expected}${purpose}, not ${typeName(value)}`;
    }
    case "too_big":
      return `${field} must be at most ${issue.maximum}${purpose}, not ${JSON.stringify(value)}`;
    case "too_small":
      if (issue.origin === "array") return `${field} must hold at least ${issue.minimum} item${issue.minimum === 1 ? "" : "s"}${purpose}`;
      return `${field} must be at least ${issue.minimum}${purpose}, not ${JSON.stringify(value)}`;
    case "invalid_union": {
      // The branch that got furthest into the value says best what is wrong (`recipient.1 must be a string`).
      const firsts = issue.errors.map((branch) => branch[0]);
      const deepest = firsts.filter((each) => each !== undefined).sort((a, b) => b.path.length - a.path.length)[0];
      if (deepest && deepest.path.length > 0) {
        return describeIssue({ ...deepest, path: [...issue.path, ...deepest.path] } as Issue, input, about);
      }
      const expected = firsts.map((each) => (each?.code === "invalid_type" ? (EXPECTED[each.expected] ?? each.expected) : null));
      if (expected.some((each) => each === null)) return `${field} is not valid${purpose}: ${issue.message}`;
      const either = expected.join(" or ");
      if (value === undefined) return `${field} is missing: give ${either}${purpose}`;
      return `${field} must be ${either}${purpose}, not ${typeName(value)}`;
    }
    case "invalid_value": {
      const allowed = issue.values.map((each) => JSON.stringify(each)).join(", ");
      return `${field} must be one of ${allowed}${purpose}, not ${JSON.stringify(value)}`;
    }
    default:
      return `${field} is not valid${purpose}: ${issue.message}`;
  }
}
