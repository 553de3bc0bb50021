/**
 * Codex CLI runs a hook only once the user has trusted it, and skips untrusted ones without a word: trust is a
 * `[hooks.state."<hooks.json>:<event>:<group>:<handler>"]` table with `trusted_hash` in the user's config.toml (only
 * the user's layer counts, so a repository cannot trust its own hooks), and a project's `.codex/` is read at all only
 * when `[projects."<root>"] trust_level = "trusted"`.
 *
 * The hash is Codex's own (codex-rs hooks discovery, `command_hook_hash`): SHA-256 of the compact JSON, keys sorted,
 * of `{event_name, hooks: [handler]}` with the handler normalized (its effective `timeout`, `async` false, absent
 * options left out). Checked against `codex app-server`'s `hooks/list` for Codex CLI 0.169.0 by the agents suite.
 *
 * What `--trust` adds sits in one marked block per hooks file, so uninstalling removes exactly that.
 */
import { createHash } from "node:crypto";
import { AgentmailError } from "../mail/errors.ts";
import { isAgentmailHookCommand } from "./hook-commands.ts";
import { isObject, sameJson, type JsonObject } from "./json-document.ts";
import { parseToml } from "./toml-block.ts";
import { homedir } from "node:os";
import { join } from "node:path";
import type { Scope } from "../mail/agents.ts";
import { readConfigFile } from "./config-files.ts";
import { findRepository } from "../store/paths.ts";
import type { Invocation } from "../identity/invocation.ts";

/** The events agentmail installs, by the name hooks.json uses and the label Codex puts in keys and hashes. */
const EVENT_LABELS: Record<string, string> = {
  SessionStart: "session_start",
  UserPromptSubmit: "user_prompt_submit",
  Stop: "stop",
  SessionEnd: "session_end",
  PreToolUse: "pre_tool_use",
  PostToolUse: "post_tool_use",
};

/** The events whose matcher Codex applies, and so hashes with the hook; it ignores the matcher of the others. */
const MATCHED_EVENTS = new Set(["SessionStart", "PreToolUse"]);

/**
 * The timeout Codex runs (and hashes) a hook with, in seconds: 600 unless set, at least 1; a session-end hook gets
 * 1 unless set, and at most 3 (measured with Codex CLI 0.169.0's hooks/list).
 */
function effectiveTimeout(event: string, timeout: unknown): number {
  const given = typeof timeout === "number" && Number.isFinite(timeout) ? Math.floor(timeout) : undefined;
  if (event === "SessionEnd") return Math.min(3, Math.max(1, given ?? 1));
  return Math.max(1, given ?? 600);
}

export interface CodexHook {
  /** Codex's key for the hook: `<hooks.json path>:<event>:<group index>:<handler index>`. */
  key: string;
  command: string;
  /** The `trusted_hash` that trusts this hook as it is written. */
  hash: string;
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, canonical(value[key])]),
  );
}

/** Codex's trust hash of one command hook of `event` (a hooks.json event name). */
export function codexHookHash(event: string, hook: JsonObject, matcher?: string): string {
  const handler: JsonObject = {
    type: "command",
    command: hook.command,
    timeout: effectiveTimeout(event, hook.timeout),
    async: hook.async === true,
  };
  if (typeof hook.statusMessage === "string") handler.statusMessage = hook.statusMessage;
  const identity: JsonObject = { event_name: EVENT_LABELS[event] ?? event, hooks: [handler] };
  if (matcher !== undefined) identity.matcher = matcher;
  return (
    "sha256:" +
    createHash("sha256")
      .update(JSON.stringify(canonical(identity)))
      .digest("hex")
  );
}

/** agentmail's hooks in a Codex hooks.json (as it will be written), with the keys and hashes that trust them. */
export function agentmailCodexHooks(hooksPath: string, hooksText: string, binary?: string): CodexHook[] {
  let document: unknown;
  try {
    document = JSON.parse(hooksText);
  } catch {
    return [];
  }
  const events = isObject(document) && isObject(document.hooks) ? document.hooks : {};
  const found: CodexHook[] = [];
  for (const [event, groups] of Object.entries(events)) {
    if (!(event in EVENT_LABELS) || !Array.isArray(groups)) continue;
    groups.forEach((group, groupIndex) => {
      if (!isObject(group) || !Array.isArray(group.hooks)) return;
      const matcher = typeof group.matcher === "string" && MATCHED_EVENTS.has(event) ? group.matcher : undefined;
      group.hooks.forEach((hook, handlerIndex) => {
        if (!isObject(hook) || hook.type !== "command" || typeof hook.command !== "string") return;
        if (!isAgentmailHookCommand(hook.command, binary)) return;
        found.push({
          key: `${hooksPath}:${EVENT_LABELS[event]}:${groupIndex}:${handlerIndex}`,
          command: hook.command,
          hash: codexHookHash(event, hook, matcher),
        });
      });
    });
  }
  return found;
}

