/**
 * Claude Code's own lock on a team file (its vendored proper-lockfile, read from 2.1.332's code and checked against
 * the running binary): the lock is a directory, `<file>.lock`, made by one mkdir. A lock directory whose mtime is
 * more than 10 s old is stale and is removed and taken (a holder refreshes the mtime every 5 s); so is one stamped
 * more than 10 s ahead (Claude's check would wait for that time, however far off). Claude retries a
 * held lock after 5, 10, 20, 40, 80 and 5 × 100 ms, about 0.65 s in all, and then gives up: its message is not
 * written (its model is told so). So agentmail holds this lock only for a read and a rename, never across work of
 * its own, and may itself wait longer than Claude does.
 *
 * A file under it is replaced whole: written to `<file>.tmp.<8 hex>` beside it and renamed over it, so a reader
 * without the lock (Claude's poller reads unlocked) sees the old or the new array. The fsyncs that make the change
 * durable come after the lock is released (`makeDurable`): on a loaded disk an fsync can take tens of milliseconds,
 * and Claude's writers must not wait for it.
 */
import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  utimesSync,
} from "node:fs";
import { basename, dirname } from "node:path";
import { AgentmailError } from "../../mail/errors.ts";
import { syncDirectory, writeFully } from "../../store/durable/files.ts";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = constants;

export const STALE_MS = 10_000;

/** Claude's own schedule: a writer using it competes with Claude on equal terms. */
export const CLAUDE_RETRY_MS = [5, 10, 20, 40, 80, 100, 100, 100, 100, 100];

/**
 * agentmail's schedule: Claude's, then 100 ms steps for up to ~11 s in all, so that a lock a killed holder left
 * behind turns stale (10 s) and is taken, rather than failing a send that would succeed a moment later.
 */
export const AGENTMAIL_RETRY_MS = [...CLAUDE_RETRY_MS, ...Array<number>(105).fill(100)];

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const codeOf = (error: unknown) => (error as NodeJS.ErrnoException)?.code;

export const lockDirOf = (file: string) => `${file}.lock`;

/**
 * Whether a lock directory with this mtime is stale: older than STALE_MS, or stamped more than STALE_MS ahead of now
 * (a holder stamps it at most about a second ahead; a lock from the future would otherwise hold every writer off
 * until that time, as Claude's own check does).
 */
export const isStaleLock = (mtimeMs: number, now: number) => mtimeMs < now - STALE_MS || mtimeMs > now + STALE_MS;

/**
 * Refuses a team directory or its `inboxes/` that is a symlink: Claude Code makes both as plain directories, and a
 * planted link would make agentmail's lock, temp files and renames land wherever it points.
 */
export function requireOwnDirectory(dir: string): void {
  let isLink: boolean;
  try {
    isLink = lstatSync(dir).isSymbolicLink();
  } catch {
    // Gone, or not yet made: what writes there finds out.
    return;
  }
  if (isLink) {
    throw new AgentmailError(
      "unsafe_path",
      `${dir} is a symlink; agentmail never writes through one in a team directory (Claude Code makes it a plain directory): ` +
        "nothing was written; replace the link with a directory, or remove the bridge",
    );
  }
}

/** One attempt: true when the lock is now ours. A stale lock is removed and one more mkdir tried. */
function tryLock(dir: string, mayBreakStale = true): boolean {
  try {
    mkdirSync(dir);
  } catch (error) {
    if (codeOf(error) !== "EEXIST") throw error;
    let mtimeMs: number;
    try {
      mtimeMs = statSync(dir).mtimeMs;
    } catch (statError) {
      if (codeOf(statError) === "ENOENT") return mayBreakStale && tryLock(dir, false);
      throw statError;
    }
    if (!mayBreakStale || !isStaleLock(mtimeMs, Date.now())) return false;
    try {
      rmdirSync(dir);
    } catch (rmError) {
      if (codeOf(rmError) !== "ENOENT") throw rmError;
    }
    return tryLock(dir, false);
  }
  // Claude stamps a fresh lock's mtime just past the next second (its probe for millisecond mtimes); so do we, so
  // that its staleness check reads our lock as it reads its own.
  const stamp = new Date(Math.ceil(Date.now() / 1000) * 1000 + 5);
  try {
    utimesSync(dir, stamp, stamp);
  } catch {
    // The lock holds without it.
  }
  return true;
}

function release(dir: string): void {
  try {
    rmdirSync(dir);
  } catch (error) {
    if (codeOf(error) !== "ENOENT") throw error;
  }
}

/**
 * Runs `critical` holding Claude's lock on `file`. After the last retry the error is `locked`, naming the lock
 * directory, and nothing was changed.
 */
export async function withTeamLock<T>(
  file: string,
  critical: () => T | Promise<T>,
  retries: readonly number[] = AGENTMAIL_RETRY_MS,
): Promise<T> {
  requireOwnDirectory(dirname(file));
  const dir = lockDirOf(file);
  for (let attempt = 0; !tryLock(dir); attempt++) {
    const delay = retries[attempt];
    if (delay === undefined) {
      const waited = retries.reduce((sum, ms) => sum + ms, 0);
      throw new AgentmailError(
        "locked",
        `${dir} was held for ${(waited / 1000).toFixed(1)} s (Claude Code's lock on ${basename(file)}); nothing was written; try again`,
      );
    }
    await sleep(delay);
  }
  try {
    return await critical();
  } finally {
    release(dir);
  }
}

/** Replaces `file` with `text` as described above; the temp file is removed again when anything fails. */
export function replaceTeamFile(file: string, text: string): void {
  const temp = `${file}.tmp.${randomBytes(4).toString("hex")}`;
  const fd = openSync(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
  try {
    try {
      writeFully(fd, text);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/**
 * Makes a replaced file durable, after the lock is released: the file now at the path (ours, or a newer one Claude
 * wrote since, which holds ours too) and its directory are fsynced.
 */
export function makeDurable(file: string): void {
  try {
    const fd = openSync(file, O_RDONLY | O_NOFOLLOW);
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    // Gone since (the team ended): there is nothing left to make durable.
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  syncDirectory(dirname(file));
}
