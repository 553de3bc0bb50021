/**
 * Helpers for the end-to-end tests of the agent workflow (recipients, status, onboard, cleanup, receive --wait and
 * --hook, the mailman): run the compiled binary with a kill-on-timeout guard, poll for a condition with a generous
 * deadline (never a timing assertion), and look at panes and daemon processes.
 */
import { expect } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { BINARY } from "./repo.ts";
import type { TmuxServer } from "./tmux-server.ts";

export { BINARY };

export interface Result {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** The guard had to kill the process: it did not end by itself. */
  timedOut: boolean;
}

export interface RunOptions {
  env: Record<string, string>;
  cwd: string;
  /** Text fed to stdin, then closed; "pipe-open" leaves a pipe open that is never written or closed; default /dev/null. */
  stdin?: string | "pipe-open";
  /** Kill the process after this long (a hang is a failure, never a wait). Default 20 s. */
  timeoutMs?: number;
}

/** A started binary: `done` resolves like `am` once it exits (or the guard kills it). */
export interface Running {
  pid: number;
  done: Promise<Result>;
  kill(): void;
}

export function start(args: string[], options: RunOptions): Running {
  const stdin = options.stdin === undefined ? "ignore" : options.stdin === "pipe-open" ? "pipe" : new Blob([options.stdin]);
  const child = Bun.spawn([BINARY, ...args], { env: options.env, cwd: options.cwd, stdin, stdout: "pipe", stderr: "pipe" });
  let timedOut = false;
  const guard = setTimeout(() => {
    timedOut = true;
    child.kill(9);
  }, options.timeoutMs ?? 20_000);
  const done = (async (): Promise<Result> => {
    try {
      const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
      return { code: child.signalCode ? null : code, signal: child.signalCode === null ? null : String(child.signalCode), stdout, stderr, timedOut };
    } finally {
      clearTimeout(guard);
      if (options.stdin === "pipe-open") {
        try {
          (child.stdin as import("bun").FileSink).end();
        } catch {
          // Already closed.
        }
      }
    }
  })();
  return {
    pid: child.pid,
    done,
    kill: () => {
      try {
        child.kill(9);
      } catch {
        // Gone.
      }
    },
  };
}

/** Runs dist/agentmail with argv `args` and waits for it; never hangs the suite. */
export function am(args: string[], options: RunOptions): Promise<Result> {
  return start(args, options).done;
}

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** Polls `check` until it returns a truthy value or `deadlineMs` passes; returns the last value (falsy on timeout). */
export async function waitFor<T>(check: () => T | Promise<T>, deadlineMs = 15_000, stepMs = 50): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const value = await check();
    if (value || Date.now() >= end) return value;
    await sleep(stepMs);
  }
}

export const ID = /^[A-Za-z0-9]{8}$/;

/** A successful plain send: exit 0, stdout one id and a newline, stderr empty. Returns the id. */
export function expectSent(result: Result): string {
  expect({ code: result.code, stderr: result.stderr, timedOut: result.timedOut }).toEqual({ code: 0, stderr: "", timedOut: false });
  expect(result.stdout).toMatch(/^[A-Za-z0-9]{8}\n$/);
  return result.stdout.trimEnd();
}

/** The error contract: the exit code, stdout empty, exactly one line on stderr starting `error:`. Returns stderr. */
export function expectError(result: Result, code: number): string {
  expect(result.timedOut).toBe(false);
  expect({ code: result.code, stdout: result.stdout }).toEqual({ code, stdout: "" });
  expect(result.stderr).toMatch(/^error: [^\n]+\n$/);
  return result.stderr;
}

/** Exactly one JSON document on stdout (one line, parseable); returns it. */
export function oneJson(result: Result): unknown {
  expect(result.timedOut).toBe(false);
  expect(result.stdout.endsWith("\n")).toBe(true);
  expect(result.stdout.trimEnd().includes("\n")).toBe(false);
  return JSON.parse(result.stdout);
}

/** The --json error contract: `{"error":{"code","message"}}` on stdout with the exit code. Returns the error. */
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

export function shown(from: string, id: string, body: string): string {
  return `From: ${from}\nID: ${id}\n\n${body}\n`;
}

export interface StoredMessage {
  id: string;
  from: string;
  to: string;
  message: string;
  read_flag: boolean;
  created_at: string;
  [field: string]: unknown;
}

export function readText(path: string): string {
  return existsSync(path) ? readFileSync(path, "utf8") : "";
}

/** Every line of a mailbox parsed as JSON (split on \n only). */
export function storedMessages(path: string): StoredMessage[] {
  const lines = readText(path).split("\n");
  lines.pop();
  return lines.map((line) => JSON.parse(line) as StoredMessage);
}

/** Whether a process with this pid exists (a zombie counts as gone). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

export function killPid(pid: number | null | undefined): void {
  if (!pid || pid <= 1 || pid === process.pid) return;
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Gone.
  }
}

/** How many times `needle` occurs in `text`. */
export function occurrences(text: string, needle: string | RegExp): number {
  if (typeof needle === "string") return text.split(needle).length - 1;
  return (text.match(new RegExp(needle.source, needle.flags.includes("g") ? needle.flags : needle.flags + "g")) ?? []).length;
}

/** The screen and the scrollback of an agent's pane (the reminder may have scrolled off the visible part). */
export function paneText(server: TmuxServer, name: string): string {
  return server.run(["capture-pane", "-p", "-J", "-S", "-", "-t", server.agent(name).paneId]);
}

/** Waits until an agent's pane shows a bash prompt, so text typed into it lands on an empty command line. */
export async function waitForPrompt(server: TmuxServer, name: string): Promise<void> {
  const ok = await waitFor(() => /[$#] *$/.test(server.capture(name).trimEnd()), 10_000);
  if (!ok) throw new Error(`no prompt in pane of ${name}: ${JSON.stringify(server.capture(name))}`);
}

/** The pid a `mailman --daemon` (or `mailman status`) printed, or null. */
export function printedPid(text: string): number | null {
  const match = /pid (\d+)/.exec(text);
  return match ? Number(match[1]) : null;
}