const TRUST_END = "# <<< agentmail trust <<<";
const trustStart = (hooksPath: string) =>
  `# >>> agentmail trust for ${hooksPath}: written by 'agentmail hooks install codex --trust'; ` +
  `'agentmail hooks uninstall codex' removes it >>>`;
const tomlString = (value: string) => JSON.stringify(value);

/** The text with this hooks file's trust block (and the blank line before it) cut out. */
function withoutBlock(text: string, hooksPath: string, label: string): { lines: string[]; eol: string; at: number | null } {
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const lines = text === "" ? [] : text.replace(/\r?\n$/, "").split(/\r?\n/);
  const start = lines.indexOf(trustStart(hooksPath));
  if (start < 0) return { lines, eol, at: null };
  const end = lines.indexOf(TRUST_END, start);
  const nested = lines.slice(start + 1, end < 0 ? lines.length : end).some((line) => line.startsWith("# >>> agentmail"));
  if (end < 0 || nested) {
    throw new AgentmailError(
      "conflict",
      `${label} has a damaged agentmail trust block for ${hooksPath}; remove the lines between and including its ` +
        `"# >>> agentmail trust" and "${TRUST_END}" markers by hand, then run the command again; nothing was changed`,
    );
  }
  const from = start > 0 && lines[start - 1]!.trim() === "" ? start - 1 : start;
  return { lines: [...lines.slice(0, from), ...lines.slice(end + 1)], eol, at: from };
}

const joinLines = (lines: string[], eol: string) => (lines.length === 0 ? "" : lines.join(eol) + eol);

function tableAt(document: JsonObject, path: string[]): unknown {
  let value: unknown = document;
  for (const key of path) value = isObject(value) ? value[key] : undefined;
  return value;
}

export interface TrustRequest {
  hooksPath: string;
  hooks: CodexHook[];
  /** The project whose `.codex/` Codex must read (project installs), or null (user installs). */
  projectRoot: string | null;
}

/**
 * Writes (or replaces) the trust block for one hooks file in the user's config.toml: the project's trust unless the
 * user already trusts it, and a `trusted_hash` for each of agentmail's hooks the user has not trusted yet. Refuses,
 * changing nothing, when the user marked the project untrusted or set a hook's state themselves.
 */
export function installCodexTrust(text: string, request: TrustRequest, label: string): string {
  parseToml(text, label);
  const { lines, eol, at } = withoutBlock(text, request.hooksPath, label);
  const rest = joinLines(lines, eol);
  const outside = parseToml(rest, label);
  const block: string[] = [];
  const expected = structuredClone(outside);
  if (request.projectRoot !== null) {
    const project = tableAt(outside, ["projects", request.projectRoot]);
    const level = isObject(project) ? project.trust_level : undefined;
    if (project !== undefined && level !== "trusted") {
      throw new AgentmailError(
        "conflict",
        `${label} sets trust_level = ${JSON.stringify(level ?? null)} for ${request.projectRoot}, so Codex ignores its .codex/; ` +
          `set it to "trusted" there if you trust this project, then run the command again; nothing was changed`,
      );
    }
    if (project === undefined) {
      block.push(`[projects.${tomlString(request.projectRoot)}]`, `trust_level = "trusted"`);
      ((expected.projects ??= {}) as JsonObject)[request.projectRoot] = { trust_level: "trusted" };
    }
  }
  for (const hook of request.hooks) {
    const state = tableAt(outside, ["hooks", "state", hook.key]);
    if (isObject(state) && state.trusted_hash === hook.hash && state.enabled !== false) continue;
    if (state !== undefined) {
      throw new AgentmailError(
        "conflict",
        `${label} already has [hooks.state.${tomlString(hook.key)}] (an older trust, or the hook disabled); ` +
          `remove that table by hand, then run the command again; nothing was changed`,
      );
    }
    if (block.length > 0) block.push("");
    block.push(`[hooks.state.${tomlString(hook.key)}]`, `trusted_hash = ${tomlString(hook.hash)}`);
    const hooks = (expected.hooks ??= {}) as JsonObject;
    ((hooks.state ??= {}) as JsonObject)[hook.key] = { trusted_hash: hook.hash };
  }
  if (block.length === 0) return at === null ? text : rest;
  const wrapped = [trustStart(request.hooksPath), ...block, TRUST_END];
  // Where the block was, or at the end; a blank line before it, as a separate paragraph.
  const position = at ?? lines.length;
  const before = lines.slice(0, position);
  const separator = before.length > 0 && before[before.length - 1]!.trim() !== "" ? [""] : [];
  const after = joinLines([...before, ...separator, ...wrapped, ...lines.slice(position)], eol);
  if (after === text) return text;
  if (!sameJson(parseToml(after, `${label} after the edit`), expected)) {
    throw new AgentmailError(
      "conflict",
      `adding agentmail's trust to ${label} would change other settings (keys after the block would fall into its table ` +
        `in TOML); move them above it, then run the command again; nothing was changed`,
    );
  }
  return after;
}

