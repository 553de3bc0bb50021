/**
 * The records an agent sent, read back from the lines its sent index lists (sent-index.ts), newest first and a batch
 * at a time: memory is the index's numbers, a window of each file and one batch, never the whole list.
 *
 * The order is the one `newestFirst(byCreation(sentBy))` gave: by created_at, newest first, and of records created at
 * the same time, the one listed later first (live files before archives, mailbox by mailbox, line by line). A file's
 * entries are usually in time order already (mail is appended as it is sent), so the files are merged from their
 * ends; a file that is not is sorted first. Lines are read a window at a time, backwards, as that order reads them.
 */
import { isAscii } from "node:buffer";
import { existsSync } from "node:fs";
import { WIDEST_LINE } from "../../mail/format.ts";
import { parseMessage, type Message } from "../../mail/message.ts";
import { JournalReader, readsPathOf, withReadTime } from "./read-times.ts";
import { idNumber } from "./line-fields.ts";
import { sentFiles } from "./sent-files.ts";
import { dropIndex, type SentFile } from "./sent-index.ts";
import { closeAll, OpenFiles } from "./sent-open-files.ts";
import { readInto } from "../durable/line-chunks.ts";
import type { MailRecord } from "../store.ts";

/** How far before a line a window starts (the order reads backwards), and how far after it it goes on. */
const WINDOW_BEHIND = 256 * 1024;
const WINDOW_AHEAD = 16 * 1024;
/** Records a batch holds. */
const BATCH = 2000;

const decoder = new TextDecoder();

interface Window {
  start: number;
  /** The file's buffer, reused for each window (fresh buffers piled up as garbage the collector was slow to see). */
  buffer: Buffer;
  length: number;
  /** The bytes as text when they are all ASCII (offsets are the same then), else null: each line is decoded. */
  text: string | null;
}

/** The text of listed lines, read through one window per file. */
class Lines {
  readonly #windows: (Window | undefined)[] = [];
  readonly #handles = new OpenFiles();
  readonly #behind: number;
  /** The buffer a line read alone is read into. */
  #single = Buffer.allocUnsafe(4096);

  constructor(readonly files: readonly SentFile[]) {
    // Many files: smaller windows, so that they all fit in a few megabytes.
    this.#behind = Math.max(16 * 1024, Math.min(WINDOW_BEHIND, Math.floor((32 << 20) / Math.max(1, files.length))));
  }

