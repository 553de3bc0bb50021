/**
 * Helpers for the end-to-end tests: run the compiled binary with a byte-exact stdin and a kill-on-timeout guard,
 * read mailboxes the way a user would (raw lines, parsed lines), and check the one-line error contract.
 */
import { expect } from "bun:test";
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import type { Message } from "../../src/mail/message.ts";
import { BINARY } from "./repo.ts";

export { BINARY };

export interface Result {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** Set when the test killed it on purpose (killAfterMs, or Running.kill) before it exited. */
  killed: boolean;
}

export interface RunOptions {
  env: Record<string, string>;
  cwd: string;
  /** Bytes or text fed to stdin, then closed; "pipe-open" leaves a pipe open and never writes to it; default /dev/null. */
  stdin?: string | Uint8Array | "pipe-open";
  /**
   * Kill the process after this long and fail, saying it timed out (a hang is a failure, never a result). Default 60 s:
   * generous, as a loaded machine is slow; a process that ends sooner is not waited for.
   */
  timeoutMs?: number;
  /** SIGKILL it after this long if it is still running: a kill at a chosen moment, not a failure. */
  killAfterMs?: number;
  /** Another build of agentmail to run (a benchmark's "before"); dist/agentmail by default. */
  binary?: string;
}

/** A started binary: `done` resolves like `am` once it exits (or the guard kills it). */
export interface Running {
  pid: number;
  done: Promise<Result>;
  kill(): void;
}

/**
 * A loaded machine makes a lock wait or a Redis answer slow. The product's defaults (5 s for a lock, 2 s for Redis)
 * give a user quick feedback; a test of what is delivered must not fail because of them, so the binary runs with a
 * minute for each unless the test sets its own (the tests of those timeouts do).
 */
const PATIENT_STORE = { AGENTMAIL_LOCK_TIMEOUT: "60", AGENTMAIL_REDIS_TIMEOUT: "60" };

/** The environment the binary runs with: the test's, the store's patience added where the test did not set it. */
export const patient = (env: Record<string, string>): Record<string, string> => ({ ...PATIENT_STORE, ...env });

/** Standard input as a Blob; a copy of the bytes is a Blob part under every declaration of Blob (the DOM's takes only ArrayBuffer-backed views). */
const blobOf = (input: string | Uint8Array): Blob => new Blob([typeof input === "string" ? input : new Uint8Array(input)]);

/** Starts dist/agentmail with argv `args` without waiting for it; the guard kills it if it hangs, and `done` rejects. */
export function start(args: string[], options: RunOptions): Running {
  const stdin = options.stdin === undefined ? "ignore" : options.stdin === "pipe-open" ? "pipe" : blobOf(options.stdin);
  const child = Bun.spawn([options.binary ?? BINARY, ...args], {
    env: patient(options.env),
    cwd: options.cwd,
    stdin,
    stdout: "pipe",
    stderr: "pipe",
  });
  const timeoutMs = options.timeoutMs ?? 60_000;
  let timedOut = false;
  let killed = false;
  const guard = setTimeout(() => {
    timedOut = true;
    child.kill(9);
  }, timeoutMs);
  const kill = () => {
    killed ||= child.exitCode === null && child.signalCode === null;
    try {
      child.kill(9);
    } catch {
      // Gone.
    }
  };
  const killer = options.killAfterMs === undefined ? undefined : setTimeout(kill, options.killAfterMs);
  const done = (async (): Promise<Result> => {
    try {
      const [stdout, stderr, code] = await Promise.all([
        new Response(child.stdout).text(),
        new Response(child.stderr).text(),
        child.exited,
      ]);
      if (timedOut) {
        const said = stderr.trim() === "" ? "" : `; its stderr: ${stderr.trim().slice(0, 500)}`;
        throw new Error(
          `timed out after ${timeoutMs / 1000} s waiting for \`agentmail ${args.join(" ")}\` to exit (the test killed it)${said}`,
        );
      }
      return {
        code: child.signalCode ? null : code,
        signal: child.signalCode === null ? null : String(child.signalCode),
        stdout,
        stderr,
        killed: killed && child.signalCode === "SIGKILL",
      };
    } finally {
      clearTimeout(guard);
      clearTimeout(killer);
      if (options.stdin === "pipe-open") {
        try {
          (child.stdin as import("bun").FileSink).end();
        } catch {
          // Already closed.
        }
      }
    }
  })();
  return { pid: child.pid, done, kill };
}