/** Removes the trust block for one hooks file, if there is one. */
export function uninstallCodexTrust(text: string, hooksPath: string, label: string): string {
  if (!text.includes(trustStart(hooksPath))) return text;
  const { lines, eol } = withoutBlock(text, hooksPath, label);
  const after = joinLines(lines, eol);
  parseToml(after, `${label} after the edit`);
  return after;
}

interface UntrustedHook {
  key: string;
  command: string;
  /** untrusted: never trusted; modified: trusted as it was, changed since; disabled: turned off by the user. */
  status: "untrusted" | "modified" | "disabled";
}

export interface CodexTrustReport {
  /** False when the project's `.codex/` is not read at all (project installs only; null for user installs). */
  projectTrusted: boolean | null;
  untrusted: UntrustedHook[];
}

/** Which of agentmail's hooks Codex would skip, read from the user's config.toml (for `doctor`). */
export function codexTrustReport(configText: string, hooks: CodexHook[], projectRoot: string | null): CodexTrustReport {
  let config: JsonObject = {};
  try {
    config = Bun.TOML.parse(configText) as JsonObject;
  } catch {
    // An unparseable config trusts nothing.
  }
  const project = projectRoot === null ? undefined : tableAt(config, ["projects", projectRoot]);
  const projectTrusted = projectRoot === null ? null : isObject(project) && project.trust_level === "trusted";
  const untrusted = hooks.flatMap((hook): UntrustedHook[] => {
    const state = tableAt(config, ["hooks", "state", hook.key]);
    if (isObject(state) && state.enabled === false) return [{ key: hook.key, command: hook.command, status: "disabled" }];
    const trusted = isObject(state) ? state.trusted_hash : undefined;
    if (trusted === hook.hash) return [];
    return [{ key: hook.key, command: hook.command, status: trusted === undefined ? "untrusted" : "modified" }];
  });
  return { projectTrusted, untrusted };
}

/**
 * Whether Codex CLI will run the agentmail hooks installed for a project or a user: Codex skips hooks the user has
 * not trusted without a word, so `doctor` reports them (with the step that fixes it: `hooks install codex --trust`).
 */
export interface CodexHookTrust extends CodexTrustReport {
  /** The hooks.json looked at, and the user's config.toml whose trust counts. */
  hooksPath: string;
  configPath: string;
  /** How many agentmail hooks the hooks file holds (0: nothing installed there). */
  hooks: number;
}

export function codexHookTrust(invocation: Invocation, scope: Scope): CodexHookTrust {
  const home = invocation.env.HOME || homedir();
  const userDir = invocation.env.CODEX_HOME || join(home, ".codex");
  const projectRoot = scope === "project" ? (findRepository(invocation.cwd, invocation.env)?.workTree ?? invocation.cwd) : null;
  const hooksPath = join(projectRoot === null ? userDir : join(projectRoot, ".codex"), "hooks.json");
  const configPath = join(userDir, "config.toml");
  const hooks = agentmailCodexHooks(hooksPath, readConfigFile(hooksPath).text);
  return { hooksPath, configPath, hooks: hooks.length, ...codexTrustReport(readConfigFile(configPath).text, hooks, projectRoot) };
}
