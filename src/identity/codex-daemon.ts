/**
 * Which agent a hook speaks for when Codex CLI runs it in its app-server daemon.
 *
 * An interactive `codex` runs its threads, and their hooks, in one app-server daemon per CODEX_HOME, started by the
 * first TUI with that TUI's environment. So every hook of every TUI sharing the daemon sees the first TUI's TMUX_PANE
 * (and AGENTMAIL_NAME): measured on 0.169.0, two TUIs in panes %1 and %2, all hook runs said %1. A hook that trusted
 * it would file the second agent's status and mail under the first. Headless `codex exec` runs hooks itself, with
 * its own environment, and is not affected.
 *
 * The hook's input names its thread (`session_id`) and the thread's working directory (`cwd`). The TUI showing that
 * thread runs in that directory with the daemon's CODEX_HOME: its environment (read from /proc) holds the pane's
 * TMUX, TMUX_PANE and agentmail variables. Two TUIs of one daemon in one directory cannot be told apart (on two tmux
 * servers, or one of them outside tmux, as much as in two panes): then the hook speaks for nobody (it does nothing,
 * silently), which is better than for the wrong agent; `doctor` says so.
 */
import { mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentCli } from "../tmux/foreground.ts";

type Env = Record<string, string | undefined>;

/** The variables a pane's identity and store come from: taken from the TUI's environment, all or none. */
const PANE_VARIABLES = ["TMUX", "TMUX_PANE", "AGENTMAIL_NAME", "AGENTMAIL_DIR", "AGENTMAIL_URL", "AGENTMAIL_NAMESPACE", "AGENTMAIL_HOST"];

/** How many ancestors up the daemon may be: the hook's shell, agentmail's own wrapper or shim, then the daemon. */
const ANCESTORS = 4;

function argvOf(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8")
      .split("\0")
      .filter((arg) => arg !== "");
  } catch {
    return [];
  }
}

function parentOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return 0;
  }
}

function exeOf(pid: number): string | null {
  try {
    return readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return null;
  }
}

/** A Codex app-server: the daemon (`codex app-server --listen … --managed-daemon`) or its updater. */
const isAppServer = (pid: number, argv: readonly string[]) =>
  argv.includes("app-server") && agentCli({ exe: exeOf(pid), argv, comm: "" }) === "codex";

/**
 * The Codex app-server daemon among this process's near ancestors, with the daemon's child this process descends
 * from (the hook's own shell, which every command of one hook shares), or null (on every other path).
 */
export function codexDaemonAncestor(start = process.ppid): { daemon: number; hookShell: number } | null {
  let child = process.pid;
  for (let pid = start, depth = 0; pid > 1 && depth < ANCESTORS; child = pid, pid = parentOf(pid), depth++) {
    const argv = argvOf(pid);
    if (argv.includes("app-server") && isAppServer(pid, argv)) return { daemon: pid, hookShell: child };
  }
  return null;
}

function environOf(pid: number): Record<string, string> {
  const env: Record<string, string> = {};
  try {
    for (const entry of readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")) {
      const equals = entry.indexOf("=");
      if (equals > 0) env[entry.slice(0, equals)] = entry.slice(equals + 1);
    }
  } catch {
    // Not ours to read: not a candidate.
  }
  return env;
}

const realOrSelf = (path: string) => {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
};

const codexHomeIn = (env: Env) => realOrSelf(env.CODEX_HOME || join(env.HOME ?? "", ".codex"));

/** A field of the hook input (its JSON) that names something, or null when the input says none. */
function inputField(input: string, name: "session_id" | "cwd"): string | null {
  try {
    const value = (JSON.parse(input) as Record<string, unknown> | null)?.[name];
    return typeof value === "string" && value !== "" ? value : null;
  } catch {
    return null;
  }
}

/** The hook input's thread id (`session_id`), or null when the input says none. */
export const hookThreadId = (input: string): string | null => inputField(input, "session_id");

/** The hook input's thread directory (`cwd`), or null when the input says none. */
export const threadDirectory = (input: string): string | null => inputField(input, "cwd");

