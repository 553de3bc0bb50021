/**
 * Moving messages from a live mailbox into its archive without holding up its senders and receivers for more than
 * a moment, however long the mailbox (archive.ts holds the archive lock around it, and says how a crash is undone).
 *
 *   1. The snapshot: the mailbox's size is taken under its lock (so no append is half done), then the file is read
 *      up to there a chunk at a time, holding no lock: each line is kept, moved (appended to the archive) or
 *      dropped (another line of a message that moved), and a new mailbox is written beside it with what is kept.
 *      Runs of unchanged lines are copied as they are. Nothing is kept in memory but the ids seen and the lines
 *      still unread. Each message is decided once, by its record as readers see it (records.ts): its first line, or
 *      for a message `agentmail name` moved back here, the copy moved most, which a first read of the snapshot
 *      (a native search for the key `moves`) finds before any line is decided. The record goes to the archive or
 *      stays; the message's other lines (older copies, and repeats) go with it or stay too, so an older copy never
 *      outlives the copy that superseded it, and a copy that came back unread never goes with a read one.
 *   2. Both files are fsynced, still without a lock.
 *   3. The catch-up, under both mailbox locks (no send, no receive): the lines appended since the snapshot are
 *      copied (less repeats of a message that moved: a copy moved more times than its record is new mail); every
 *      line that was unread in the snapshot is looked at again, and one marked read meanwhile is marked read in the
 *      new mailbox (or the archive) too; then the new mailbox is fsynced and renamed over the old one, the cursor
 *      removed and the read journal cut down to the lines for records that carry no `read_at`. That is a few reads
 *      and writes, whatever the mailbox's size.
 *   4. The new mailbox's cursor, under the receive lock alone (cold-cursor.ts: a pass over the lines kept), so the
 *      hook after a cleanup starts where the one before it did.
 * So a line appended after the move began is never dropped, and a read mark made meanwhile is never lost (a lost
 * mark would deliver the message again).
 */
import { closeSync, fstatSync, fsyncSync, lstatSync, mkdirSync, renameSync, unlinkSync } from "node:fs";
import { dirname } from "node:path";
import { AgentmailError } from "../../mail/errors.ts";
import { findReadFlag, movesOf, parseMessage, READ_MARK, serializeMessage, standsForId, type Message } from "../../mail/message.ts";
import { buildColdCursor } from "./cold-cursor.ts";
import { removeCursor } from "./cursor.ts";
import { FileSink } from "../durable/file-sink.ts";
import { IdMap } from "./id-map.ts";
import { createExclusive, openForAppend, openForRead, openForUpdate, readRange, syncDirectory, writeFully } from "../durable/files.ts";
import { eachChunk, eachLine } from "../durable/line-chunks.ts";
import { withBothLocks, withLock } from "../durable/lock.ts";
import { lockPathOf, receiveLockPathOf } from "../local/layout.ts";
import { clearPendingMove, newMailboxPathOf, recordPendingMove, settlePendingMove, type PendingMove } from "./pending-move.ts";
import { JournalReader, replaceReadTimes, withReadTime } from "./read-times.ts";
import type { ArchiveResult, ReadProgress, Selection } from "../store.ts";

const NEWLINE = 0x0a;
/** An id's entry in the move's id table until its record moves; then the record's move count (0 and up). */
const SEEN = -1;
const encoder = new TextEncoder();
const MOVES_KEY = Buffer.from('"moves"');
const UNREAD = encoder.encode("false");
/** Read at a time when looking at the read flags again. */
const WINDOW_BYTES = 64 << 10;

/** Read flags that were `false` in the snapshot: where each is in the mailbox, where its copy went, and its id. */
class UnreadFlags {
  readonly live: number[] = [];
  readonly copy: number[] = [];
  readonly ids: string[] = [];

  add(live: number, copy: number, id: string): void {
    this.live.push(live);
    this.copy.push(copy);
    this.ids.push(id);
  }

