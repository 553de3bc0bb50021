import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { AgentmailError } from "../core/errors.ts";
import { replaceFile } from "./files.ts";
import { withLock } from "./lock.ts";
import { currentProcess, isGone, parseIdentity, type ProcessIdentity } from "./process-identity.ts";

/** The mailman's own files, in `<root>/.mailman/`: outside the mailbox namespace and outside what it watches. */
export const mailmanDir = (root: string) => join(root, ".mailman");
export const mailmanLogPath = (root: string) => join(mailmanDir(root), "log");
const pidPath = (root: string) => join(mailmanDir(root), "pid");
const statePath = (root: string) => join(mailmanDir(root), "state.json");

export interface MailmanRecord extends ProcessIdentity {
  started_at: string;
}

export interface MailmanState {
  last_action: string | null;
  last_action_at: string | null;
  reminders: number;
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return null;
  }
}

/** The running mailman of this store, or null (a pid file of a dead, zombie or reused pid does not count). */
export function runningMailman(root: string): MailmanRecord | null {
  const value = readJson(pidPath(root)) as Partial<MailmanRecord> | null;
  const identity = parseIdentity(value);
  if (!identity || isGone(identity)) return null;
  return { ...identity, started_at: String(value?.started_at) };
}

/** Registers this process as the store's one mailman; fails naming the live one if there is one. */
export async function claimMailman(root: string): Promise<MailmanRecord> {
  mkdirSync(mailmanDir(root), { recursive: true, mode: 0o700 });
  return withLock(`${pidPath(root)}.lock`, () => {
    const running = runningMailman(root);
    if (running && running.pid !== process.pid) {
      throw new AgentmailError("conflict", `a mailman already runs for this store (pid ${running.pid}, since ${running.started_at}); stop it with 'agentmail mailman stop'`);
    }
    const record: MailmanRecord = { ...currentProcess(), started_at: new Date().toISOString() };
    replaceFile(pidPath(root), JSON.stringify(record) + "\n");
    return record;
  });
}

export function releaseMailman(root: string): void {
  const value = readJson(pidPath(root)) as Partial<MailmanRecord> | null;
  if (value?.pid === process.pid) rmSync(pidPath(root), { force: true });
}

/** Removes the pid file of a mailman known to be gone. */
export function forgetMailman(root: string): void {
  rmSync(pidPath(root), { force: true });
}

export function readMailmanState(root: string): MailmanState | null {
  return readJson(statePath(root)) as MailmanState | null;
}

/** Writes the state only when it changed: a file that is rewritten without change only wakes watchers. */
export function writeMailmanState(root: string, state: MailmanState): void {
  const text = JSON.stringify(state) + "\n";
  try {
    if (readFileSync(statePath(root), "utf8") === text) return;
  } catch {
    // Not written yet.
  }
  replaceFile(statePath(root), text);
}
