/**
 * A file store mailbox: `<name>.jsonl`, one JSON message a line, appended to and read in place; the file store's part
 * of the Store contract's delivery guarantee (store.ts). Its contract:
 *
 *   appendMessage   the message is on disk (written and fsynced under the mailbox lock, `.lock`) before it returns;
 *                   a failed write is taken back whole, so no reader sees part of it; the first line of each delivery
 *                   key (id, moves) is the one a mailbox delivers
 *   takeOldestUnread  under the receive lock (`.rlock`): the oldest unread message (or the oldest `prefer` accepts)
 *                   is shown, then marked read in place (mark-read.ts); never shown to two receivers, shown again
 *                   only when a receiver died between showing and marking; senders never wait for a receiver
 *   countUnread     read without a lock, from the cursor (cursor.ts) on
 *
 * Lines that are not messages, and later lines with an id already used, are reported (SkipReporter, "byte N") and
 * passed over, never deleted. Locks nest as lock.ts orders them: the receive lock, then the mailbox lock.
 */
import { closeSync, fstatSync, fsyncSync, ftruncateSync, lstatSync, readdirSync, unlinkSync } from "node:fs";
import { AgentmailError } from "../../mail/errors.ts";
import {
  deliveryKey,
  idText,
  keyBytes,
  keyText,
  movesOf,
  NOT_A_MESSAGE,
  parseMessage,
  READ_MARK,
  scanLine,
  serializeMessage,
  surelyNoRepeatedKey,
  unreadMessagesIn,
  type Message,
} from "../../mail/message.ts";
import { decodeName } from "../../mail/names.ts";
import { advanceCursor, cursorHolds, cursorProblem, maybeUsedBefore, unreadRegion, type Region } from "./cursor.ts";
import { openForAppend, openForRead, readRange, syncDirectory, writeFully, type OpenFile } from "../durable/files.ts";
import { PassedIds } from "./id-index.ts";
import { eachChunk } from "../durable/line-chunks.ts";
import { lockPathOf, MAILBOX_SUFFIX, mailboxPath, receiveLockPathOf } from "../local/layout.ts";
import { withLock } from "../durable/lock.ts";
import { markAt, underReceiveLock } from "./mark-read.ts";
import type { Preference } from "../../mail/order.ts";
import type { Show, SkipReporter } from "../store.ts";

const NEWLINE = 0x0a;
const decoder = new TextDecoder();

/**
 * The complete line of `bytes` that starts at `start`, or null: a trailing part with no newline is a line still
 * being written, or torn. Walked as `for (let line = lineAt(b, 0); line; line = lineAt(b, line.end + 1))`, not with
 * a generator (docs/performance.md).
 */
function lineAt(bytes: Uint8Array, start: number): Line | null {
  const end = start < bytes.length ? bytes.indexOf(NEWLINE, start) : -1;
  return end === -1 ? null : { start, end };
}

function sendFailed(path: string, error: unknown, undone: boolean): AgentmailError {
  const code = (error as NodeJS.ErrnoException).code;
  const state = undone
    ? "the message was not sent and the mailbox is as it was"
    : `the message was not sent, but ${path} could not be restored`;
  if (code === "ENOSPC") return new AgentmailError("io", `no space left on device for ${path}; ${state}; free space and send again`);
  if (code === "EDQUOT") return new AgentmailError("io", `disk quota exceeded for ${path}; ${state}; free space and send again`);
  const what = `could not write to ${path} (${code ?? String(error)})`;
  return new AgentmailError("io", `${what}; ${state}; check the mail store's permissions and free space, then send again`);
}

/**
 * The disk refused to make an appended line durable (fsync failed: an I/O error, or space it could not find at
 * write-back). The line was written and may be read already, so it cannot be taken back: the send says so.
 */
function notDurable(path: string, error: unknown): AgentmailError {
  const code = (error as NodeJS.ErrnoException).code ?? String(error);
  return new AgentmailError(
    "io",
    `the disk could not make the message durable in ${path} (${code}): it may be delivered, or lost if the machine stops; check the disk, then check with \`agentmail sent\` before sending again`,
  );
}

