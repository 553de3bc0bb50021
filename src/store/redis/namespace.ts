import { readFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { AgentmailError } from "../../mail/errors.ts";

/** Longest namespace accepted: it is part of every key. */
const MAX_NAMESPACE_LENGTH = 300;

function setNamespaceHint(why: string): AgentmailError {
  return new AgentmailError(
    "no_store",
    `${why}; set AGENTMAIL_NAMESPACE to a name your team shares (e.g. the repository's URL), ` +
      "or add an origin remote: git remote add origin <url>",
  );
}

/** The `url` of `[remote "origin"]` in a git config file's text, or null. Quotes and trailing comments are handled. */
export function originUrlFromConfig(text: string): string | null {
  let inOrigin = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    const section = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]/.exec(line);
    if (section) {
      inOrigin = section[1]!.toLowerCase() === "remote" && section[2] === "origin";
      const after = line.slice(section[0].length).trim();
      if (!inOrigin || after === "") continue;
      const inline = /^url\s*=\s*(.*)$/i.exec(after);
      if (inline) return configValue(inline[1]!);
      continue;
    }
    if (!inOrigin) continue;
    const entry = /^url\s*=\s*(.*)$/i.exec(line);
    if (entry) return configValue(entry[1]!);
  }
  return null;
}

/** A git config value: double-quoted parts unquoted, an unquoted `#` or `;` starts a comment. */
function configValue(raw: string): string | null {
  let out = "";
  let quoted = false;
  for (let i = 0; i < raw.length; i++) {
    const char = raw[i]!;
    if (char === "\\" && i + 1 < raw.length) {
      const next = raw[++i]!;
      out += next === "n" ? "\n" : next === "t" ? "\t" : next;
    } else if (char === '"') quoted = !quoted;
    else if (!quoted && (char === "#" || char === ";")) break;
    else out += char;
  }
  const value = out.trim();
  return value === "" ? null : value;
}

/**
 * One form for every way of writing the same remote, so clones made over SSH and over HTTPS share mail:
 * `git@github.com:a/b.git`, `ssh://git@github.com:22/a/b`, `https://user:token@GitHub.com/a/b/` all become
 * `github.com/a/b`. Credentials, the port, a trailing `.git` and `/` are dropped and the host is lower-cased; the
 * path keeps its case (not every host ignores it). A local path becomes `file:` and the absolute path, resolved
 * from `base` when relative.
 */
export function normalizeRemoteUrl(url: string, base: string): string {
  const trimmed = url.trim();
  const tidy = (host: string, path: string) => {
    const cleanPath = path
      .replace(/\/+$/, "")
      .replace(/\.git$/, "")
      .replace(/^\/+/, "")
      .replace(/\/+$/, "");
    return `${host.toLowerCase()}/${cleanPath}`;
  };
  const withScheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/]*)(\/.*)?$/.exec(trimmed);
  if (withScheme) {
    const scheme = withScheme[1]!.toLowerCase();
    if (scheme === "file") return `file:${(withScheme[3] ?? "/").replace(/\/+$/, "").replace(/\.git$/, "")}`;
    const authority = withScheme[2]!.slice(withScheme[2]!.lastIndexOf("@") + 1);
    const host = authority.startsWith("[") ? authority.slice(0, authority.indexOf("]") + 1) : authority.replace(/:\d*$/, "");
    return tidy(host, withScheme[3] ?? "");
  }
  // scp-like syntax: [user@]host:path, where host has no slash before the colon.
  const scp = /^(?:[^@/]+@)?([^:/]+):(.*)$/.exec(trimmed);
  if (scp && !isAbsolute(trimmed)) return tidy(scp[1]!, scp[2]!);
  const path = resolve(base, trimmed);
  return `file:${path.replace(/\/+$/, "").replace(/\.git$/, "")}`;
}

/** AGENTMAIL_NAMESPACE when set, else the normalised origin remote of the repository whose common git dir is given. */
export function resolveNamespace(env: Record<string, string | undefined>, commonDir: string | null): string {
  const given = env.AGENTMAIL_NAMESPACE?.trim();
  if (given) return checkNamespace(given);
  if (commonDir === null) throw setNamespaceHint("the Redis mail store needs a namespace, and this is not inside a git repository");
  let config: string;
  try {
    config = readFileSync(join(commonDir, "config"), "utf8");
  } catch {
    throw setNamespaceHint(`the Redis mail store needs a namespace, and ${join(commonDir, "config")} cannot be read`);
  }
  const origin = originUrlFromConfig(config);
  if (!origin) throw setNamespaceHint("the Redis mail store needs a namespace, and this repository has no origin remote");
  // A relative remote is relative to the work tree: the common dir's parent for a usual `.git`.
  return checkNamespace(normalizeRemoteUrl(origin, dirname(commonDir)));
}

function checkNamespace(namespace: string): string {
  if (namespace.length > MAX_NAMESPACE_LENGTH) {
    const length = `${namespace.length} characters long, over ${MAX_NAMESPACE_LENGTH}`;
    throw new AgentmailError("usage", `the namespace is ${length}; set a shorter AGENTMAIL_NAMESPACE`);
  }
  if (/[\x00-\x1f\x7f]/.test(namespace)) {
    throw new AgentmailError("usage", "the namespace contains control characters; set AGENTMAIL_NAMESPACE to plain text");
  }
  return namespace;
}

/**
 * Every key of a namespace starts with `agentmail:{<namespace>}:`. The namespace is escaped so it never contains
 * `}`: the prefix then ends at the first `}`, no two namespaces share a key, and in a Redis Cluster the braces make
 * one hash slot of a namespace, which the multi-key scripts need. A character up to U+00FF is `%` and two hex digits;
 * a wider space is `%u` and four, a form no two-digit escape and no literal text can make (`%` itself is escaped):
 * with one width for both, `a\u2000b` and `a 00b` were both `a%2000b`, one set of keys for two namespaces.
 */
export function keyPrefix(namespace: string): string {
  return `agentmail:{${namespace.replace(/[%{}\s]/g, escapeKeyChar)}}:`;
}

function escapeKeyChar(char: string): string {
  const code = char.charCodeAt(0);
  const hex = code.toString(16).toUpperCase();
  return code > 0xff ? `%u${hex.padStart(4, "0")}` : `%${hex.padStart(2, "0")}`;
}

/** The namespace a key belongs to (keyPrefix undone), or null when the key is none of agentmail's. */
export function namespaceOfKey(key: string): string | null {
  const start = "agentmail:{";
  const end = key.indexOf("}:");
  if (!key.startsWith(start) || end === -1) return null;
  const namespace = key
    .slice(start.length, end)
    .replace(/%u([0-9A-F]{4})|%([0-9A-F]{2})/g, (_, wide: string | undefined, narrow: string | undefined) =>
      String.fromCharCode(parseInt(wide ?? narrow ?? "", 16)),
    );
  return key.startsWith(keyPrefix(namespace)) ? namespace : null;
}
