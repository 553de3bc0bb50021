import { GUARDED_CLIS, type GuardedCli } from "../claims/guard.ts";

/**
 * The shell commands agentmail's hooks run, and how to recognise them again in a settings file: installing twice
 * must replace them, and uninstalling must remove them and nothing else.
 */

/** What each lifecycle moment runs; `binary` is already quoted for the shell. */
export const hookCommand = {
  ready: (binary: string) => `${binary} status ready`,
  onboard: (binary: string) => `${binary} onboard`,
  /** Gemini CLI gives the model only a hook's JSON additionalContext, never its plain stdout. */
  onboardJson: (binary: string) => `${binary} onboard --hook-json`,
  work: (binary: string) => `${binary} status work`,
  /**
   * One command, not two hooks: agents run the hooks of one event in parallel, so "then" needs `&&`. With mail,
   * receive exits 2 (the agent goes on with the mail on stderr) and the status stays work; without, it turns ready.
   */
  delivery: (binary: string) => `${binary} receive --hook && ${binary} status ready`,
  /** After each tool call: mail mid-turn, as the post-tool hook's JSON (nothing without mail). */
  afterTool: (binary: string, cli: GuardedCli) => `${binary} receive --after-tool ${cli}`,
  offline: (binary: string) => `${binary} status offline`,
  /** Before an edit: refuse it when another agent claimed the file (claims/guard.ts); with auto-claim, claim it first. */
  guard: (binary: string, cli: GuardedCli, autoClaim = false) => `${binary} guard ${cli}${autoClaim ? " --auto-claim" : ""}`,
  /** At session end, with auto-claim: the claims the guard made go with the session. */
  releaseAuto: (binary: string) => `${binary} release --auto`,
} as const;

/** Also ours: what other installs of agentmail wrote (the Go version's Stop hook ran receive --hook alone). */
const RECOGNISED: ((binary: string) => string)[] = [
  hookCommand.ready,
  hookCommand.onboard,
  hookCommand.onboardJson,
  hookCommand.work,
  hookCommand.delivery,
  hookCommand.offline,
  hookCommand.releaseAuto,
  ...GUARDED_CLIS.flatMap((cli) => [
    (binary: string) => hookCommand.guard(binary, cli),
    (binary: string) => hookCommand.guard(binary, cli, true),
    (binary: string) => hookCommand.afterTool(binary, cli),
  ]),
  (binary: string) => `${binary} receive --hook`,
];

/** The first shell word of a command as typed (`raw`) and as the shell reads it (`value`), for the quoting we write. */
function firstWord(command: string): { raw: string; value: string } | null {
  if (command.startsWith("'")) {
    const match = /^'((?:[^']|'\\'')*)'/.exec(command);
    return match ? { raw: match[0], value: match[1]!.replaceAll(`'\\''`, "'") } : null;
  }
  const match = /^[^\s'"]+/.exec(command);
  return match ? { raw: match[0], value: match[0] } : null;
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/**
 * Whether a hook command is one of ours: one of the commands above, run by a binary named agentmail* (the release
 * binaries are agentmail-<os>-<arch>) or by `binary`, the path this install uses.
 */
export function isAgentmailHookCommand(command: string, binary?: string): boolean {
  const word = firstWord(command.trim());
  if (!word) return false;
  const name = basename(word.value);
  if (!name.startsWith("agentmail") && word.value !== binary) return false;
  return RECOGNISED.some((make) => make(word.raw) === command.trim());
}

/** The program an agentmail hook command runs, as the shell reads it (`/opt/my tools/agentmail`), or null. */
export function hookBinary(command: string): string | null {
  return firstWord(command.trim())?.value ?? null;
}