/** Takes back a failed append: the file is cut back to its size before it, or removed if the append created it. */
function undoAppend(path: string, file: OpenFile & { created: boolean }): boolean {
  try {
    if (file.created) unlinkSync(path);
    else {
      ftruncateSync(file.fd, file.stat.size);
      fsyncSync(file.fd);
    }
    return true;
  } catch {
    return false;
  }
}

/** An append waiting for its batch to be written: see appendMessage. */
interface Pending extends AppendSteps {
  line: string;
  settle(error?: unknown, written?: boolean): void;
}

/** The batch of each mailbox that is waiting for the mailbox's lock, which later appends of this process join. */
const forming = new Map<string, Pending[]>();

/**
 * Appends one message as one whole line, under the mailbox lock, then fsyncs once the lock is let go: when send
 * prints an id, the message is on disk. A torn last line (a writer SIGKILLed mid-append) is terminated first so the
 * new line is never glued onto it. A write that fails (a full disk, a short write) is taken back before the lock is
 * released, so no reader ever sees a piece of it and no later send can complete it into a message; a failed fsync
 * cannot be (see notDurable).
 * `stillOpen` runs under the lock first and throws when the mailbox may no longer be written (the store moved);
 * `admits`, given the mailbox's bytes under that lock, may refuse the message: then nothing is written (false);
 * `written` runs under the lock once the line is in the file, before its fsync (the doorbell's ring: see doorbell.ts).
 *
 * Appends of one process to one mailbox that come while an earlier one waits for the lock or writes are written
 * together once the lock is theirs, in the order they came, with one write and one fsync (a group commit): a
 * long-lived process (the MCP server, migrate, the bridges) pays one fsync per batch, not per message. A batch that
 * fails is taken back whole, and each of its appends fails. An append with `admits` (a moved copy, rare) is a batch
 * of its own: it is judged against the mailbox as it is.
 */
export function appendMessage(root: string, message: Message, options: AppendSteps = {}): Promise<boolean> {
  const path = mailboxPath(root, message.to);
  return new Promise((resolve, reject) => {
    const pending: Pending = {
      line: serializeMessage(message),
      ...options,
      settle: (error, written = true) => (error ? reject(error) : resolve(written)),
    };
    const batch = options.admits ? undefined : forming.get(path);
    if (batch) {
      batch.push(pending);
      return;
    }
    const opened = [pending];
    if (!options.admits) forming.set(path, opened);
    writeBatch(root, path, opened).then(
      () => {},
      (error) => {
        // Never got the lock (a timeout): later appends must not join a batch that is over.
        if (forming.get(path) === opened) forming.delete(path);
        for (const each of opened) each.settle(error);
      },
    );
  });
}

export interface AppendSteps {
  stillOpen?: () => void;
  admits?: (mailbox: Uint8Array) => boolean;
  written?: () => void;
}

async function writeBatch(root: string, path: string, batch: Pending[]): Promise<void> {
  const written = await withLock(lockPathOf(path), () => {
    // Closed: appends from now on form the next batch, which waits for this lock in line.
    if (forming.get(path) === batch) forming.delete(path);
    const open: Pending[] = [];
    for (const each of batch) {
      try {
        each.stillOpen?.();
        open.push(each);
      } catch (error) {
        each.settle(error);
      }
    }
    if (open.length === 0) return null;
    let text = open[0]!.line;
    for (let i = 1; i < open.length; i++) text += open[i]!.line;
    const file = openForAppend(path);
    try {
      // Only a batch of one has `admits` (see above).
      const admits = open[0]!.admits;
      if (admits && !admits(readRange(file.fd, 0, file.stat.size))) {
        if (file.created) undoAppend(path, file);
        open[0]!.settle(undefined, false);
        closeSync(file.fd);
        return null;
      }
      const torn = file.stat.size > 0 && readRange(file.fd, file.stat.size - 1, file.stat.size)[0] !== NEWLINE;
      try {
        writeFully(file.fd, torn ? `\n${text}` : text);
      } catch (error) {
        throw sendFailed(path, error, undoAppend(path, file));
      }
    } catch (error) {
      closeSync(file.fd);
      throw error;
    }
    for (const each of open) {
      try {
        each.written?.();
      } catch {
        // The message is stored: what follows a write cannot take it back.
      }
    }
    return { file, open };
  });
  if (!written) return;
  const { file, open } = written;
  // The fsync comes after the lock is let go, so senders of other processes append while it runs and the kernel
  // commits their fsyncs together: holding the lock through it made the disk's latency everyone's wait.
  try {
    fsyncSync(file.fd);
    if (file.created) syncDirectory(root);
  } catch (error) {
    for (const each of open) each.settle(notDurable(path, error));
    return;
  } finally {
    closeSync(file.fd);
  }
  for (const each of open) each.settle();
}

