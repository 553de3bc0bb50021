import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { AgentmailError } from "../mail/errors.ts";
import { mailmanAlreadyRuns, mailmanDir, mailmanLogPath, runningMailman, type MailmanRecord } from "./files.ts";
import { isGone } from "../store/process-identity.ts";

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

/**
 * Starts the mailman of `store` (its label) as a detached child (own session, stdio on the log file, the store passed
 * explicitly) and
 * returns only once the child has registered itself in the pid file; a child that dies first is reported with the
 * end of its log. A running mailman is refused before the log is opened, so its log is left alone; the pid file's
 * registration stays the arbiter when two start at once (the loser's refusal is then reported first).
 */
export async function startDaemon(
  root: string,
  args: string[],
  env: Record<string, string | undefined>,
  self: string[] = selfCommand(),
  store: string = root,
): Promise<MailmanRecord> {
  const already = runningMailman(root);
  if (already) throw mailmanAlreadyRuns(already, store);
  mkdirSync(mailmanDir(root), { recursive: true, mode: 0o700 });
  const logFd = openSync(mailmanLogPath(root), "a", 0o600);
  const [command, ...prefix] = self;
  let exited: number | null = null;
  let childPid: number | undefined;
  try {
    const child = spawn(command!, [...prefix, "mailman", ...args], {
      detached: true,
      stdio: ["ignore", logFd, logFd],
      env: { ...env, AGENTMAIL_DIR: root },
    });
    childPid = child.pid;
    child.on("exit", (code) => (exited = code ?? 1));
    child.unref();
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (Date.now() < deadline && exited === null) {
      const running = runningMailman(root);
      if (running && running.pid === childPid) return running;
      await new Promise((done) => setTimeout(done, 20));
    }
  } finally {
    closeSync(logFd);
  }
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
