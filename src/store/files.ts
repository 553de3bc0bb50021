import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";
import { AgentmailError } from "../core/errors.ts";

const { O_NOFOLLOW, O_NONBLOCK, O_CREAT, O_EXCL, O_WRONLY, O_RDWR, O_RDONLY, O_APPEND } = constants;

export const FILE_MODE = 0o600;

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

export function openForAppend(path: string): OpenFile {
  return openChecked(path, O_RDWR | O_APPEND | O_CREAT)!;
}

export function openForUpdate(path: string): OpenFile | null {
  return openChecked(path, O_RDWR);
}

export function openForRead(path: string): OpenFile | null {
  return openChecked(path, O_RDONLY);
}

export function openForWrite(path: string): OpenFile {
  return openChecked(path, O_WRONLY | O_CREAT)!;
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
