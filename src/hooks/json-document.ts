/**
 * Surgical edits to JSON settings files that people also edit by hand (comments, trailing commas, their own
 * indentation and line ends). jsonc-parser (Microsoft's, the parser behind VS Code's settings) finds where each value
 * is; the edits are made here, line by line, because its own `modify` reformats the whole line next to an insertion.
 * Every byte outside the inserted or removed lines stays as it was.
 */
import { parseTree, printParseErrorCode, type Node, type ParseError } from "jsonc-parser";
import { AgentmailError } from "../mail/errors.ts";

const BOM = "\uFEFF";

export type JsonObject = Record<string, unknown>;
export type JsonPath = (string | number)[];

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Refusal to edit a file that is not what we expect: nothing is written, and the message says how to go on. */
function unparseable(label: string, why: string): AgentmailError {
  return new AgentmailError(
    "conflict",
    `cannot parse ${label} (${why}); fix it or move it away, then run the command again; nothing was changed`,
  );
}

function lineOf(text: string, offset: number): number {
  return text.slice(0, offset).split("\n").length;
}

function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset);
  return `line ${lineOf(text, offset)}, column ${offset - before.lastIndexOf("\n")}`;
}

/**
 * A settings file, parsed with its comments allowed. An empty file is an empty object; a file that does not parse,
 * or whose top level is not an object, is refused.
 */
export class JsonDocument {
  private edited = false;

  private constructor(
    private body: string,
    private readonly original: string,
    private readonly bom: string,
    private readonly label: string,
  ) {}

  static parse(text: string, label: string): JsonDocument {
    const bom = text.startsWith(BOM) ? BOM : "";
    const body = bom ? text.slice(1) : text;
    const document = new JsonDocument(body.trim() === "" ? `{}${body.includes("\r\n") ? "\r\n" : "\n"}` : body, text, bom, label);
    document.root();
    return document;
  }

  /** The file's text: unchanged, to the byte, until an edit is made. */
  get text(): string {
    return this.edited ? this.bom + this.body : this.original;
  }

  /** The whole document as a plain value, a key given twice taking its last value (as JSON.parse does). */
  get value(): JsonObject {
    return nodeValue(this.root()) as JsonObject;
  }

  /** The value at `path`; refused when a key on the way, or anywhere inside, is given twice (see nodeAt). */
  valueAt(path: JsonPath): unknown {
    const node = this.nodeAt(path);
    if (node === undefined) return undefined;
    this.refuseDuplicateKeys(node, path);
    return nodeValue(node);
  }

  /** Sets the value at `path`, creating the objects on the way; a container of another type on the way is refused. */
  set(path: JsonPath, value: unknown): void {
    const node = this.nodeAt(path);
    if (node !== undefined) {
      const property = node.parent?.type === "property" ? node.parent : node;
      this.replace(node.offset, node.length, this.render(value, this.lineIndent(property.offset)));
      return;
    }
    const parentPath = path.slice(0, -1);
    const key = path[path.length - 1]!;
    const parent = this.nodeAt(parentPath);
    if (parent === undefined) {
      this.set(parentPath, typeof key === "number" ? [value] : { [key]: value });
      return;
    }
    if (parent.type !== "object" || typeof key !== "string") throw this.wrongType(parentPath, "an object");
    this.insertChild(
      parent,
      (indent) => `${JSON.stringify(key)}: ${this.render(value, indent)}`,
      JSON.stringify({ [key]: value }).slice(1, -1),
    );
  }

  /** Adds `value` as the last item of the array at `path`, creating the array (and objects above it) if missing. */
  append(path: JsonPath, value: unknown): void {
    const array = this.nodeAt(path);
    if (array === undefined) {
      this.set(path, [value]);
      return;
    }
    if (array.type !== "array") throw this.wrongType(path, "a list");
    this.insertChild(array, (indent) => this.render(value, indent), JSON.stringify(value));
  }

