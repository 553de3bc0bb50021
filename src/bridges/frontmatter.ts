/**
 * Markdown with YAML frontmatter, the wire format of all three peers: `---`, YAML, `---` (or `...`), a blank line,
 * the body. YAML comes from the `yaml` package, imported here and only here, and this file is reached only through
 * dynamic imports, so commands that do not touch a bridge never load it.
 */
import { malformed } from "./malformed.ts";

const YAML = await import("yaml");

export type Frontmatter = Record<string, unknown>;

export interface FrontmatterFile {
  /** Keys in the order the file has them; a null prototype, so `__proto__` is just a key. */
  data: Frontmatter;
  body: string;
}

const OPEN = /^---[ \t]*$/;
const CLOSE = /^(---|\.\.\.)[ \t]*$/;

function plainValue(value: unknown, path: string): unknown {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : malformed(`${path} is not a finite number`);
  if (Array.isArray(value)) return value.map((item, index) => plainValue(item, `${path}[${index}]`));
  if (typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = Object.create(null);
    for (const [key, item] of Object.entries(value)) out[key] = plainValue(item, `${path}.${key}`);
    return out;
  }
  return malformed(`${path} is not plain YAML data (strings, numbers, booleans, lists, maps)`);
}

/** Splits and parses a file; a file without frontmatter, with YAML that does not parse, or that is not a map, is malformed. */
export function readFrontmatter(text: string): FrontmatterFile {
  const lines = text
    .replace(/^\uFEFF/, "")
    .replace(/\r\n/g, "\n")
    .split("\n");
  if (!OPEN.test(lines[0] ?? "")) malformed("it does not start with a '---' frontmatter line");
  const close = lines.findIndex((line, index) => index > 0 && CLOSE.test(line));
  if (close === -1) malformed("its frontmatter has no closing '---' line");
  const document = YAML.parseDocument(lines.slice(1, close).join("\n"), { uniqueKeys: true, logLevel: "silent" });
  const problem = document.errors[0] ?? document.warnings[0];
  if (problem) malformed(`its frontmatter is not valid YAML (${problem.message.split("\n")[0]!.replace(/:$/, "")})`);
  const value = document.toJS({ maxAliasCount: 100 }) as unknown;
  if (value === null || typeof value !== "object" || Array.isArray(value)) malformed("its frontmatter is not a map of fields");
  const data = plainValue(value, "the frontmatter") as Frontmatter;
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
