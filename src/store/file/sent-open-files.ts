/**
 * The descriptors of the files a listing of what a sender sent reads (sent-files.ts, sent-reader.ts): those kept open
 * from their scan, and those opened again, few at a time.
 */
import { closeSync } from "node:fs";
import { openForRead } from "../durable/files.ts";
import type { SentFile } from "./sent-index.ts";

/** Files kept open from their scan, and files opened again at once: together far below a process's 1,024. */
export const KEPT_OPEN = 128;
const REOPENED = 64;

/**
 * The descriptors of the files a listing reads. Those kept open since their scan hold exactly what the index
 * describes, whatever is renamed over them meanwhile; one closed (a store of more files than KEPT_OPEN) is opened
 * again when read, and counts only if it is still the file that was scanned (its inode): otherwise its lines are
 * not read (-1), as for a line that no longer holds its record.
 */
export class OpenFiles {
  readonly #reopened: SentFile[] = [];
  /** Files found gone or replaced: not looked for again. */
  readonly #gone = new Set<SentFile>();

  fd(file: SentFile): number {
    if (file.fd !== -1) return file.fd;
    if (this.#gone.has(file)) return -1;
    const opened = openForRead(file.path);
    if (!opened || opened.stat.ino !== file.ino) {
      if (opened) closeSync(opened.fd);
      this.#gone.add(file);
      return -1;
    }
    if (this.#reopened.length === REOPENED) {
      const oldest = this.#reopened.shift()!;
      closeSync(oldest.fd);
      oldest.fd = -1;
    }
    this.#reopened.push(file);
    file.fd = opened.fd;
    return file.fd;
  }
}

export function closeAll(files: readonly SentFile[]): void {
  for (const file of files) {
    if (file.fd === -1) continue;
    try {
      closeSync(file.fd);
    } catch {
      // Closed already.
    }
    file.fd = -1;
  }
}