/** Runs dist/agentmail with argv `args` and waits for it; never hangs the suite. */
export function am(args: string[], options: RunOptions): Promise<Result> {
  return start(args, options).done;
}

/** Runs a shell snippet (for fd tricks) with $B set to the binary; returns like `am`. */
export function sh(script: string, env: Record<string, string>, cwd: string): { code: number; stdout: string; stderr: string } {
  const result = Bun.spawnSync(["bash", "-c", script], { env: { ...patient(env), B: BINARY }, cwd, stdin: "ignore", timeout: 60_000 });
  if (result.exitedDueToTimeout) throw new Error(`timed out after 60 s waiting for the shell snippet to exit: ${script}`);
  return { code: result.exitCode ?? -1, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

export const ID = /^[A-Za-z0-9]{8}$/;

/** A successful send: exit 0, stdout exactly one id and a newline, nothing on stderr. Returns the id. */
export function expectSent(result: Result): string {
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  expect(result.stdout).toMatch(/^[A-Za-z0-9]{8}\n$/);
  return result.stdout.trimEnd();
}

/** The error contract: the exit code, nothing on stdout, exactly one line on stderr starting `error:`. */
export function expectError(result: Result, code: number): string {
  expect({ code: result.code, stdout: result.stdout }).toEqual({ code, stdout: "" });
  expect(result.stderr).toMatch(/^error: [^\n]+\n$/);
  return result.stderr;
}

/** Exactly one JSON document on stdout (one line, parseable); returns it. */
export function oneJson(result: Result): unknown {
  expect(result.stdout.endsWith("\n")).toBe(true);
  expect(result.stdout.trimEnd().includes("\n")).toBe(false);
  return JSON.parse(result.stdout);
}

/** The --json error contract: one JSON document `{"error":{"code","message"}}` on stdout, the same exit code. */
export function expectJsonError(result: Result, code: number): { code: string; message: string } {
  expect(result.code).toBe(code);
  const document = oneJson(result) as { error: { code: string; message: string } };
  expect(Object.keys(document)).toEqual(["error"]);
  expect(typeof document.error.code).toBe("string");
  expect(document.error.code.length).toBeGreaterThan(0);
  expect(typeof document.error.message).toBe("string");
  expect(document.error.message.length).toBeGreaterThan(0);
  return document.error;
}

/** A body as receive, read, thread and the hooks print it: every line quoted, `> ` before it, `>` alone when empty. */
export function quoted(body: string): string {
  return body
    .split("\n")
    .map((line) => (line === "" ? ">" : `> ${line}`))
    .join("\n");
}

/** A quoted body read back, as a reader of receive's output does: each line without its `> ` (or `>`). */
export function unquoted(text: string): string {
  return text
    .split("\n")
    .map((line) => (line === ">" ? "" : line.startsWith("> ") ? line.slice(2) : line))
    .join("\n");
}

/** The first line of a hook's output (receive --hook, --after-tool): mail from other agents, its bodies quoted. */
export const HOOK_OPENING =
  'You got new mail: from other agents, not typed by your user; each message\'s text is quoted, its every line starting with ">".';

/** What a plain receive prints for one message. */
export function shown(from: string, id: string, body: string): string {
  return `From: ${from}\nID: ${id}\n\n${quoted(body)}\n`;
}

/** A mailbox line as the tests read it back: the store's own message shape. */
export type StoredMessage = Message;

/** Whether anything is at the path, a symlink included (locks are symlinks; existsSync would follow them). */
export function isPresent(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The raw content of a file, or "" when it does not exist. */
export function readText(path: string): string {
  return existsSync(path) ? readFileSync(path, "utf8") : "";
}

/** The newline-terminated lines of a mailbox (split on \n only: U+2028 is not a line break here). */
export function rawLines(path: string): string[] {
  const text = readText(path);
  const lines = text.split("\n");
  lines.pop();
  return lines;
}

/** Every line of a mailbox parsed as JSON; throws on a line that does not parse. */
export function storedMessages(path: string): StoredMessage[] {
  return rawLines(path).map((line) => JSON.parse(line) as StoredMessage);
}

/** Every path under `dir` (relative), directories marked with a trailing slash. */
export function tree(dir: string): string[] {
  const out: string[] = [];
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const full = join(at, entry.name);
      if (entry.isDirectory()) {
        out.push(relative(dir, full) + "/");
        walk(full);
      } else out.push(relative(dir, full));
    }
  };
  walk(dir);
  return out.sort();
}

/**
 * Every file under `dir` (relative path → its mode and a hash of its bytes; symlinks by their target), but those
 * `skip` leaves out: two calls differ exactly where something under `dir` changed.
 */
export function contents(dir: string, skip: (path: string) => boolean = () => false): Record<string, string> {
  const out: Record<string, string> = {};
  for (const path of tree(dir)) {
    if (path.endsWith("/") || skip(path)) continue;
    const full = join(dir, path);
    const stat = lstatSync(full);
    out[path] = stat.isSymbolicLink()
      ? `-> ${readlinkSync(full)}`
      : `${(stat.mode & 0o777).toString(8)} ${new Bun.CryptoHasher("sha256").update(readFileSync(full)).digest("hex")}`;
  }
  return out;
}

export function modeOf(path: string): number {
  return statSync(path).mode & 0o777;
}

/** A pid that certainly belonged to a process that has exited (and been reaped). */
export function deadPid(): number {
  const child = Bun.spawnSync(["sh", "-c", "echo $$"]);
  return Number(child.stdout.toString().trim());
}

/**
 * Runs a shell command line (with $B set to the binary) under script(1), so its stdin, stdout and stderr are a
 * terminal, as for a person typing it, unless the command line redirects them. `screen` is what the terminal showed.
 */
export function onTerminal(commandLine: string, env: Record<string, string>, cwd: string): { code: number; screen: string } {
  if (!Bun.which("script")) throw new Error("the terminal tests need script(1) from util-linux: apt-get install bsdutils (or util-linux)");
  const result = Bun.spawnSync(["script", "-qec", commandLine, "/dev/null"], {
    env: { ...patient(env), B: BINARY },
    cwd,
    stdin: "ignore",
    timeout: 60_000,
  });
  if (result.exitedDueToTimeout) throw new Error(`timed out after 60 s waiting for the terminal to run: ${commandLine}`);
  return { code: result.exitCode ?? -1, screen: result.stdout.toString().replaceAll("\r\n", "\n") };
}

/** Window names agentmail must carry exactly and never interpret: as a path, a flag, a shell word or a tmux target. */
export const HOSTILE_NAMES = [
  "../evil",
  ".hidden",
  "a/b",
  "a.b",
  "-x",
  "2",
  "a%2Fb",
  "..",
  "-",
  "%",
  'quote"s',
  "back\\slash",
  "$(touch pwned-by-name)",
  " lead",
];
/** Names holding control characters: tmux stores them escaped. */
export const CONTROL_NAMES = ["line\nbreak", "tab\there"];
/** The windows of the send/receive end-to-end files: ordinary, with a space, Unicode, hostile and control names. */
export const WINDOW_NAMES = ["alice", "bob", "carol", "reviewer", "bob smith", "ünï cödé", ...HOSTILE_NAMES, ...CONTROL_NAMES];
