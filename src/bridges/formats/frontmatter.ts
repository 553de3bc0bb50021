/**
 * Markdown with YAML frontmatter, the wire format of all three peers: `---`, YAML, `---` (or `...`), a blank line,
 * the body. YAML comes from the `yaml` package, imported here and only here, and this file is reached only through
 * dynamic imports, so commands that do not touch a bridge never load it.
 */

const YAML = await import("yaml");

export type Frontmatter = Record<string, unknown>;

export interface FrontmatterFile {
  /** Keys in the order the file has them; a null prototype, so `__proto__` is just a key. */
  data: Frontmatter;
  body: string;
}

const OPEN = /^---[ \t]*$/;
const CLOSE = /^(---|\.\.\.)[ \t]*$/;

/**
 * The most frontmatter a peer's file may have, in bytes, also once its aliases are expanded. Peers write a few
 * hundred; the bound keeps what one hostile file costs a pass (parse, expansion, the record it would become) small.
 */
export const MAX_FRONTMATTER_BYTES = 64 * 1024;
/** Aliases in one frontmatter: each costs the YAML library a look through the document's anchors. */
const MAX_ALIASES = 100;

/** Counts what the plain data holds (the characters of its texts, one for any other value) against the limit. */
class Budget {
  private left = MAX_FRONTMATTER_BYTES;
  spend(amount: number): void {
    this.left -= amount;
    if (this.left < 0) malformed(`its frontmatter, with its aliases expanded, is over the ${MAX_FRONTMATTER_BYTES}-byte limit`);
  }
}

/**
 * A copy of what the YAML library built, made only of null-prototype maps, arrays and scalars. `within` holds the
 * collections being copied: an alias to one of them (`x: &a [*a]`) would make the copy endless.
 */
function plainValue(value: unknown, path: string, budget: Budget, within: Set<object>): unknown {
  if (typeof value === "string") {
    budget.spend(value.length);
    return value;
  }
  budget.spend(1);
  if (value === null || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : malformed(`${path} is not a finite number`);
  if (typeof value !== "object") return malformed(`${path} is not plain YAML data (strings, numbers, booleans, lists, maps)`);
  if (within.has(value)) return malformed(`${path} is an alias to a list or map that holds it (a loop)`);
  within.add(value);
  let copy: unknown;
  if (Array.isArray(value)) copy = value.map((item, index) => plainValue(item, `${path}[${index}]`, budget, within));
  else if (Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = Object.create(null);
    for (const [key, item] of Object.entries(value)) {
      budget.spend(key.length);
      out[key] = plainValue(item, `${path}.${key}`, budget, within);
    }
    copy = out;
  } else return malformed(`${path} is not plain YAML data (strings, numbers, booleans, lists, maps)`);
  within.delete(value);
  return copy;
}

/**
 * What the YAML library's own `uniqueKeys` would find, in one walk rather than comparing every key with every other
 * (which takes minutes on a frontmatter of many thousand keys); also counts the aliases. Null when all is well.
 */
function structureProblem(document: ReturnType<typeof YAML.parseDocument>): string | null {
  let aliases = 0;
  let problem: string | null = null;
  YAML.visit(document, {
    Alias() {
      aliases++;
      if (aliases <= MAX_ALIASES) return undefined;
      problem = `it has more than ${MAX_ALIASES} aliases`;
      return YAML.visit.BREAK;
    },
    Pair(_key, pair) {
      if (pair.key === null || YAML.isScalar(pair.key)) return undefined;
      problem = "a key is a list, a map or an alias; keys are names";
      return YAML.visit.BREAK;
    },
    Map(_key, map) {
      // Keys as the plain data will have them: `1` and `"1"` are the same key there.
      const keys = new Set<string>();
      for (const pair of map.items) {
        if (!YAML.isScalar(pair.key)) continue;
        const key = String(pair.key.value);
        if (!keys.has(key)) keys.add(key);
        else {
          problem = `the key '${key.slice(0, 40)}' appears twice in one map`;
          return YAML.visit.BREAK;
        }
      }
      return undefined;
    },
  });
  return problem;
}

/** The frontmatter's YAML as plain data; anything the YAML library throws (a loop, an unknown alias) is Malformed. */
function parseYaml(yaml: string): unknown {
  try {
    const document = YAML.parseDocument(yaml, { uniqueKeys: false, logLevel: "silent" });
    const error = document.errors[0] ?? document.warnings[0];
    const problem = error ? error.message.split("\n")[0]!.replace(/:$/, "") : structureProblem(document);
    if (problem !== null) malformed(`its frontmatter is not valid YAML (${problem})`);
    const value = document.toJS({ maxAliasCount: MAX_ALIASES }) as unknown;
    if (value === null || typeof value !== "object" || Array.isArray(value)) malformed("its frontmatter is not a map of fields");
    return plainValue(value, "the frontmatter", new Budget(), new Set());
  } catch (error) {
    if (error instanceof Malformed) throw error;
    const why = error instanceof Error ? error.message.split("\n")[0]! : String(error);
    return malformed(`its frontmatter is not valid YAML (${why.replace(/:$/, "")})`);
  }
}

/**
 * Splits and parses a file; a file without frontmatter, with frontmatter over the limit, with YAML that does not
 * parse (whatever the reason the YAML library gives), or that is not a map, is malformed.
 */
export function readFrontmatter(text: string): FrontmatterFile {
  const lines = text
    .replace(/^\uFEFF/, "")
    .replace(/\r\n/g, "\n")
    .split("\n");
  if (!OPEN.test(lines[0] ?? "")) malformed("it does not start with a '---' frontmatter line");
  const close = lines.findIndex((line, index) => index > 0 && CLOSE.test(line));
  if (close === -1) malformed("its frontmatter has no closing '---' line");
  const yaml = lines.slice(1, close).join("\n");
  const size = Buffer.byteLength(yaml);
  if (size > MAX_FRONTMATTER_BYTES) malformed(`its frontmatter is ${size} bytes, over the ${MAX_FRONTMATTER_BYTES}-byte limit`);
  const data = parseYaml(yaml) as Frontmatter;
  const rest = lines.slice(close + 1);
  if (rest[0] === "") rest.shift();
  if (rest.at(-1) === "") rest.pop();
  return { data, body: rest.join("\n") };
}

/**
 * Writes frontmatter (keys in the given order, undefined ones left out) and the body. Strings that a YAML 1.1
 * reader would take for something else (`no`, `on`, a timestamp, `1`) are quoted, so readers of either YAML version
 * read what was written; lines are never folded.
 */
export function writeFrontmatter(data: Frontmatter, body: string): string {
  const defined: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) if (value !== undefined) defined[key] = value;
  const yaml = YAML.stringify(defined, { version: "1.1", lineWidth: 0, minContentWidth: 0 });
  return `---\n${yaml}---\n\n${body}\n`;
}

/** Why a peer's file is left where it is: thrown by the readers, reported once per file, never fatal to a pass. */
export class Malformed extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "Malformed";
  }
}

export function malformed(reason: string): never {
  throw new Malformed(reason);
}

/** Reading typed values out of a peer's frontmatter, each failure a reason that names the field. */
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

/**
 * A peer's Markdown message described once, as its frontmatter fields in the order they are written, each with its
 * kind: parsing and writing both follow that list, so a format's field list is not written out twice.
 */
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