  /**
   * Marks read in `target` (open for writing in place) each copy whose original is read now in the mailbox `fd`;
   * returns their ids. A copy made after the mark (lines are copied from the mailbox as they are then) has it
   * already. Reads the mailbox a window at a time, so many flags cost few reads.
   */
  carryMarks(fd: number, size: number, target: number): string[] {
    const marked: string[] = [];
    let windowAt = -1;
    let window: Uint8Array = new Uint8Array(0);
    for (let i = 0; i < this.live.length; i++) {
      const at = this.live[i]!;
      if (at < windowAt || at + READ_MARK.length > windowAt + window.length) {
        windowAt = at;
        window = readRange(fd, at, Math.min(size, at + WINDOW_BYTES));
      }
      if (!sameBytes(window.subarray(at - windowAt, at - windowAt + READ_MARK.length), READ_MARK)) continue;
      marked.push(this.ids[i]!);
      const copy = this.copy[i]!;
      const there = readRange(target, copy, copy + READ_MARK.length);
      if (sameBytes(there, READ_MARK)) continue;
      // The copy was made from these bytes: anything but the flag there is a bug, never something to overwrite.
      if (!sameBytes(there.subarray(0, UNREAD.length), UNREAD)) {
        throw new AgentmailError(
          "io",
          `a read mark could not be carried over at byte ${copy}; nothing was changed; this is a bug in agentmail, please report it`,
        );
      }
      writeFully(target, READ_MARK, copy);
    }
    return marked;
  }
}

const sameBytes = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b) === 0;

/** Ids asked to be archived that are not live in the mailbox. */
export function notInMailbox(ids: readonly string[]): AgentmailError {
  return new AgentmailError(
    "not_found",
    `no message ${ids.join(", ")} in your mailbox; run 'agentmail inbox --all' to see the ids you can archive`,
  );
}

function rewrittenMeanwhile(path: string): AgentmailError {
  return new AgentmailError("locked", `${path} was rewritten by another process meanwhile; nothing was changed; run the command again`);
}

/** The record of a message with a copy `agentmail name` moved here (see recordsOfMovedMessages), and whether it moves. */
interface MovedMessage {
  /** Where the record starts in the mailbox. */
  at: number;
  moving: boolean;
}

/**
 * The records of the messages that have a moved copy among bytes [0, size) of the mailbox `fd`: per id, its first
 * line with the most moves (records.ts), which may come after lines of the message that are decided by it. Lines are
 * found by a native search for the key `moves`, so a mailbox with none costs one read and one search (23 ms for a
 * 185 MB mailbox); a key spelled with escapes (no writer of ours makes one) is not looked for, and such a line is
 * judged as a line of its own.
 */
function recordsOfMovedMessages(fd: number, size: number): Map<string, { at: number; message: Message }> {
  const records = new Map<string, { at: number; message: Message }>();
  eachChunk(fd, 0, size, (chunk, offset) => {
    for (let at = chunk.indexOf(MOVES_KEY); at !== -1; ) {
      const start = chunk.lastIndexOf(NEWLINE, at) + 1;
      const end = chunk.indexOf(NEWLINE, at);
      at = chunk.indexOf(MOVES_KEY, end + 1);
      const message = parseMessage(chunk.toString("utf8", start, end));
      if (!message || movesOf(message) === 0) continue;
      const held = records.get(message.id);
      if (standsForId(message, held && movesOf(held.message))) records.set(message.id, { at: offset + start, message });
    }
  });
  return records;
}

/** One move: the snapshot's decisions, and the files it writes. */
class Move {
  archived = 0;
  /** Per id: SEEN, then once its record moved, the record's move count. */
  readonly #ids = new IdMap();
  /** The messages with moved copies, decided before the snapshot is visited (decideMovedMessages). */
  readonly #movedMessages = new Map<string, MovedMessage>();
  readonly #found = new Set<string>();
  readonly #wanted: Set<string> | null;
  readonly #keptUnread = new UnreadFlags();
  readonly #movedUnread = new UnreadFlags();
  readonly #journal: JournalReader;
  /** The journal was read after the chunk being visited was: a time missing from it is missing for good. */
  #journalFresh = false;
  /** Where the run of unchanged lines not yet handed to the new mailbox starts. */
  #keptFrom = 0;
  /** The size of the new mailbox so far, without that run (in a dry run too, where nothing is written). */
  #keptBytes = 0;
  #changed = false;
  #mailbox: FileSink | null = null;
  #archive: FileSink | null = null;
  #pending: PendingMove | null = null;
  #archiveCreated = false;

