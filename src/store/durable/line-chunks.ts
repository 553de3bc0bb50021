import { readSync } from "node:fs";

const NEWLINE = 0x0a;
/** Read at a time: big enough that the calls cost nothing next to the lines, small enough to stay out of the way. */
const CHUNK_BYTES = 4 << 20;

/** Reads bytes of `fd` from `position` into `buffer` (as many as fit, or as there are); returns how many. */
export function readInto(fd: number, buffer: Uint8Array, position: number, length: number): number {
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buffer, done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}

/**
 * Visits the complete lines of bytes [from, to) of an open file a chunk at a time, reading into one buffer, so memory
 * stays at one chunk whatever the file's size (a buffer per chunk would be garbage the collector is slow to see).
 * `visit` gets a run of whole lines (each with its newline) and where it starts in the file; the chunk is overwritten
 * by the next read. A line longer than a chunk is read whole. Returns the offset just past the last complete line:
 * what follows it (a line being appended, or torn) is not visited.
 */
export function eachChunk(fd: number, from: number, to: number, visit: (chunk: Buffer, offset: number) => void): number {
  let at = from;
  let buffer = Buffer.alloc(Math.min(CHUNK_BYTES, Math.max(0, to - from)));
  while (at < to) {
    const length = readInto(fd, buffer, at, Math.min(buffer.length, to - at));
    const chunk = buffer.subarray(0, length);
    const last = chunk.lastIndexOf(NEWLINE);
    if (last === -1) {
      if (length === 0 || at + length >= to) break;
      buffer = Buffer.alloc(buffer.length * 2);
      continue;
    }
    visit(chunk.subarray(0, last + 1), at);
    at += last + 1;
  }
  return at;
}

/**
 * Visits every complete line of bytes [from, to) of an open file (see eachChunk). `visit` gets the chunk, the line's
 * range in it (newline excluded) and where the line starts in the file; `onChunk` announces each chunk before its
 * lines (with its length). Returns the offset just past the last complete line.
 */
export function eachLine(
  fd: number,
  from: number,
  to: number,
  visit: (chunk: Buffer, start: number, end: number, offset: number) => void,
  onChunk: (length: number) => void = () => {},
): number {
  return eachChunk(fd, from, to, (chunk, at) => {
    onChunk(chunk.length);
    for (let start = 0; start < chunk.length; ) {
      const end = chunk.indexOf(NEWLINE, start);
      visit(chunk, start, end, at + start);
      start = end + 1;
    }
  });
}