/** A process's controlling terminal (`tty_nr`, field 7 of /proc/<pid>/stat), or null without one (or gone). */
export function terminalOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const tty = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[4];
    return tty === undefined || tty === "0" ? null : tty;
  } catch {
    return null;
  }
}

/** A Codex TUI: its terminal (what tells two apart) and its environment. */
interface CodexTui {
  terminal: string;
  env: Record<string, string>;
}

/**
 * The Codex TUIs (not app-servers) running in `cwd` with the CODEX_HOME `home`, one per terminal (the node wrapper and
 * the native binary of one TUI share it), in tmux or not: a TUI outside tmux shares the daemon as much as one in a
 * pane, and counts as much when two cannot be told apart.
 */
export function codexTuisIn(cwd: string, home: string): CodexTui[] {
  const realHome = realOrSelf(home);
  const byTerminal = new Map<string, CodexTui>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const argv = argvOf(pid);
    if (argv.length === 0 || argv.includes("app-server") || agentCli({ exe: exeOf(pid), argv, comm: "" }) !== "codex") continue;
    let dir: string;
    try {
      dir = readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      continue;
    }
    if (dir !== cwd) continue;
    const theirs = environOf(pid);
    if (codexHomeIn(theirs) !== realHome) continue;
    const terminal = terminalOf(pid) ?? `pid ${pid}`;
    byTerminal.set(terminal, { terminal, env: theirs });
  }
  return [...byTerminal.values()];
}

/**
 * The pane variables found for a hook's shell, kept for the other commands of the same hook: the end-of-turn hook is
 * `receive --hook && status ready`, and the first command reads the hook's input (stdin) to its end. A file per hook
 * shell (its pid and start time) in a directory of this user's; files older than a minute are removed.
 */
function paneCache(hookShell: number): string | null {
  const stat = (() => {
    try {
      const text = readFileSync(`/proc/${hookShell}/stat`, "utf8");
      return text.slice(text.lastIndexOf(")") + 2).split(" ")[19];
    } catch {
      return null;
    }
  })();
  if (stat === null) return null;
  const dir = join(process.env.XDG_RUNTIME_DIR || tmpdir(), `agentmail-${process.getuid?.() ?? "user"}`, "codex-hooks");
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const now = Date.now();
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (now - statSync(path).mtimeMs > 60_000) rmSync(path, { force: true });
    }
  } catch {
    return null;
  }
  return join(dir, `${hookShell}-${stat}.json`);
}

function paneVariablesOf(source: Record<string, string | undefined>): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const name of PANE_VARIABLES) if (source[name] !== undefined) variables[name] = source[name]!;
  return variables;
}

/**
 * For a hook run in Codex's app-server daemon (`hookShell`: the daemon's child it descends from): `env` with the pane
 * variables of the TUI that shows the hook's thread (`input`: the hook's JSON; empty when an earlier command of the
 * same hook read it, which left what it found for this one), or null when no single TUI does (the hook does nothing).
 */
export function paneEnvironment(env: Env, input: string, hookShell: number): Env | null {
  const cache = paneCache(hookShell);
  let variables: Record<string, string> | null = null;
  const cwd = threadDirectory(input);
  if (cwd !== null) {
    const tuis = codexTuisIn(realOrSelf(cwd), env.CODEX_HOME || join(env.HOME ?? "", ".codex"));
    // One TUI in that directory, and in a pane: a TUI outside tmux is nobody's pane, and two cannot be told apart.
    if (tuis.length !== 1 || !tuis[0]!.env.TMUX_PANE) return null;
    variables = paneVariablesOf(tuis[0]!.env);
    if (cache !== null) {
      try {
        writeFileSync(cache, JSON.stringify(variables), { mode: 0o600 });
      } catch {
        // The hook's next command, if any, then does nothing.
      }
    }
  } else if (cache !== null) {
    try {
      variables = JSON.parse(readFileSync(cache, "utf8"));
    } catch {
      return null;
    }
  }
  if (variables === null) return null;
  const mapped: Env = { ...env };
  for (const name of PANE_VARIABLES) {
    if (variables[name] === undefined) delete mapped[name];
    else mapped[name] = variables[name];
  }
  return mapped;
}