  /** Removes the property or array item at `path`, with its line(s) when it has them to itself. */
  remove(path: JsonPath): void {
    const node = this.nodeAt(path);
    if (node === undefined) return;
    const item = node.parent?.type === "property" ? node.parent : node;
    const container = item.parent!;
    const siblings = container.children!;
    const index = siblings.indexOf(item);
    const end = item.offset + item.length;
    const after = this.trailing(end);
    const ownLines = this.startsLine(item.offset) && after.lineEnd !== null;
    const previous = index > 0 ? siblings[index - 1]! : undefined;
    if (ownLines) {
      // The item's lines go, with a comment that ends its last line; a last item also takes the comma before it,
      // unless the file puts a comma after every item.
      this.replace(this.lineStart(item.offset), after.lineEnd! + this.eolLengthAt(after.lineEnd!) - this.lineStart(item.offset), "");
      if (index === siblings.length - 1 && after.comma === null && previous) {
        const comma = this.trailing(previous.offset + previous.length).comma;
        if (comma !== null) this.replace(comma, 1, "");
      }
      return;
    }
    if (previous) this.replace(previous.offset + previous.length, end - (previous.offset + previous.length), "");
    else if (siblings.length > 1) this.replace(item.offset, siblings[1]!.offset - item.offset, "");
    else this.replace(item.offset, (after.comma ?? end - 1) + 1 - item.offset, "");
  }

  // ----------------------------------------------------------------------------------------------------------------