interface Line {
  start: number;
  end: number;
}

/**
 * Whether anything was appended after the cursor, looked at without a lock: a reader sees whole lines or an
 * incomplete tail, never a torn line in the middle. With nothing new, which is what a hook finds on most turns,
 * a receive ends here without taking a lock.
 */
function hasLinesPastCursor(path: string): boolean | "cold" {
  const file = openForRead(path);
  if (!file) return false;
  try {
    // A long mailbox with no cursor is not read whole here: the caller makes its cursor first (cold-cursor.ts).
    if (file.stat.size >= COLD_SCAN_BYTES && !cursorHolds(path, file.fd, file.stat.ino, file.stat.size)) return "cold";
    return unreadRegion(path, file.fd, file.stat.ino, file.stat.size).bytes.includes(NEWLINE);
  } finally {
    closeSync(file.fd);
  }
}

/** From this size on, a mailbox without a cursor gets one from a streaming scan before a receive reads it. */
const COLD_SCAN_BYTES = 1 << 20;

/** The oldest deliverable message of a region, and what was passed on the way to it. */
interface Found {
  message: Message | null;
  /** File offset of the message's read_flag value. */
  flagOffset: number;
  line: Line | null;
  /** The found message's delivery key (deliveryKey in mail/message.ts, UTF-8). */
  id: Uint8Array | null;
  /** The last line passed (and the found one, if any, is after it). */
  lastPassed: Line | null;
  /** Delivery keys of the lines passed, in order: they go into the cursor's id set. */
  passedIds: PassedIds;
  /** Lines passed that are to be reported: file offset and why. */
  skips: [number, string][];
  /** The message is a preferred one found past the oldest unread, which stays unread before it. */
  preferredOver?: boolean;
}

/** Whether a line of bytes[0, end) has this delivery key (UTF-8): the history, searched on a "maybe". */
function usedIn(bytes: Uint8Array, end: number, id: Uint8Array): boolean {
  const passed = new PassedIds();
  const history = bytes.subarray(0, end);
  for (let line = lineAt(history, 0); line; line = lineAt(history, line.end + 1)) {
    passed.add(keyBytes(bytes, scanLine(bytes, line.start, line.end)));
  }
  return passed.has(id);
}

/** Whether a line before the region has this delivery key: the cursor's id set says "maybe", the history says for sure. */
function usedBeforeRegion(path: string, fd: number, region: Region, id: Uint8Array): boolean {
  return maybeUsedBefore(path, region, id) && usedIn(readRange(fd, 0, region.base), region.base, id);
}

const MOVES_KEY = '"moves"';

let latin1: TextDecoder | undefined;

/**
 * The bytes as text of one character per byte (windows-1252, which the WHATWG "latin1" decoder reads), so that the
 * native String#indexOf finds ASCII text at its byte offset: ASCII bytes stay themselves, every other byte becomes a
 * character outside ASCII (not Buffer's indexOf: docs/performance.md).
 */
function bytewise(bytes: Uint8Array): string {
  latin1 ??= new TextDecoder("latin1");
  return latin1.decode(bytes);
}

/**
 * The copies `agentmail name` moved among some lines, so a line can be asked whether a later copy of its message,
 * moved more times, supersedes it: then that line is never delivered. A rename's move killed after its copy and
 * before its mark leaves the message unread in both mailboxes; moved back, the copy is stored again, unread, after
 * the line it came from (mail/moves.ts), and only one of the two may be delivered. Found by a native search for the
 * key `"moves"`, so lines with none cost one search in all; a key spelled with escapes (no writer of ours does) is
 * not looked for.
 */
export class MovedCopies {
  readonly #byId = new Map<string, { start: number; moves: number }[]>();

  /** Null when no line holds the key: nothing supersedes anything. */
  static in(bytes: Uint8Array, from = 0): MovedCopies | null {
    const copies = new MovedCopies();
    return copies.#add(bytes, from, 0) ? copies : null;
  }

