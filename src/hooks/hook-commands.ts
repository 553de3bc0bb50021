import { GUARDED_CLIS, type GuardedCli } from "../claims/guard.ts";
import type { BELL_FILE, POINTERS_DIR, READY_FILE, THREAD_POINTER } from "../mail/doorbell.ts";

/**
 * The shell commands agentmail's hooks run, and how to recognise them again in a settings file: installing twice
 * must replace them, and uninstalling must remove them and nothing else. The end-of-turn and post-tool hooks look at
 * the doorbell first, in the shell below; the rule they apply is mail/doorbell.ts's.
 */

/** What each lifecycle moment runs; `binary` is already quoted for the shell. */
export const hookCommand = {
  ready: (binary: string) => `${binary} status ready`,
  onboard: (binary: string) => `${binary} onboard`,
  /** Gemini CLI gives the model only a hook's JSON additionalContext, never its plain stdout. */
  onboardJson: (binary: string) => `${binary} onboard --hook-json`,
  work: (binary: string) => `${binary} status work`,
  /**
   * The end of a turn: with mail, receive exits 2 (the agent goes on with the mail on stderr) and the status stays
   * work; without, it turns ready. The doorbell first (DOORBELL): when it is quiet, the shell marks the agent ready
   * and agentmail does not start at all. One command, not two hooks: agents run the hooks of one event in parallel.
   */
  delivery: (binary: string) => `sh -c '${DOORBELL}' ${binary}`,
  /**
   * Codex CLI's end of a turn: its hooks run in its app-server daemon, whose $TMUX_PANE is the first TUI's, so the
   * doorbell is looked up by the thread the hook serves instead (the `session_id` its input starts with), whose pointer
   * agentmail's commands keep once they know the thread's pane (identity/codex-daemon.ts).
   */
  deliveryInDaemon: (binary: string) => `sh -c '${THREAD_DOORBELL}' ${binary}`,
  /**
   * After each tool call: mail mid-turn, as the post-tool hook's JSON (nothing without mail). Agents call tools many
   * times a turn, so the doorbell first, as at the end of a turn, but without marking the agent ready; Codex CLI's
   * by its thread, as its end of a turn (see deliveryInDaemon).
   */
  afterTool: (binary: string, cli: GuardedCli) =>
    cli === "codex" ? `sh -c '${threadQuietAfterTool(cli)}' ${binary}` : `sh -c '${quietAfterTool(cli)}' ${binary}`,
  offline: (binary: string) => `${binary} status offline`,
  /** Before an edit: refuse it when another agent claimed the file (claims/guard.ts); with auto-claim, claim it first. */
  guard: (binary: string, cli: GuardedCli, autoClaim = false) => `${binary} guard ${cli}${autoClaim ? " --auto-claim" : ""}`,
  /** At session end, with auto-claim: the claims the guard made go with the session. */
  releaseAuto: (binary: string) => `${binary} release --auto`,
} as const;

/**
 * The doorbell's names as the hooks' shell spells them, typed as mail/doorbell.ts's (its rule, and where the
 * pointers lead): a name changed there fails to compile here. Only the types are imported: the hooks' code sharing
 * that module with the store would split it into a chunk of its own, one more for send and receive to load.
 */
const BELL: typeof BELL_FILE = "bell";
const READY: typeof READY_FILE = "ready";
const POINTERS: typeof POINTERS_DIR = ".agentmail";
const THREAD: typeof THREAD_POINTER = "codex-";

/**
 * Where a pointer is in POSIX sh, after `t=${TMUX#*,}`: `${TMUX%%,*}.agentmail/${t%%,*}`, the socket's pointers
 * directory and the server's pid, to which the pane id or the thread's name is added (panePointer, threadPointer).
 */
const POINTER = `\${TMUX%%,*}${POINTERS}/\${t%%,*}`;

/** The pane's pointer in POSIX sh: `d` is the bell dir it leads to (only for an absolute socket, as panePointer). */
const PANE_LOOK = `case $TMUX in /*) t=\${TMUX#*,}; d=${POINTER}$TMUX_PANE; `;

/**
 * A Codex thread's pointer in POSIX sh. The thread id is the UUID after `{"session_id":"`, how Codex's hook input
 * starts: the shell reads only its first 64 bytes (`dd`, one read; sh's `read` takes a byte at a time, and a Stop
 * input carries the model's last message), and only a UUID's shape gets a pointer (as threadPointer).
 */
const THREAD_LOOK =
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansions, for sh to expand
  'case $TMUX in /*) t=${TMUX#*,}; h=$(dd bs=64 count=1 2>/dev/null); s=${h#\\{\\"session_id\\":\\"}; ' +
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansions, for sh to expand
  'r=${s#????????????????????????????????????}; s=${s%"$r"}; case $s in *[!0-9a-f-]*) ;; ' +
  `????????-????-????-????-????????????) d=${POINTER}${THREAD}$s; `;