  private root(): Node {
    const errors: ParseError[] = [];
    const root = parseTree(this.body, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: false });
    if (errors.length > 0) {
      const [first] = errors;
      throw unparseable(this.label, `${printParseErrorCode(first!.error)} at ${lineAndColumn(this.body, first!.offset)}`);
    }
    if (root?.type !== "object") throw unparseable(this.label, "its top level is not a JSON object");
    return root;
  }

  /**
   * The node at `path`, as jsonc-parser's findNodeAtLocation finds it, except that a key given twice on the way is
   * refused: Claude Code and Gemini CLI read only its last value, Codex CLI rejects the whole file, and an edit of
   * either would be wrong for one of them. Nothing is guessed; the user merges them.
   */
  private nodeAt(path: JsonPath): Node | undefined {
    let node: Node | undefined = this.root();
    for (let depth = 0; depth < path.length && node !== undefined; depth++) {
      const segment = path[depth]!;
      if (node.type === "object" && typeof segment === "string") {
        const properties: Node[] = (node.children ?? []).filter((property) => property.children![0]!.value === segment);
        if (properties.length > 1) throw this.duplicateKey(path.slice(0, depth), segment, properties);
        node = properties[0]?.children?.[1];
      } else if (node.type === "array" && typeof segment === "number") node = node.children?.[segment];
      else node = undefined;
    }
    return node;
  }

  private refuseDuplicateKeys(node: Node, path: JsonPath): void {
    if (node.type !== "object" && node.type !== "array") return;
    const seen = new Map<string, Node>();
    (node.children ?? []).forEach((child, index) => {
      if (node.type === "array") {
        this.refuseDuplicateKeys(child, [...path, index]);
        return;
      }
      const key = child.children![0]!.value as string;
      const first = seen.get(key);
      if (first) throw this.duplicateKey(path, key, [first, child]);
      seen.set(key, child);
      this.refuseDuplicateKeys(child.children![1]!, [...path, key]);
    });
  }

  private duplicateKey(path: JsonPath, key: string, properties: Node[]): AgentmailError {
    const where = path.length === 0 ? this.label : `${path.join(".")} in ${this.label}`;
    const lines = properties.map((property) => lineOf(this.body, property.offset));
    return new AgentmailError(
      "conflict",
      `${where} has the key ${JSON.stringify(key)} twice (lines ${lines.join(" and ")}): Claude Code and Gemini CLI ` +
        "read only the last, Codex CLI rejects the file; merge them into one, then run the command again; nothing was changed",
    );
  }

  private wrongType(path: JsonPath, expected: string): AgentmailError {
    return new AgentmailError(
      "conflict",
      `${path.join(".")} in ${this.label} is not ${expected}; fix it by hand, then run the command again; nothing was changed`,
    );
  }

  private replace(offset: number, length: number, content: string): void {
    this.edited = true;
    this.body = this.body.slice(0, offset) + content + this.body.slice(offset + length);
  }

  private get eol(): string {
    return this.body.includes("\r\n") ? "\r\n" : "\n";
  }

  /** One level of the file's own indentation: its first indented line's, else two spaces. */
  private get unit(): string {
    const indent = /^([ \t]+)["{[\]}]/m.exec(this.body)?.[1];
    return indent?.startsWith("\t") ? "\t" : (indent ?? "  ");
  }

  private render(value: unknown, indent: string): string {
    return JSON.stringify(value, null, this.unit).replaceAll("\n", this.eol + indent);
  }

  private lineStart(offset: number): number {
    return this.body.lastIndexOf("\n", offset - 1) + 1;
  }

  private lineIndent(offset: number): string {
    return /^[ \t]*/.exec(this.body.slice(this.lineStart(offset)))![0];
  }

  private startsLine(offset: number): boolean {
    return this.body.slice(this.lineStart(offset), offset).trim() === "";
  }

  private eolLengthAt(offset: number): number {
    return this.body.startsWith("\r\n", offset) ? 2 : this.body.startsWith("\n", offset) ? 1 : 0;
  }

  /**
   * What follows a value up to the end of its line: the offset of a comma after it, and the line end (null when
   * something other than blanks, a comma or comments follows on the same line, as in `{"a": 1}`).
   */
  private trailing(from: number): { comma: number | null; lineEnd: number | null } {
    let comma: number | null = null;
    let at = from;
    while (at < this.body.length) {
      const rest = this.body.slice(at);
      const blank = /^[ \t]+/.exec(rest);
      if (blank) at += blank[0].length;
      else if (rest.startsWith(",") && comma === null) comma = at++;
      else if (rest.startsWith("//")) return { comma, lineEnd: at + /^[^\r\n]*/.exec(rest)![0].length };
      else if (rest.startsWith("/*") && rest.includes("*/") && !rest.slice(0, rest.indexOf("*/")).includes("\n"))
        at += rest.indexOf("*/") + 2;
      else if (rest.startsWith("\r\n") || rest.startsWith("\n")) return { comma, lineEnd: at };
      else return { comma, lineEnd: null };
    }
    return { comma, lineEnd: at };
  }

  /** Inserts a new last child: on its own line in a file laid out one item per line, inline in a one-line container. */
  private insertChild(container: Node, multiLine: (indent: string) => string, inline: string): void {
    const children = container.children ?? [];
    const last = children[children.length - 1];
    const closing = container.offset + container.length - 1;
    if (!last) {
      const inside = this.body.slice(container.offset + 1, closing);
      const outer = this.lineIndent(container.offset);
      const indent = outer + this.unit;
      if (inside.trim() === "") this.replace(container.offset + 1, inside.length, this.eol + indent + multiLine(indent) + this.eol + outer);
      else if (this.startsLine(closing)) this.replace(this.lineStart(closing), 0, indent + multiLine(indent) + this.eol);
      else this.replace(closing, 0, this.eol + indent + multiLine(indent) + this.eol + outer);
      return;
    }
    const end = last.offset + last.length;
    const after = this.trailing(end);
    if (after.lineEnd === null || !this.startsLine(last.offset)) {
      this.replace(end, 0, `, ${inline}`);
      return;
    }
    const indent = this.lineIndent(last.offset);
    // A comma after every item (trailing-comma style) gets one after ours too; otherwise ours goes without.
    this.replace(after.lineEnd, 0, this.eol + indent + multiLine(indent) + (after.comma !== null ? "," : ""));
    if (after.comma === null) this.replace(end, 0, ",");
  }
}

function nodeValue(node: Node): unknown {
  if (node.type === "object")
    return Object.fromEntries(
      (node.children ?? []).map((property) => [property.children![0]!.value as string, nodeValue(property.children![1]!)]),
    );
  if (node.type === "array") return (node.children ?? []).map(nodeValue);
  return node.value;
}

/** Structural equality of two JSON values (key order ignored): decides whether an install would change anything. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, index) => sameJson(item, b[index]));
  }
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((key) => key in b && sameJson(a[key], b[key]));
  }
  return a === b;
}