  /** The same for a whole file, read a chunk at a time (line-chunks.ts); positions are the file's. */
  static inFile(fd: number, size: number): MovedCopies | null {
    const copies = new MovedCopies();
    let any = false;
    eachChunk(fd, 0, size, (chunk, offset) => {
      any = copies.#add(chunk, 0, offset) || any;
    });
    return any ? copies : null;
  }

  /** Adds the moved copies among the lines of bytes[from, …), each at `offset` plus its place; false if none. */
  #add(bytes: Uint8Array, from: number, offset: number): boolean {
    const haystack = bytewise(bytes);
    let at = haystack.indexOf(MOVES_KEY, from);
    if (at === -1) return false;
    while (at !== -1) {
      const start = Math.max(from, bytes.lastIndexOf(NEWLINE, at) + 1);
      const end = bytes.indexOf(NEWLINE, at);
      if (end === -1) break;
      const scan = scanLine(bytes, start, end, true);
      const id = scan.moves > 0 && scan.flag !== null && !scan.duplicateKey ? idText(bytes, scan) : null;
      if (id !== null && parseMessage(decoder.decode(bytes.subarray(start, end))) !== null) {
        const list = this.#byId.get(id) ?? [];
        list.push({ start: offset + start, moves: scan.moves });
        this.#byId.set(id, list);
      }
      at = haystack.indexOf(MOVES_KEY, end + 1);
    }
    return true;
  }

  /** Whether a line starting after `start` holds a copy of the message `id` (canonical JSON text) moved more than `moves` times. */
  supersede(start: number, id: string, moves: number): boolean {
    const list = this.#byId.get(id);
    if (list) for (const copy of list) if (copy.start > start && copy.moves > moves) return true;
    return false;
  }
}

/**
 * Finds the oldest line that is a message, unread, and the first line with its delivery key (its id, and for a copy
 * `agentmail name` moved, how many moves it made: mail/message.ts). Lines passed are read ones, lines that are not
 * messages, later lines with a key already used (the first line with a key wins), and lines a later, more moved
 * copy of the same message supersedes (MovedCopies). "Already used"
 * is answered from the lines passed here, and for the lines before the region by the cursor's id set, whose
 * "maybe" is confirmed by searching the history, so a fingerprint collision never hides a message.
 */
function findOldestUnread(path: string, fd: number, region: Region, prefer?: Preference, only = false): Found {
  const { base, bytes } = region;
  const found: Found = { message: null, flagOffset: -1, line: null, id: null, lastPassed: null, passedIds: new PassedIds(), skips: [] };
  const usedBefore = (id: Uint8Array) => found.passedIds.has(id) || usedBeforeRegion(path, fd, region, id);
  const pass = (line: Line, id: Uint8Array | null, skipped?: string) => {
    found.lastPassed = line;
    if (skipped) found.skips.push([base + line.start, skipped]);
    found.passedIds.add(id);
  };
  const moved = MovedCopies.in(bytes);
  for (let line = lineAt(bytes, 0); line; line = lineAt(bytes, line.end + 1)) {
    const quick = scanLine(bytes, line.start, line.end);
    if (quick.flag?.read) {
      pass(line, keyBytes(bytes, quick));
      continue;
    }
    // A line that may be delivered is checked for every key given twice, not just id and read_flag.
    const scan = scanLine(bytes, line.start, line.end, true);
    const message = scan.flag && !scan.duplicateKey ? parseMessage(decoder.decode(bytes.subarray(line.start, line.end))) : null;
    const id = keyBytes(bytes, scan);
    if (!message || id === null) {
      pass(line, null, scan.duplicateKey ? `it has the key ${scan.duplicateKey} more than once, so it is not a message` : NOT_A_MESSAGE);
    } else if (usedBefore(id)) {
      pass(line, null, `its id ${keyText(bytes, scan)} was already used by an earlier line, and the first line with an id wins`);
    } else if (moved?.supersede(line.start, idText(bytes, scan)!, scan.moves)) {
      pass(line, id);
    } else {
      const oldest: Found = { ...found, message, flagOffset: base + scan.flag!.offset, line, id };
      if (!prefer || prefer(message)) return oldest;
      const chosen = preferredAfter(path, fd, region, oldest, prefer, moved);
      // `only`: none but a message prefer accepts; the lines passed before the oldest still move the cursor.
      return only && chosen === oldest ? found : chosen;
    }
  }
  return found;
}

