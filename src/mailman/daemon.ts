import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { AgentmailError } from "../mail/errors.ts";
import { mailmanAlreadyRuns, mailmanDir, mailmanLogPath, runningMailman, type MailmanRecord, type Starter } from "./files.ts";
import { isGone } from "../store/durable/process-identity.ts";

const START_TIMEOUT_MS = 5_000;

/** The command line that runs this same agentmail: the compiled binary itself, or bun with the entry script. */
export function selfCommand(): string[] {
  const script = process.argv[1];
  return script && !script.startsWith("/$bunfs/") && /\.[cm]?[jt]s$/.test(script) ? [process.execPath, script] : [process.execPath];
}

function tail(path: string, lines: number): string {
  try {
    return readFileSync(path, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

type Env = Record<string, string | undefined>;

/** Where a mailman a session start brings up learns who started it (files.ts `Starter`, as JSON). */
export const STARTER_VARIABLE = "AGENTMAIL_MAILMAN_STARTED_BY";

/** The variables of an agent's environment a mailman it brings up needs: no API key or token goes with them. */
const KEPT_VARIABLES =
  /^(PATH|HOME|USER|LOGNAME|SHELL|LANG|LANGUAGE|TZ|TMPDIR|TMUX|NO_COLOR|LC_\w+|XDG_\w+|AGENTMAIL_\w+|GIT_\w+|CLAUDE_CONFIG_DIR|CODEX_HOME|GEMINI_CLI_HOME|NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR)$/;

/**
 * The environment of a mailman an agent's session start brings up: the variables agentmail reads (where the store is,
 * which tmux server, where the agent CLIs keep their sessions), not the agent's secrets, and who started it.
 */
export function mailmanEnvironment(env: Env, starter: Starter): Env {
  const kept: Env = {};
  for (const [name, value] of Object.entries(env)) if (KEPT_VARIABLES.test(name) && name !== "AGENTMAIL_NAME") kept[name] = value;
  kept[STARTER_VARIABLE] = JSON.stringify(starter);
  return kept;
}

/**
 * Starts `agentmail mailman <args>` for `root` as a detached child: its own session, stdio on the log file, the store
 * passed explicitly. Says its pid, and whether it has exited yet (its code), while this process runs.
 */
export function spawnMailman(
  root: string,
  args: string[],
  env: Env,
  self: string[] = selfCommand(),
): { pid: number | undefined; exited: () => number | null } {
  mkdirSync(mailmanDir(root), { recursive: true, mode: 0o700 });
  const logFd = openSync(mailmanLogPath(root), "a", 0o600);
  const [command, ...prefix] = self;
  let exited: number | null = null;
  try {
    const child = spawn(command!, [...prefix, "mailman", ...args], {
      detached: true,
      stdio: ["ignore", logFd, logFd],
      env: { ...env, AGENTMAIL_DIR: root },
    });
    child.on("exit", (code) => (exited = code ?? 1));
    child.unref();
    return { pid: child.pid, exited: () => exited };
  } finally {
    closeSync(logFd);
  }
}

/**
 * Starts the mailman of `store` (its label) in the background (spawnMailman) and returns only once the child has
 * registered itself in the pid file; a child that dies first is reported with the end of its log. A running mailman
 * is refused before the log is opened, so its log is left alone; the pid file's registration stays the arbiter when
 * two start at once (the loser's refusal is then reported first).
 */
export async function startDaemon(
  root: string,
  args: string[],
  env: Env,
  self: string[] = selfCommand(),
  store: string = root,
): Promise<MailmanRecord> {
  const already = runningMailman(root);
  if (already) throw mailmanAlreadyRuns(already, store);
  const child = spawnMailman(root, args, env, self);
  const childPid = child.pid;
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline && child.exited() === null) {
    const running = runningMailman(root);
    if (running && running.pid === childPid) return running;
    await new Promise((done) => setTimeout(done, 20));
  }
  const exited = child.exited();
  const winner = runningMailman(root);
  if (winner && winner.pid !== childPid) throw mailmanAlreadyRuns(winner, store);
  const log = tail(mailmanLogPath(root), 3);
  throw new AgentmailError(
    "io",
    `the mailman did not start${exited !== null ? ` (exit ${exited})` : ""}; ${log ? `its log ends: ${log.replace(/\n/g, " | ")}` : `see ${mailmanLogPath(root)}`}`,
  );
}

/** Stops the store's mailman: SIGTERM, then SIGKILL if it has not gone after `graceMs`. */
export async function stopDaemon(mailman: MailmanRecord, graceMs = 5_000): Promise<void> {
  // A zombie counts as gone: a detached daemon's exit is reaped by init, which may take its time.
  const gone = () => isGone(mailman);
  try {
    process.kill(mailman.pid, "SIGTERM");
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (gone()) return;
    await new Promise((done) => setTimeout(done, 20));
  }
  try {
    process.kill(mailman.pid, "SIGKILL");
  } catch {
    // Gone meanwhile.
  }
}
