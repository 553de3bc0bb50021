import { readSync } from "node:fs";
import { writeFully } from "./files.ts";

/** Buffered, and read at a time when copying. */
const BUFFER_BYTES = 1 << 20;

/**
 * Writes a file sequentially through one buffer: bytes given, and ranges of another open file copied as they are.
 * Adjacent ranges are copied as one, so a long run of unchanged lines costs a few large reads and writes, and no
 * memory beyond the buffer however much is copied. `size` is where the next byte goes, counting what is buffered.
 */
export class FileSink {
  size: number;
  readonly #buffer = new Uint8Array(BUFFER_BYTES);
  #used = 0;
  #range: { fd: number; start: number; end: number } | null = null;

  constructor(
    readonly fd: number,
    start = 0,
  ) {
    this.size = start;
  }

  /** Bytes [start, end) of the open file `fd`, read when they are flushed. */
  copy(fd: number, start: number, end: number): void {
    if (end <= start) return;
    this.size += end - start;
    const range = this.#range;
    if (range && range.fd === fd && range.end === start) {
      range.end = end;
      return;
    }
    this.#copyRange();
    this.#range = { fd, start, end };
  }

  write(bytes: Uint8Array): void {
    this.#copyRange();
    this.size += bytes.length;
    if (this.#used + bytes.length > this.#buffer.length) this.#writeBuffered();
    if (bytes.length > this.#buffer.length) writeFully(this.fd, bytes);
    else {
      this.#buffer.set(bytes, this.#used);
      this.#used += bytes.length;
    }
  }

  flush(): void {
    this.#copyRange();
    this.#writeBuffered();
  }

  #copyRange(): void {
    const range = this.#range;
    if (!range) return;
    this.#range = null;
    for (let at = range.start; at < range.end; ) {
      if (this.#used === this.#buffer.length) this.#writeBuffered();
      const n = readSync(range.fd, this.#buffer, this.#used, Math.min(this.#buffer.length - this.#used, range.end - at), at);
      if (n === 0) throw new Error(`${range.end - at} bytes to copy were not there (the file shrank)`);
      this.#used += n;
      at += n;
    }
  }

  #writeBuffered(): void {
    if (this.#used === 0) return;
    writeFully(this.fd, this.#buffer.subarray(0, this.#used));
    this.#used = 0;
  }
}