/**
 * A hook that looks at the doorbell first (mail/doorbell.ts: quiet, that is there and empty, means no mail), run by
 * `sh -c '…' agentmail` whatever shell the agent uses (Codex runs hooks in the user's login shell; zsh would refuse an
 * unmatched pattern, fish the syntax), so `$0` is agentmail; POSIX sh builtins only, and `dd` for a Codex thread.
 * Quiet: exit 0, at the end of a turn (`ready`) once the agent is marked ready. Anything else (no tmux, no pointer, a
 * rung or missing bell, a failed write) runs `agentmail <command>`, which decides itself; for a thread, with the
 * bytes read put back before the rest of the input, which agentmail needs to find the pane.
 */
function doorbellScript(by: "pane" | "thread", quiet: "ready" | "silent", command: string): string {
  const isQuiet = `[ -f "$d/${BELL}" ] && [ ! -s "$d/${BELL}" ]`;
  const noMail = quiet === "ready" ? `${isQuiet} && : >"$d/${READY}" && exit 0;;` : `${isQuiet} && exit 0;;`;
  if (by === "pane") return `${PANE_LOOK}${noMail} esac; exec "$0" ${command}`;
  return `${THREAD_LOOK}${noMail} esac;; esac; { printf %s "$h"; exec cat; } | "$0" ${command}`;
}

const DOORBELL = doorbellScript("pane", "ready", "receive --hook --ready");
const THREAD_DOORBELL = doorbellScript("thread", "ready", "receive --hook --ready");
const quietAfterTool = (cli: GuardedCli) => doorbellScript("pane", "silent", `receive --after-tool ${cli}`);
const threadQuietAfterTool = (cli: GuardedCli) => doorbellScript("thread", "silent", `receive --after-tool ${cli}`);

/** What earlier installs wrote for Codex CLI, which ran agentmail on every turn and tool call. */
const plainAfterTool = (binary: string, cli: GuardedCli) => `${binary} receive --after-tool ${cli}`;
const plainDeliveryInDaemon = (binary: string) => `${binary} receive --hook --ready`;

/**
 * Also ours: what earlier installs of agentmail wrote (the Stop hook as two commands; the Go version's Stop hook
 * ran receive --hook alone), so an install replaces them and an uninstall removes them.
 */
const RECOGNISED: ((binary: string) => string)[] = [
  hookCommand.ready,
  hookCommand.onboard,
  hookCommand.onboardJson,
  hookCommand.work,
  hookCommand.delivery,
  hookCommand.deliveryInDaemon,
  plainDeliveryInDaemon,
  hookCommand.offline,
  hookCommand.releaseAuto,
  ...GUARDED_CLIS.flatMap((cli) => [
    (binary: string) => hookCommand.guard(binary, cli),
    (binary: string) => hookCommand.guard(binary, cli, true),
    (binary: string) => hookCommand.afterTool(binary, cli),
    (binary: string) => plainAfterTool(binary, cli),
  ]),
  (binary: string) => `${binary} receive --hook && ${binary} status ready`,
  (binary: string) => `${binary} receive --hook`,
];

/** The `sh -c '…' ` before agentmail's name in the commands that look at the doorbell first. */
const SHELL_PREFIXES = [DOORBELL, THREAD_DOORBELL, ...GUARDED_CLIS.flatMap((cli) => [quietAfterTool(cli), threadQuietAfterTool(cli)])].map(
  (script) => `sh -c '${script}' `,
);

/**
 * The shell word that names agentmail in one of our commands, as typed (`raw`) and as the shell reads it (`value`):
 * the first word, or the last of a doorbell hook's `sh -c '…' agentmail`.
 */
function binaryWord(command: string): { raw: string; value: string } | null {
  const prefix = SHELL_PREFIXES.find((candidate) => command.startsWith(candidate));
  if (prefix === undefined) return firstWord(command);
  const word = firstWord(command.slice(prefix.length));
  return word && prefix.length + word.raw.length === command.length ? word : null;
}

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
  const word = binaryWord(command.trim());
  if (!word) return false;
  const name = basename(word.value);
  if (!name.startsWith("agentmail") && word.value !== binary) return false;
  return RECOGNISED.some((make) => make(word.raw) === command.trim());
}

/** The program an agentmail hook command runs, as the shell reads it (`/opt/my tools/agentmail`), or null. */
export function hookBinary(command: string): string | null {
  return binaryWord(command.trim())?.value ?? null;
}