/**
 * The first message after `oldest` that `prefer` accepts (urgent mail first, for hooks), or `oldest` when none
 * does. Lines in between stay as they are: the cursor only ever moves past the oldest unread (preferredOver marks
 * that the found message is not it), so nothing before the preferred one is skipped for good.
 *
 * A hook passes every unread line after the oldest on each turn, so this is cheap: a line that cannot be picked
 * (it holds neither what `prefer` mentions nor an escape of it) is not even scanned, and the ids of the lines
 * passed are gathered, and the cursor's id set asked, only for a line that is picked.
 */
function preferredAfter(path: string, fd: number, region: Region, oldest: Found, prefer: Preference, moved: MovedCopies | null): Found {
  const { base, bytes } = region;
  const from = oldest.line!.end + 1;
  const seen = new PassedIds();
  seen.add(oldest.id);
  let seenUpTo = from;
  const usedBefore = (line: Line, id: Uint8Array) => {
    for (let passed = lineAt(bytes, seenUpTo); passed && passed.end < line.start; passed = lineAt(bytes, passed.end + 1)) {
      seen.add(keyBytes(bytes, scanLine(bytes, passed.start, passed.end)));
    }
    seenUpTo = line.start;
    return seen.has(id) || oldest.passedIds.has(id) || usedBeforeRegion(path, fd, region, id);
  };
  const mayHold = mentionFilter(bytes, from, prefer.mention);
  if (!mayHold(null)) return oldest;
  for (let line = lineAt(bytes, from); line; line = lineAt(bytes, line.end + 1)) {
    if (!mayHold(line)) continue;
    const scan = scanLine(bytes, line.start, line.end, true);
    const id = keyBytes(bytes, scan);
    const unread = scan.flag?.read === false && !scan.duplicateKey;
    const message = unread ? parseMessage(decoder.decode(bytes.subarray(line.start, line.end))) : null;
    if (
      message &&
      id !== null &&
      prefer(message) &&
      !usedBefore(line, id) &&
      !moved?.supersede(line.start, idText(bytes, scan)!, scan.moves)
    ) {
      return { ...oldest, message, flagOffset: base + scan.flag!.offset, line, id, preferredOver: true };
    }
  }
  return oldest;
}

/**
 * Whether a line from `from` on may hold `mention` (asked in file order; null asks whether any line may): as it is,
 * or with one of its characters as a `\uXXXX` escape in either case, since any JSON spelling of the text holds one
 * of these. Every byte is searched at most once per spelling, by the native indexOf. No mention: every line may.
 */
function mentionFilter(bytes: Uint8Array, from: number, mention: string | undefined): (line: Line | null) => boolean {
  if (mention === undefined) return () => true;
  const haystack = bytewise(bytes);
  const spellings = [mention];
  for (let at = 0; at < mention.length; at++) {
    let cases = [""];
    const hex = mention.charCodeAt(at).toString(16).padStart(4, "0");
    for (let digit = 0; digit < hex.length; digit++) {
      const lower = hex[digit]!;
      const upper = lower.toUpperCase();
      const grown: string[] = [];
      for (let i = 0; i < cases.length; i++) {
        grown.push(cases[i]! + lower);
        if (upper !== lower) grown.push(cases[i]! + upper);
      }
      cases = grown;
    }
    for (let i = 0; i < cases.length; i++) spellings.push(`\\u${cases[i]}`);
  }
  const next: number[] = [];
  for (let i = 0; i < spellings.length; i++) next.push(haystack.indexOf(spellings[i]!, from));
  return (line) => {
    for (let i = 0; i < next.length; i++) {
      if (line === null) {
        if (next[i] !== -1) return true;
        continue;
      }
      if (next[i] !== -1 && next[i]! < line.start) next[i] = haystack.indexOf(spellings[i]!, line.start);
      if (next[i] !== -1 && next[i]! < line.end) return true;
    }
    return false;
  };
}

interface Look {
  region: Region;
  ino: number;
  found: Found;
  /** The found line is the last thing in the file. */
  atEnd: boolean;
}

