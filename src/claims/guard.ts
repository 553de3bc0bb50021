/**
 * The pre-edit guard's contract with each agent CLI: which files a tool call is about to change (read from the hook's
 * JSON on stdin), and how to refuse it with a reason the model reads. Pure: no I/O.
 *
 *   Claude Code  PreToolUse, tools Edit, Write, MultiEdit (`tool_input.file_path`), NotebookEdit (`notebook_path`);
 *                refused with `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",
 *                "permissionDecisionReason":…}}` on stdout, exit 0: the reason becomes the tool's result.
 *   Codex CLI    PreToolUse in hooks.json (Claude's format), tool apply_patch: the patch in `tool_input.command`, its
 *                files on `*** Add File:`, `*** Update File:`, `*** Delete File:`, `*** Move to:` lines, relative to
 *                the hook's `cwd`; refused the same way (Codex requires a non-empty reason with a deny).
 *   Gemini CLI   BeforeTool, tools write_file and replace (`tool_input.file_path`); refused with
 *                `{"decision":"deny","reason":…}` on stdout, exit 0: "Tool execution blocked: <reason>" reaches the model.
 *
 * Anything the guard lets through gets no output at all.
 */
import { displayName } from "../mail/names.ts";
import { describeClaim, listBounded, type FileClaim } from "./claims.ts";

export const GUARDED_CLIS = ["claude", "codex", "gemini"] as const;
export type GuardedCli = (typeof GUARDED_CLIS)[number];

/** The tool names each CLI's hook matcher selects (a regular expression in all three). */
export const EDIT_TOOL_MATCHERS: Record<GuardedCli, string> = {
  claude: "Edit|Write|MultiEdit|NotebookEdit",
  codex: "apply_patch|Edit|Write",
  gemini: "write_file|replace",
};

export interface EditAttempt {
  tool: string;
  /** The files as the tool names them: absolute, or relative to `cwd`. */
  files: string[];
  /** The directory the agent runs in, as the hook says; null when it does not say. */
  cwd: string | null;
}

const PATH_KEYS = ["file_path", "notebook_path", "path", "absolute_path"];
const PATCH_FILE = /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$/gm;

/** The files a tool call changes, from the hook's JSON input; null when the input is not a tool call. */
export function editAttemptOf(json: string): EditAttempt | null {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return null;
  }
  if (value === null || typeof value !== "object") return null;
  const { tool_name: tool, tool_input: input, cwd } = value as Record<string, unknown>;
  if (typeof tool !== "string" || input === null || typeof input !== "object") return null;
  const files: string[] = [];
  for (const [key, field] of Object.entries(input as Record<string, unknown>)) {
    if (typeof field !== "string") continue;
    if (PATH_KEYS.includes(key)) files.push(field);
    // A patch (Codex's apply_patch) names its files on header lines.
    else for (const match of field.matchAll(PATCH_FILE)) files.push(match[1]!);
  }
  return { tool, files: [...new Set(files)], cwd: typeof cwd === "string" ? cwd : null };
}

/** The files an edit or commit was refused for, as a refusal names them: at most MAX_LISTED, the rest counted. */
export const refusedFiles = (files: readonly string[]): string => listBounded(files, ", ", (more) => `${more} more files`);

/** What the model is told when an edit is refused: who holds the file, until when, and how to ask (lists bounded). */
export function refusalReason(file: string, held: readonly FileClaim[], now: number): string {
  const holders = [...new Set(held.map((claim) => displayName(claim.holder)))];
  const who = listBounded(holders, " and ", (more) => `${more} more agents`);
  const first = holders[0]!;
  const claims = listBounded(
    held.map((claim) => describeClaim(claim, now)),
    "; ",
    (more) => `and ${more} more claims ('agentmail claims' lists them)`,
  );
  return (
    `agentmail: ${displayName(file)} is claimed by ${who}: ${claims}. ` +
    `Do not edit it now. Ask ${first} to release it (agentmail send ${first} "…", or the send tool), or wait for it ` +
    `(agentmail claim ${displayName(file)} --wait 600, or the claim tool with wait_seconds), then edit. ` +
    `${who} ${holders.length > 1 ? "have" : "has"} been told you asked; you will get mail when it is free.`
  );
}

/** The hook output that refuses the tool call, for each CLI. */
export function refusalOutput(cli: GuardedCli, reason: string): string {
  if (cli === "gemini") return JSON.stringify({ decision: "deny", reason }) + "\n";
  return (
    JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: reason } }) +
    "\n"
  );
}
