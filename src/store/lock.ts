import { closeSync, unlinkSync, writeSync } from "node:fs";
import { AgentmailError } from "../core/errors.ts";
import { createExclusive, openForRead, readRange } from "./files.ts";
import { currentProcess, isGone, parseIdentity, type ProcessIdentity } from "./process-identity.ts";

/** A lock whose content never became readable is stale after this long (its holder died between create and write). */
const UNWRITTEN_STALE_MS = 2_000;
/** Any lock is stale after this long: the critical sections it guards take milliseconds. */
const MAX_HOLD_MS = 30_000;
/** A `.break` file left by a breaker that was killed mid-break. */
const BREAK_STALE_MS = 5_000;

interface Holder extends ProcessIdentity {
  token: string;
  time: string;
}

interface Inspection {
  ino: number;
  mtimeMs: number;
  holder: Holder | null;
  stale: boolean;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

function parseHolder(bytes: Uint8Array): Holder | null {
  try {
    const value = JSON.parse(new TextDecoder().decode(bytes)) as Partial<Holder>;
    const identity = parseIdentity(value);
    if (!identity || typeof value.token !== "string") return null;
    return { ...identity, token: value.token, time: String(value.time) };
  } catch {
    return null;
  }
}

function readHolder(path: string): { ino: number; mtimeMs: number; holder: Holder | null } | null {
  const file = openForRead(path);
  if (!file) return null;
  try {
    return { ino: file.stat.ino, mtimeMs: file.stat.mtimeMs, holder: parseHolder(readRange(file.fd, 0, Math.min(file.stat.size, 4096))) };
  } finally {
    closeSync(file.fd);
  }
}

function inspect(path: string): Inspection | null {
  const read = readHolder(path);
  if (!read) return null;
  const age = Date.now() - read.mtimeMs;
  return { ...read, stale: age > MAX_HOLD_MS || (read.holder ? isGone(read.holder) : age > UNWRITTEN_STALE_MS) };
}

function sameLock(a: Inspection, b: Inspection): boolean {
  return a.ino === b.ino && a.mtimeMs === b.mtimeMs && a.holder?.token === b.holder?.token;
}

function tryUnlink(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone: someone else finished the job.
  }
}

/**
 * Removes a stale lock without the "stat, then unlink" race that lets several contenders hold a lock at once:
 * breakers are serialized by a second O_EXCL file, and the lock is unlinked only if it is still the very lock
 * (inode, mtime, token) that was judged stale. Returns whether this call removed it.
 */
function breakStale(path: string, judged: Inspection): boolean {
  const breakPath = `${path}.break`;
  let fd: number;
  try {
    fd = createExclusive(breakPath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    const breaker = openForRead(breakPath);
    if (breaker) {
      closeSync(breaker.fd);
      if (Date.now() - breaker.stat.mtimeMs > BREAK_STALE_MS) tryUnlink(breakPath);
    }
    return false;
  }
  try {
    const now = inspect(path);
    if (!now || !now.stale || !sameLock(now, judged)) return false;
    tryUnlink(path);
    return true;
  } finally {
    closeSync(fd);
    tryUnlink(breakPath);
  }
}

function lockContent(token: string): string {
  const holder: Holder = { ...currentProcess(), token, time: new Date().toISOString() };
  return JSON.stringify(holder);
}

function newToken(): string {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export interface LockOptions {
  /** How long to wait for a live holder before giving up. */
  timeoutMs?: number;
}

function defaultTimeoutMs(): number {
  const seconds = Number(process.env.AGENTMAIL_LOCK_TIMEOUT);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 5_000;
}

function describeHolder(inspection: Inspection | null): string {
  if (!inspection?.holder) return "a process that has not written its pid yet";
  const age = ((Date.now() - inspection.mtimeMs) / 1000).toFixed(1);
  return `pid ${inspection.holder.pid} on ${inspection.holder.host} (held ${age}s)`;
}

/**
 * Runs `critical` while holding an O_EXCL lockfile. The lock survives its holder being SIGKILLed: a dead, zombie
 * or reused pid, an unwritten lock older than 2 s, or any lock older than 30 s is broken (race-free, above).
 * Retries back off from 1 ms doubling to 25 ms with jitter.
 */
export async function withLock<T>(path: string, critical: () => T | Promise<T>, options: LockOptions = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? defaultTimeoutMs();
  const token = newToken();
  const started = Date.now();
  let delay = 1;
  let fd: number | null = null;
  while (fd === null) {
    try {
      fd = createExclusive(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const inspection = inspect(path);
      // Retry at once only when this call broke the lock; another breaker at work means waiting like anyone else.
      if (inspection?.stale && breakStale(path, inspection)) continue;
      if (inspection && Date.now() - started > timeoutMs) {
        throw new AgentmailError("locked", `${path} is held by ${describeHolder(inspection)}; if that process is stuck, stop it or remove the lock file, then retry`);
      }
      await sleep(delay * (0.5 + Math.random()));
      delay = Math.min(delay * 2, 25);
    }
  }
  try {
    writeSync(fd, lockContent(token));
  } finally {
    closeSync(fd);
  }
  try {
    return await critical();
  } finally {
    release(path, token);
  }
}

/** Removes the lock only if it is still ours: it may have been broken as stale and taken by another. */
function release(path: string, token: string): void {
  try {
    if (readHolder(path)?.holder?.token === token) tryUnlink(path);
  } catch {
    // Unreadable now: not ours to remove.
  }
}

/** What `doctor` sees of a lock file: who holds it, for how long, and whether it is stale (see withLock). */
export interface LockReport {
  holder: string;
  ageMs: number;
  stale: boolean;
}

export function lockReport(path: string): LockReport | null {
  const inspection = inspect(path);
  if (!inspection) return null;
  return { holder: describeHolder(inspection), ageMs: Date.now() - inspection.mtimeMs, stale: inspection.stale };
}

/** Removes a lock only if it is stale, race-free as withLock breaks it; returns whether it was removed. */
export function removeStaleLock(path: string): boolean {
  const inspection = inspect(path);
  return inspection !== null && inspection.stale && breakStale(path, inspection);
}

/** A breaker's `.break` file left behind longer than a break takes: its breaker was killed mid-break. */
export function isStaleBreak(ageMs: number): boolean {
  return ageMs > BREAK_STALE_MS;
}