/**
 * Whether a message found as the last line of the file is there to stay. Only the line being appended can still
 * be taken back (a send that fails cuts it off before it lets go of the mailbox lock), and that is the last one.
 * With no send holding the lock now, the send of this line is over, and if the line is still there byte for
 * byte, it stays. Otherwise the caller looks again under the lock.
 */
function settled(path: string, fd: number, seen: Look): boolean {
  try {
    lstatSync(lockPathOf(path));
    return false;
  } catch {
    // No send is under way.
  }
  const { region, found } = seen;
  const line = region.bytes.subarray(found.line!.start, found.line!.end + 1);
  const start = region.base + found.line!.start;
  return Buffer.compare(readRange(fd, start, start + line.length), line) === 0;
}

function look(path: string, fd: number, prefer?: Preference, only?: boolean): Look {
  const stat = fstatSync(fd);
  const region = unreadRegion(path, fd, stat.ino, stat.size);
  const found = findOldestUnread(path, fd, region, prefer, only);
  return { region, ino: stat.ino, found, atEnd: found.line !== null && region.base + found.line.end + 1 === stat.size };
}

/**
 * Delivers the oldest unread message of `agent`'s mailbox: finds it, hands it to `show`, and marks it read (five
 * bytes in place, `false` becomes `true `) only once `show` has returned, so a message is read only after its whole
 * output was written. If `show` throws, or the process dies before the mark, the message stays unread.
 *
 * Why one lock held from find to mark, and not a claim: the receive lock is held across `show`, so two receivers of
 * one mailbox never get the same message, and one killed anywhere before its mark leaves the message unread with a
 * dead holder's lock that the next receiver breaks at once. Its price: while a live receiver is blocked writing its
 * output (a full pipe nobody reads), other receivers of that mailbox wait, then fail after the lock timeout naming
 * its pid; it is never broken while its holder lives (no lock is: see lock.ts), since that would deliver the
 * message twice. Senders never wait for it. A claim record would let other receivers pass a blocked one, at the cost of a
 * second file written per receive and a lease to expire, for a case (one agent, two receivers, one of them stuck)
 * that has no better answer than waiting.
 *
 * Receivers read without the mailbox lock: a message with anything after it was appended by a send that is over,
 * and one at the very end of the file is checked (settled) or looked at again under that lock. So a flood of
 * senders, which keeps that lock busy, does not starve receivers.
 *
 * Lines that are not messages, and later lines with an id already used, are reported and skipped, never deleted.
 */
export async function takeOldestUnread(
  root: string,
  agent: string,
  onSkip: SkipReporter,
  show: Show = () => {},
  prefer?: Preference,
  only?: boolean,
): Promise<Message | null> {
  const path = mailboxPath(root, agent);
  let past = hasLinesPastCursor(path);
  if (past === "cold") {
    const { buildColdCursor } = await import("./cold-cursor.ts");
    await withLock(receiveLockPathOf(path), () => buildColdCursor(path));
    past = hasLinesPastCursor(path);
  }
  if (!past) return null;
  return underReceiveLock(path, async (file) => {
    let seen = look(path, file.fd, prefer, only);
    if (seen.atEnd && !settled(path, file.fd, seen)) seen = await withLock(lockPathOf(path), () => look(path, file.fd, prefer, only));
    const { region, ino, found } = seen;
    for (const [offset, reason] of found.skips) onSkip(path, `byte ${offset}`, reason);
    const { message, line } = found;
    if (!message || !line) {
      if (found.lastPassed) advanceCursor(path, region, ino, passedLine(region, found.lastPassed), found.passedIds);
      return null;
    }
    // Shown as read, with the time it is read at: the mark and its journal line follow once it has been shown.
    const readAt = new Date();
    message.read_flag = true;
    message.read_at = readAt.toISOString();
    await show(message);
    markAt(path, file.fd, message.id, found.flagOffset, readAt);
    region.bytes.set(READ_MARK, found.flagOffset - region.base);
    if (!found.preferredOver) {
      found.passedIds.add(found.id);
      advanceCursor(path, region, ino, passedLine(region, line), found.passedIds);
    }
    return message;
  });
}

function passedLine(region: Region, line: Line): { start: number; bytes: Uint8Array } {
  return { start: region.base + line.start, bytes: region.bytes.subarray(line.start, line.end + 1) };
}

