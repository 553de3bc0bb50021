/**
 * agentmail's MCP server in Codex CLI's config.toml, as one block between two marker comments: installing appends
 * it (or replaces it where it is), uninstalling cuts it out, and every byte outside it stays as it was.
 *
 * TOML is only parsed, never rewritten, so no TOML library is needed: Bun's built-in parser (strict about redefined
 * tables and keys) checks the file before and after, and the edit is refused unless the only change to the parsed
 * document is our server entry.
 */
import { AgentmailError } from "../mail/errors.ts";
import { sameJson, type JsonObject } from "./json-document.ts";
import { MCP_SERVER_NAME } from "./json-settings.ts";

export const BLOCK_START = "# >>> agentmail: written by 'agentmail hooks install codex'; 'agentmail hooks uninstall codex' removes it >>>";
export const BLOCK_END = "# <<< agentmail <<<";

export interface CodexServer {
  command: string;
  args: string[];
  /** Variables Codex passes on to the server; it passes almost none by default, and identity needs TMUX and TMUX_PANE. */
  envVars: string[];
  toolTimeoutSec: number;
}

const tomlString = (value: string) => JSON.stringify(value);

function blockLines(server: CodexServer): string[] {
  return [
    BLOCK_START,
    `[mcp_servers.${MCP_SERVER_NAME}]`,
    `command = ${tomlString(server.command)}`,
    `args = [${server.args.map(tomlString).join(", ")}]`,
    `env_vars = [${server.envVars.map(tomlString).join(", ")}]`,
    `tool_timeout_sec = ${server.toolTimeoutSec}`,
    BLOCK_END,
  ];
}

/** A TOML settings file, parsed; one that does not parse is refused before anything is changed. */
export function parseToml(text: string, label: string): JsonObject {
  try {
    return Bun.TOML.parse(text) as JsonObject;
  } catch (error) {
    const reason = (error as Error).message.replace(/^TOML Parse error: /, "");
    throw new AgentmailError(
      "conflict",
      `cannot parse ${label} as TOML (${reason}); fix it or move it away, then run the command again; nothing was changed`,
    );
  }
}

/** The parsed document without our server: what must not change. */
function withoutOurServer(document: JsonObject): JsonObject {
  const servers = document.mcp_servers;
  if (typeof servers !== "object" || servers === null || !(MCP_SERVER_NAME in servers)) return document;
  const { [MCP_SERVER_NAME]: _ours, ...others } = servers as JsonObject;
  const { mcp_servers: _all, ...rest } = document;
  return Object.keys(others).length > 0 ? { ...rest, mcp_servers: others } : rest;
}

interface Located {
  lines: string[];
  /** Index of the start marker and of the end marker, or null when there is no block. */
  block: { start: number; end: number } | null;
  eol: string;
  endsWithNewline: boolean;
}

function locate(text: string, label: string): Located {
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const endsWithNewline = text.endsWith("\n");
  const lines = text === "" ? [] : text.replace(/\r?\n$/, "").split(/\r?\n/);
  const starts = lines.flatMap((line, index) => (line === BLOCK_START ? [index] : []));
  const ends = lines.flatMap((line, index) => (line === BLOCK_END ? [index] : []));
  if (starts.length === 0 && ends.length === 0) return { lines, block: null, eol, endsWithNewline };
  if (starts.length !== 1 || ends.length !== 1 || ends[0]! < starts[0]!) {
    throw new AgentmailError(
      "conflict",
      `${label} has a damaged agentmail block (its marker lines are missing, repeated or out of order); remove the lines between and including the "# >>> agentmail" and "# <<< agentmail <<<" markers by hand, then run the command again; nothing was changed`,
    );
  }
  return { lines, block: { start: starts[0]!, end: ends[0]! }, eol, endsWithNewline };
}

function join(lines: string[], eol: string, endsWithNewline: boolean): string {
  return lines.length === 0 ? "" : lines.join(eol) + (endsWithNewline ? eol : "");
}

/** Checks that an edit changed nothing but our server entry, and that the result still parses. */
function checked(before: JsonObject, after: string, label: string): string {
  const parsed = parseToml(after, `${label} after the edit`);
  if (!sameJson(withoutOurServer(parsed), withoutOurServer(before))) {
    throw new AgentmailError(
      "conflict",
      `editing ${label} would change settings outside agentmail's block (keys written after the block belong to its table in TOML); move them above the "# >>> agentmail" line, then run the command again; nothing was changed`,
    );
  }
  return after;
}

export function installCodexServer(text: string, server: CodexServer, label: string): string {
  const before = parseToml(text, label);
  const { lines, block, eol, endsWithNewline } = locate(text, label);
  const wanted = blockLines(server);
  if (block) {
    const current = lines.slice(block.start, block.end + 1);
    if (current.length === wanted.length && current.every((line, index) => line === wanted[index])) return text;
    return checked(before, join([...lines.slice(0, block.start), ...wanted, ...lines.slice(block.end + 1)], eol, endsWithNewline), label);
  }
  const servers = before.mcp_servers;
  if (typeof servers === "object" && servers !== null && MCP_SERVER_NAME in servers) {
    throw new AgentmailError(
      "conflict",
      `${label} already defines [mcp_servers.${MCP_SERVER_NAME}] outside an agentmail block; remove that table by hand (or keep yours and skip this install), then run the command again; nothing was changed`,
    );
  }
  const separator = lines.length > 0 && lines[lines.length - 1]!.trim() !== "" ? [""] : [];
  return checked(before, join([...lines, ...separator, ...wanted], eol, true), label);
}

export function uninstallCodexServer(text: string, label: string): string {
  const before = parseToml(text, label);
  const { lines, block, eol, endsWithNewline } = locate(text, label);
  if (!block) return text;
  let from = block.start;
  // The blank line install put before the block goes with it.
  if (from > 0 && lines[from - 1]!.trim() === "" && block.end === lines.length - 1) from--;
  return checked(before, join([...lines.slice(0, from), ...lines.slice(block.end + 1)], eol, endsWithNewline), label);
}
