import { closeSync, constants, fstatSync, fsyncSync, openSync, readSync, renameSync, rmSync, writeSync, type Stats } from "node:fs";
import { basename, dirname, join } from "node:path";
import { AgentmailError } from "../../mail/errors.ts";

const { O_NOFOLLOW, O_NONBLOCK, O_CREAT, O_EXCL, O_WRONLY, O_RDWR, O_RDONLY, O_APPEND } = constants;

const FILE_MODE = 0o600;

export interface OpenFile {
  fd: number;
  stat: Stats;
}

function refuse(path: string, what: string): AgentmailError {
  return new AgentmailError("unsafe_path", `${path} is ${what}, not a regular file; agentmail will not follow or wait on it; remove it`);
}

/**
 * Opens a store file without ever following a symlink (O_NOFOLLOW) or hanging on a FIFO (O_NONBLOCK), then
 * checks it is a regular file. Returns null when it does not exist and `create` is false.
 */
function openChecked(path: string, flags: number): OpenFile | null {
  let fd: number;
  try {
    fd = openSync(path, flags | O_NOFOLLOW | O_NONBLOCK, FILE_MODE);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return null;
    if (code === "ELOOP") throw refuse(path, "a symlink");
    if (code === "EISDIR") throw refuse(path, "a directory");
    if (code === "ENXIO") throw refuse(path, "a FIFO or socket");
    throw error;
  }
  const stat = fstatSync(fd);
  if (!stat.isFile()) {
    closeSync(fd);
    throw refuse(path, stat.isDirectory() ? "a directory" : stat.isFIFO() ? "a FIFO" : "a special file");
  }
  return { fd, stat };
}

/**
 * Opens a mailbox for appending, creating it when there is none; `created` says this call made it, so a send that
 * fails can remove it again and leave the store as it found it.
 */
export function openForAppend(path: string): OpenFile & { created: boolean } {
  const existing = openChecked(path, O_RDWR | O_APPEND);
  if (existing) return { ...existing, created: false };
  try {
    return { ...openChecked(path, O_RDWR | O_APPEND | O_CREAT | O_EXCL)!, created: true };
  } catch (error) {
    // Created by someone else in between (or planted: then the open below refuses it).
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return { ...openForAppend(path), created: false };
  }
}

export function openForUpdate(path: string): OpenFile | null {
  return openChecked(path, O_RDWR);
}

export function openForRead(path: string): OpenFile | null {
  return openChecked(path, O_RDONLY);
}

export function openForUpdateOrCreate(path: string): OpenFile {
  return openChecked(path, O_RDWR | O_CREAT)!;
}

/** O_CREAT|O_EXCL: fails with EEXIST if anything (even a dangling symlink) is at the path. */
export function createExclusive(path: string): number {
  return openSync(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK, FILE_MODE);
}

/**
 * Reads bytes [start, end) of an open file with pread. Not Bun.file(fd).slice(start, end): in Bun 1.4.5 a slice
 * starting at 0 reads from the descriptor's current position, so after one read it returns nothing (see README).
 */
export function readRange(fd: number, start: number, end: number): Uint8Array {
  const buffer = Buffer.allocUnsafe(Math.max(0, end - start));
  let done = 0;
  while (done < buffer.length) {
    const n = readSync(fd, buffer, done, buffer.length - done, start + done);
    if (n === 0) break;
    done += n;
  }
  return buffer.subarray(0, done);
}

const encoder = new TextEncoder();

/**
 * Writes every byte (text as UTF-8): at `position` (pwrite), or at the file's offset when position is null.
 */
export function writeFully(fd: number, content: Uint8Array | string, position: number | null = null): void {
  const bytes = typeof content === "string" ? encoder.encode(content) : content;
  let done = 0;
  while (done < bytes.length) {
    done += writeSync(fd, bytes, done, bytes.length - done, position === null ? null : position + done);
  }
}

/** Makes a new or renamed directory entry durable. */
export function syncDirectory(dir: string): void {
  try {
    const fd = openSync(dir, O_RDONLY);
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Some filesystems cannot fsync a directory; the rename itself is still atomic.
  }
}

/**
 * Replaces a file atomically: the content goes to a new temp file beside it (its name starts with a dot, so it is
 * never taken for a mailbox or a status), is fsynced, and is renamed over the target. A reader sees the old or the
 * new file, never a torn one; a failure leaves the target as it was and no temp file behind.
 */
export function replaceFile(path: string, content: string | Uint8Array | readonly Uint8Array[]): void {
  const temp = join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`);
  const fd = createExclusive(temp);
  try {
    try {
      // Pieces are written one after the other: a large file need not be made whole in memory first.
      if (Array.isArray(content)) for (const piece of content as readonly Uint8Array[]) writeFully(fd, piece);
      else writeFully(fd, content as string | Uint8Array);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}