  line(k: number, at: number): string {
    const file = this.files[k]!;
    const start = file.starts[at]!;
    const end = file.ends[at]!;
    let window = this.#windows[k];
    if (!window || start < window.start || end > window.start + window.length) {
      // Few of the file's listed lines in the window it would read: this line alone (a sender of one line in a
      // hundred read every window whole, the whole file again: two thirds of the listing's time).
      if (at - firstAtOrAfter(file.starts, at, start - this.#behind) < this.#behind / SPARSE_BYTES) {
        const fd = this.#handles.fd(file);
        if (fd === -1) return "";
        this.#single = this.#single.length < end - start ? Buffer.allocUnsafe(end - start) : this.#single;
        return decoder.decode(this.#single.subarray(0, readInto(fd, this.#single, start, end - start)));
      }
      const from = Math.max(0, start - this.#behind);
      const to = Math.max(end, Math.min(file.size, end + WINDOW_AHEAD));
      let buffer = window?.buffer;
      if (!buffer || buffer.length < to - from) buffer = Buffer.allocUnsafe(Math.max(to - from, this.#behind + WINDOW_AHEAD));
      const fd = this.#handles.fd(file);
      // Not the file scanned any more (see OpenFiles): its lines are not there.
      if (fd === -1) return "";
      const length = readInto(fd, buffer, from, to - from);
      const bytes = buffer.subarray(0, length);
      window = { start: from, buffer, length, text: isAscii(bytes) ? decoder.decode(bytes) : null };
      this.#windows[k] = window;
    }
    if (end > window.start + window.length) return "";
    if (window.text !== null) return window.text.slice(start - window.start, end - window.start);
    return decoder.decode(window.buffer.subarray(start - window.start, end - window.start));
  }
}

/**
 * Where a window is read rather than a line alone: at least one listed line in this many bytes (a window of 256 KiB
 * read and decoded costs about what 64 lines read one by one do).
 */
const SPARSE_BYTES = 4096;

/**
 * The first entry, of those before `at`, whose line starts at or after `from` (the entries are in the order of their
 * lines, near enough for an estimate: a moved copy's record may stand in an earlier place).
 */
function firstAtOrAfter(starts: Float64Array, at: number, from: number): number {
  let low = 0;
  let high = at;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (starts[middle]! < from) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The entries of a file oldest first (by time, then line), or null when they are in that order already. */
function oldestFirst(file: SentFile): Uint32Array | null {
  const { times, count } = file;
  let sorted = true;
  for (let at = 1; at < count && sorted; at++) sorted = times[at - 1]! <= times[at]!;
  if (sorted) return null;
  const order = new Uint32Array(count);
  for (let at = 0; at < count; at++) order[at] = at;
  return order.sort((a, b) => times[a]! - times[b]! || a - b);
}

/** Where each file's merge stands: its next entry (newest of what is left) is order[position] (or position). */
interface Cursor {
  k: number;
  order: Uint32Array | null;
  position: number;
}

const entryOf = (cursor: Cursor) => (cursor.order ? cursor.order[cursor.position]! : cursor.position);

/** A heap of cursors, the one with the newest next entry on top (later file, then later line, on equal times). */
class Newest {
  readonly #heap: Cursor[] = [];

  constructor(readonly files: readonly SentFile[]) {}

  #above(a: Cursor, b: Cursor): boolean {
    const timeA = this.files[a.k]!.times[entryOf(a)]!;
    const timeB = this.files[b.k]!.times[entryOf(b)]!;
    if (timeA !== timeB) return timeA > timeB;
    return a.k !== b.k ? a.k > b.k : entryOf(a) > entryOf(b);
  }

  get size(): number {
    return this.#heap.length;
  }

  push(cursor: Cursor): void {
    const heap = this.#heap;
    heap.push(cursor);
    for (let i = heap.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (!this.#above(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  top(): Cursor {
    return this.#heap[0]!;
  }

  /** The top moved on by one entry: back into place, or out when its file is done. */
  advance(): void {
    const heap = this.#heap;
    const cursor = heap[0]!;
    cursor.position--;
    if (cursor.position < 0) {
      const last = heap.pop()!;
      if (heap.length === 0) return;
      heap[0] = last;
    }
    for (let i = 0; ; ) {
      const left = 2 * i + 1;
      const right = left + 1;
      let best = i;
      if (left < heap.length && this.#above(heap[left]!, heap[best]!)) best = left;
      if (right < heap.length && this.#above(heap[right]!, heap[best]!)) best = right;
      if (best === i) return;
      [heap[i], heap[best]] = [heap[best]!, heap[i]!];
      i = best;
    }
  }
}

/** Reads the records of listed lines: each checked against what the index says, read times and cut bodies applied. */
class Records {
  readonly #lines: Lines;
  readonly #journals = new Map<number, JournalReader | null>();
  /** A listed line no longer held its record: the index is wrong about that file and is dropped. */
  stale = false;

  constructor(
    readonly files: readonly SentFile[],
    readonly sender: string,
    readonly whole: boolean,
  ) {
    this.#lines = new Lines(files);
  }

  at(k: number, at: number): MailRecord | null {
    const file = this.files[k]!;
    if (file.excluded?.[at] === 1) return null;
    let message: Message | null = parseMessage(this.#lines.line(k, at));
    if (!message || message.from !== this.sender || idNumber(message.id) !== file.ids[at]) {
      this.stale = true;
      return null;
    }
    if (!file.archived && message.read_flag === true && typeof message.read_at !== "string") {
      let journal = this.#journals.get(k);
      if (journal === undefined) {
        // No journal (mail read before times were kept, or folded into an archive): no lookup per record.
        journal = existsSync(readsPathOf(file.mailbox)) ? new JournalReader(file.mailbox) : null;
        journal?.refresh();
        this.#journals.set(k, journal);
      }
      if (journal) message = withReadTime(message, journal);
    }
    if (!this.whole && message.message.length > WIDEST_LINE) message = { ...message, message: message.message.slice(0, WIDEST_LINE) };
    return { message, archived: file.archived };
  }
}

/**
 * What `sender` sent (see sentFiles), newest first, in batches. The files stay open until the last batch is taken
 * or the caller stops; a line that no longer held its record is passed over, and the index dropped.
 */
export function* sentNewestFirst(root: string, sender: string, whole: boolean): Generator<MailRecord[]> {
  yield* newestFirstIn(root, sender, sentFiles(root, sender), whole);
}

/** sentNewestFirst over files sentFiles gave (closed once read). */
export function* newestFirstIn(root: string, sender: string, files: SentFile[], whole: boolean): Generator<MailRecord[]> {
  const records = new Records(files, sender, whole);
  try {
    const heap = new Newest(files);
    for (let k = 0; k < files.length; k++) {
      const file = files[k]!;
      if (file.count > 0) heap.push({ k, order: oldestFirst(file), position: file.count - 1 });
    }
    let batch: MailRecord[] = [];
    let batches = 0;
    while (heap.size > 0) {
      const cursor = heap.top();
      const record = records.at(cursor.k, entryOf(cursor));
      heap.advance();
      if (!record) continue;
      batch.push(record);
      if (batch.length === BATCH) {
        yield batch;
        batch = [];
        // The records read are garbage once printed, but the collector let them pile up: `sent` of a million took
        // 250–280 MB (a young-generation collection per batch did not help: they outlive one). A full collection
        // every 16,000 records keeps it near 110 MB (every 32,000: 125–150 MB), in the same time within the noise.
        if (++batches % 8 === 0) Bun.gc(true);
      }
    }
    if (batch.length > 0) yield batch;
  } finally {
    closeAll(files);
    if (records.stale) dropIndex(root, sender);
  }
}

/**
 * Every message `sender` sent that is still in the store (agents' mailboxes and role queues), live or archived, with
 * `read_at` merged, in the order of the files (see sentFiles) and their lines; a message both live and archived (a
 * crash mid-archive) once, as live; a message `agentmail name` moved once, where it is now. Bodies over 1,000
 * characters are cut unless `whole`. Updates the sender's index as a side effect.
 */
export function sentBy(root: string, sender: string, whole = true): MailRecord[] {
  const files = sentFiles(root, sender);
  const records = new Records(files, sender, whole);
  const found: MailRecord[] = [];
  try {
    for (let k = 0; k < files.length; k++) {
      for (let at = 0; at < files[k]!.count; at++) {
        const record = records.at(k, at);
        if (record) found.push(record);
      }
    }
  } finally {
    closeAll(files);
    if (records.stale) dropIndex(root, sender);
  }
  return found;
}