  constructor(
    readonly path: string,
    readonly archivePath: string,
    readonly fd: number,
    readonly ino: number,
    readonly selection: Selection,
    readonly dryRun: boolean,
  ) {
    this.#wanted = "ids" in selection ? new Set(selection.ids) : null;
    this.#journal = new JournalReader(path);
    this.#journal.refresh();
  }

  /**
   * Before the snapshot is visited: each message with a moved copy in it is decided by its record, which may come
   * after the message's other lines. The rule is asked once per message, as for any other.
   */
  decideMovedMessages(size: number): void {
    for (const [id, { at, message }] of recordsOfMovedMessages(this.fd, size)) {
      this.#movedMessages.set(id, { at, moving: this.#picks(message) });
    }
  }

  #picks(message: Message): boolean {
    const selection = this.selection;
    return this.#wanted ? this.#wanted.has(message.id) : "pick" in selection && selection.pick(message);
  }

  /** The record with its read time from the journal folded in, when it is read and carries none. */
  #withTime(message: Message): Message {
    if (
      message.read_flag === true &&
      typeof message.read_at !== "string" &&
      !this.#journalFresh &&
      this.#journal.get(message.id) === undefined
    ) {
      // Its time was journaled before its mark (read-times.ts), so reading the journal again now finds it.
      this.#journal.refresh();
      this.#journalFresh = true;
    }
    return withReadTime(message, this.#journal);
  }

  /**
   * Called before the lines of each chunk of the snapshot. A young-generation collection per chunk keeps memory
   * flat: the lines parsed are garbage at once, but with the id table's megabytes live the collector let them pile
   * up to hundreds of megabytes (measured: 340 MB at a million lines, 110 MB with this, at no cost in time).
   */
  readonly newChunk = (): void => {
    this.#journalFresh = false;
    Bun.gc(false);
  };

  /** Called for each complete line of the snapshot, in order. */
  readonly visit = (chunk: Buffer, start: number, end: number, offset: number): void => {
    const message = parseMessage(chunk.toString("utf8", start, end));
    // A line that is not a message stays as it is.
    if (!message) return;
    const next = offset + (end - start) + 1;
    const id = message.id;
    const moves = movesOf(message);
    let fate: "move" | "drop" | "keep";
    let record: boolean;
    const moved = this.#movedMessages.get(id);
    if (moved) {
      // Decided already, by its record (decideMovedMessages): the record moves or stays, and its other lines with it.
      record = offset === moved.at;
      fate = !moved.moving ? "keep" : record ? "move" : "drop";
    } else {
      const state = this.#ids.put(id, SEEN);
      record = state === undefined;
      if (state !== undefined && state !== SEEN) {
        this.#ids.put(id, state);
        // A later line of a message that moved goes too, so it never becomes the first line with its id; unless it
        // was moved more times than the record that went (a copy with its key spelled otherwise): new mail then.
        fate = moves <= state ? "drop" : "keep";
      } else fate = record && this.#picks(message) ? "move" : "keep";
    }
    if (fate === "drop") {
      this.#skipTo(offset, next);
      return;
    }
    const flag = message.read_flag === false ? findReadFlag(chunk, start, end) : null;
    const flagAt = flag && !flag.read ? offset + (flag.offset - start) : -1;
    if (fate === "move") {
      const archived = this.#withTime(message);
      this.#skipTo(offset, next);
      this.#ids.put(id, moves);
      if (this.#wanted) this.#found.add(id);
      this.archived++;
      if (this.dryRun) return;
      const archive = this.#archiveSink();
      if (archived !== message) archive.write(encoder.encode(serializeMessage(archived)));
      else {
        if (flagAt !== -1) this.#movedUnread.add(flagAt, archive.size + (flagAt - offset), id);
        archive.copy(this.fd, offset, next);
      }
      return;
    }
    const folded = record ? this.#withTime(message) : message;
    if (folded !== message) {
      this.#skipTo(offset, next);
      const line = encoder.encode(serializeMessage(folded));
      this.#keptBytes += line.length;
      if (!this.dryRun) this.#mailboxSink().write(line);
      return;
    }
    if (flagAt !== -1 && !this.dryRun) this.#keptUnread.add(flagAt, this.#keptBytes + (flagAt - this.#keptFrom), id);
  };

  /** Hands the unchanged run before `offset` to the new mailbox; the line up to `next` is dealt with otherwise. */
  #skipTo(offset: number, next: number): void {
    this.#changed = true;
    this.#keptBytes += offset - this.#keptFrom;
    if (!this.dryRun) this.#mailboxSink().copy(this.fd, this.#keptFrom, offset);
    this.#keptFrom = next;
  }

  /**
   * The new mailbox, created at the first change, and with it the record of the move, before anything is appended
   * to the archive (pending-move.ts).
   */
  #mailboxSink(): FileSink {
    if (this.#mailbox) return this.#mailbox;
    this.#mailbox = new FileSink(createExclusive(newMailboxPathOf(this.path)));
    let archive: { ino: number; size: number } | null = null;
    try {
      archive = lstatSync(this.archivePath);
    } catch {
      // No archive yet.
    }
    this.#pending = { archiveIno: archive?.ino ?? null, archiveSize: archive?.size ?? 0 };
    recordPendingMove(this.path, this.#pending);
    return this.#mailbox;
  }

  /** The archive, opened for appending at the first record moved; a torn last line is terminated first. */
  #archiveSink(): FileSink {
    if (this.#archive) return this.#archive;
    this.#mailboxSink();
    mkdirSync(dirname(this.archivePath), { recursive: true, mode: 0o700 });
    const { fd, stat } = openForAppend(this.archivePath);
    this.#archiveCreated = stat.size === 0;
    this.#archive = new FileSink(fd, stat.size);
    if (stat.size > 0 && readRange(fd, stat.size - 1, stat.size)[0] !== NEWLINE) this.#archive.write(encoder.encode("\n"));
    return this.#archive;
  }

  /** After the last complete line of the snapshot: checks that every id asked for was found. */
  endSnapshot(end: number, size: number): { changed: boolean; removed: boolean } {
    const missing = this.#wanted ? [...this.#wanted].filter((id) => !this.#found.has(id)) : [];
    if (missing.length > 0) throw notInMailbox(missing);
    const left = this.#keptBytes + (end - this.#keptFrom) + (size - end);
    return { changed: this.#changed, removed: left === 0 };
  }

  /** Step 2: what the snapshot wrote, on disk. */
  flushSnapshot(end: number): void {
    const mailbox = this.#mailboxSink();
    mailbox.copy(this.fd, this.#keptFrom, end);
    this.#keptFrom = end;
    mailbox.flush();
    fsyncSync(mailbox.fd);
    if (this.#archive) {
      this.#archive.flush();
      fsyncSync(this.#archive.fd);
      if (this.#archiveCreated) {
        syncDirectory(dirname(this.archivePath));
        syncDirectory(dirname(dirname(this.archivePath)));
      }
    }
  }

  /** Step 3, under both mailbox locks: returns whether the mailbox was removed (nothing left in it). */
  catchUpAndReplace(end: number): boolean {
    const { path, fd } = this;
    const mailbox = this.#mailbox!;
    let now: number | null = null;
    try {
      now = lstatSync(path).ino;
    } catch {
      // Removed: by a process that does not take the archive lock (an older agentmail).
    }
    if (now !== this.ino) throw rewrittenMeanwhile(path);
    const size = fstatSync(fd).size;
    // Lines appended since the snapshot, less repeats of a message that moved (a copy moved more times than the
    // record that went is new mail, which a rename brought); a torn tail stays as it is.
    const appended: string[] = [];
    const last = eachLine(fd, end, size, (chunk, start, lineEnd, offset) => {
      const next = offset + (lineEnd - start) + 1;
      const message = parseMessage(chunk.toString("utf8", start, lineEnd));
      const moved = message ? this.#ids.get(message.id) : undefined;
      if (moved !== undefined && moved !== SEEN && movesOf(message!) <= moved) return;
      if (message) appended.push(message.id);
      mailbox.copy(fd, offset, next);
    });
    mailbox.copy(fd, last, size);
    mailbox.flush();
    // Read marks made since the snapshot, carried over.
    const dir = dirname(path);
    const temp = newMailboxPathOf(path);
    const replacement = openForUpdate(temp)!;
    let marked: string[];
    try {
      marked = this.#keptUnread.carryMarks(fd, size, replacement.fd);
    } finally {
      closeSync(replacement.fd);
    }
    if (this.#archive && this.#movedUnread.live.length > 0) {
      // Written in place: on Linux a write at an offset through an O_APPEND descriptor goes to the end instead.
      const archive = openForUpdate(this.archivePath)!;
      try {
        if (this.#movedUnread.carryMarks(fd, size, archive.fd).length > 0) fsyncSync(archive.fd);
      } finally {
        closeSync(archive.fd);
      }
    }
    fsyncSync(mailbox.fd);
    // The commit (pending-move.ts); a mailbox left with no line is then removed.
    renameSync(temp, path);
    const removed = mailbox.size === 0;
    if (removed) unlinkSync(path);
    syncDirectory(dir);
    removeCursor(path);
    // The journal keeps the times of the records that carry none: those marked meanwhile and those appended.
    this.#journal.refresh();
    const kept: [string, string][] = [];
    for (const id of [...marked, ...appended]) {
      const time = this.#journal.get(id);
      if (time !== undefined) kept.push([id, time]);
    }
    replaceReadTimes(path, kept);
    clearPendingMove(path);
    return removed;
  }

  /** Undoes whatever this move wrote (nothing is renamed yet): the archive cut back, the new mailbox removed. */
  abandon(): void {
    const started = this.#mailbox !== null;
    this.close();
    if (started) settlePendingMove(this.path, this.archivePath, this.#pending);
  }

  close(): void {
    for (const sink of [this.#mailbox, this.#archive]) {
      if (!sink) continue;
      try {
        closeSync(sink.fd);
      } catch {
        // Closed already.
      }
    }
    this.#mailbox = null;
    this.#archive = null;
  }
}

/**
 * Moves the messages `selection` picks from the mailbox at `path` into its archive (see the top of this file), and
 * removes a mailbox left with no line. With `dryRun`, only reports. Call holding the mailbox's archive lock.
 */
export async function moveMessages(
  path: string,
  archivePath: string,
  selection: Selection,
  dryRun: boolean,
  onBytes?: ReadProgress,
): Promise<ArchiveResult> {
  const file = openForRead(path);
  if (!file) {
    if ("ids" in selection && selection.ids.length > 0) throw notInMailbox(selection.ids);
    return { archived: 0, removed: false };
  }
  let move: Move | null = null;
  try {
    // Taken under the mailbox lock, the size is where no append is under way: one that fails is cut off again
    // before that lock is let go, so every byte before it stays.
    const size = await withLock(lockPathOf(path), () => fstatSync(file.fd).size);
    move = new Move(path, archivePath, file.fd, file.stat.ino, selection, dryRun);
    move.decideMovedMessages(size);
    const moving = move;
    const end = eachLine(file.fd, 0, size, move.visit, (length) => {
      moving.newChunk();
      onBytes?.(length);
    });
    const { changed, removed } = move.endSnapshot(end, size);
    if (dryRun || (!changed && !removed)) return { archived: move.archived, removed };
    move.flushSnapshot(end);
    const replacing = move;
    const gone = await withBothLocks(lockPathOf(path), receiveLockPathOf(path), () => replacing.catchUpAndReplace(end));
    // A new cursor for the new mailbox at once (a streaming pass over what was kept, just written), under the receive
    // lock alone, so sends go on meanwhile: the hook after a cleanup starts where the one before it did.
    if (!gone) await withLock(receiveLockPathOf(path), () => buildColdCursor(path));
    return { archived: move.archived, removed: gone };
  } catch (error) {
    move?.abandon();
    throw error;
  } finally {
    move?.close();
    closeSync(file.fd);
  }
}
