/**
 * A peer's Markdown message described once, as its frontmatter fields in the order they are written, each with its
 * kind: parsing and writing both follow that list, so a format's field list is not written out twice.
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

/** `time` is a required ISO 8601 time, kept in the record's form and written as peers write it. */
type FieldKind = "required" | "time" | "text" | "boolean" | "list";
export type PeerFields = Readonly<Record<string, FieldKind>>;

type ValueOf<Kind extends FieldKind> = Kind extends "boolean" ? boolean : Kind extends "list" ? string[] : string;
type RequiredKey<Fields extends PeerFields> = {
  [Key in keyof Fields]: Fields[Key] extends "required" | "time" ? Key : never;
}[keyof Fields];

/** The message a field list describes: its fields, frontmatter it has no field for (`other`), and the body. */
export type PeerMessage<Fields extends PeerFields> = { [Key in RequiredKey<Fields>]: ValueOf<Fields[Key]> } & {
  [Key in Exclude<keyof Fields, RequiredKey<Fields>>]?: ValueOf<Fields[Key]>;
} & { other?: Record<string, unknown>; body: string };

const READERS = {
  required: requiredText,
  time: requiredTime,
  text: optionalText,
  boolean: optionalBoolean,
  list: optionalTextList,
} as const;

export function parsePeerMessage<Fields extends PeerFields>(text: string, fields: Fields): PeerMessage<Fields> {
  const { data, body } = readFrontmatter(text);
  const message: Record<string, unknown> = {};
  for (const [key, kind] of Object.entries(fields)) message[key] = READERS[kind](data, key);
  return { ...message, other: otherFields(data, Object.keys(fields)), body } as PeerMessage<Fields>;
}

/** The file's text: the fields in their order (a time as peers write it, an empty list left out), then `other`. */
export function formatPeerMessage<Fields extends PeerFields>(message: PeerMessage<Fields>, fields: Fields): string {
  const given = message as Record<string, unknown>;
  const data: Record<string, unknown> = {};
  for (const [key, kind] of Object.entries(fields)) {
    const value = given[key];
    if (kind === "time") data[key] = peerTime(value as string);
    else if (kind === "list") data[key] = Array.isArray(value) && value.length > 0 ? value : undefined;
    else data[key] = value;
  }
  return writeFrontmatter({ ...data, ...message.other }, message.body);
}