/** The agents that have a mailbox in the store (files that are not mailboxes are ignored). */
export const listMailboxes = (root: string): string[] => agentsWithFilesIn(root, MAILBOX_SUFFIX);

/** The agents that have a file named `<encoded name><suffix>` in `dir`, sorted; none when `dir` cannot be read. */
export function agentsWithFilesIn(dir: string, suffix: string): string[] {
  let files: string[];
  try {
    files = readdirSync(dir);
  } catch {
    return [];
  }
  const agents: string[] = [];
  for (const file of files) {
    if (!file.endsWith(suffix)) continue;
    const agent = decodeName(file.slice(0, -suffix.length));
    if (agent !== null) agents.push(agent);
  }
  return agents.sort();
}

/**
 * Unread messages in a mailbox, counted without a lock (a reader only; a line being appended is not complete yet
 * and is not counted). Starts at the cursor like receive, so it is cheap however long the history is. A repeat of
 * an id from before the cursor is still counted until a receive passes it (the id set is not read here).
 * `ids` collects the counted messages' ids (the cursor's count is not used then).
 */
export function countUnread(root: string, agent: string, ids?: string[]): number {
  const path = mailboxPath(root, agent);
  const file = openForRead(path);
  if (!file) return 0;
  try {
    const { bytes } = unreadRegion(path, file.fd, file.stat.ino, file.stat.size);
    const end = bytes.lastIndexOf(NEWLINE);
    if (end === -1) return 0;
    const counted = ids ? null : unreadMessagesIn(decoder.decode(bytes.subarray(0, end)));
    if (counted !== null) return counted;
    // Ids as canonical JSON text. A line is judged from its parse when that surely tells what a scan would (no key
    // given twice): a scan of every line in JS cost a count over a long inbox more than the rest of the receive.
    const passed = new Set<string>();
    const moved = MovedCopies.in(bytes);
    let unread = 0;
    for (let line = lineAt(bytes, 0); line; line = lineAt(bytes, line.end + 1)) {
      const text = decoder.decode(bytes.subarray(line.start, line.end));
      const message = parseMessage(text);
      let id: string | null;
      let countable: boolean;
      if (message !== null && surelyNoRepeatedKey(text, message)) {
        id = deliveryKey(message);
        countable = message.read_flag === false;
      } else {
        const scan = scanLine(bytes, line.start, line.end);
        id = keyText(bytes, scan);
        countable = scan.flag?.read === false && message !== null && Object.keys(message).length === scan.keys;
      }
      if (id === null) continue;
      const superseded = () => moved?.supersede(line.start, JSON.stringify(message!.id), movesOf(message!)) === true;
      if (countable && !passed.has(id) && !superseded()) {
        unread++;
        ids?.push(message!.id);
      }
      passed.add(id);
    }
    return unread;
  } finally {
    closeSync(file.fd);
  }
}

/** Why a mailbox's cursor would not be used, or null when it would (see cursorProblem in cursor.ts). */
export function cursorProblemOf(root: string, agent: string): string | null {
  const path = mailboxPath(root, agent);
  const file = openForRead(path);
  if (!file) return "its mailbox is gone";
  try {
    return cursorProblem(path, file.fd, file.stat.ino, file.stat.size);
  } finally {
    closeSync(file.fd);
  }
}

/**
 * Whether a line of the mailbox has this delivery key (deliveryKey in mail/message.ts), read from the cursor like
 * receive (the lines before it asked of the cursor's id set, whose "maybe" is confirmed against the history), so the
 * check costs little however long the history is. Without a lock: a line being appended is not complete yet and
 * does not count.
 */
export function holdsKey(root: string, agent: string, key: string): boolean {
  const path = mailboxPath(root, agent);
  const file = openForRead(path);
  if (!file) return false;
  try {
    const wanted = new TextEncoder().encode(key);
    const region = unreadRegion(path, file.fd, file.stat.ino, file.stat.size);
    const { bytes } = region;
    for (let line = lineAt(bytes, 0); line; line = lineAt(bytes, line.end + 1)) {
      const found = keyBytes(bytes, scanLine(bytes, line.start, line.end));
      if (found !== null && Buffer.compare(found, wanted) === 0) return true;
    }
    return usedBeforeRegion(path, file.fd, region, wanted);
  } finally {
    closeSync(file.fd);
  }
}
