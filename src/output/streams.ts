import { fstatSync, statSync, writeSync } from "node:fs";
import { AgentmailError } from "../mail/errors.ts";
import { jsonForTerminal } from "../mail/terminal-text.ts";

export interface Sink {
  stdout(text: string): void;
  stderr(text: string): void;
}

const encoder = new TextEncoder();

/** Made on the first EAGAIN only: a SharedArrayBuffer costs start-up time that a plain write never needs. */
let pause: Int32Array | null = null;

/** Text longer than this is encoded a piece at a time into one buffer kept for it, not into a new one each time. */
const PIECE = 64 * 1024;
let pieces: Uint8Array | null = null;

/**
 * Writes every byte before returning. A pipe's fd can be non-blocking (EAGAIN), and a caller that exits right
 * after an async write loses what the pipe had not taken yet, so output is written synchronously here. A long
 * listing (`sent` of a million lines) is written through one buffer: a new array of bytes for each batch's text was
 * a tenth of its time, in encoding and in the collector.
 */
export function writeAll(fd: number, text: string): void {
  if (text.length <= PIECE) {
    writeBytes(fd, encoder.encode(text));
    return;
  }
  // Three bytes at most for each UTF-16 unit, so a piece always fits.
  pieces ??= new Uint8Array(PIECE * 3);
  for (let read = 0; read < text.length; ) {
    // Not inside a surrogate pair: encodeInto would write a replacement character for each half.
    let to = Math.min(text.length, read + PIECE);
    if (to < text.length && (text.charCodeAt(to - 1) & 0xfc00) === 0xd800) to--;
    const { written } = encoder.encodeInto(text.slice(read, to), pieces);
    writeBytes(fd, pieces.subarray(0, written));
    read = to;
  }
}

function writeBytes(fd: number, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += writeSync(fd, bytes, offset, bytes.length - offset);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EAGAIN") {
        Atomics.wait((pause ??= new Int32Array(new SharedArrayBuffer(4))), 0, 0, 1);
        continue;
      }
      throw error;
    }
  }
}

/** A sink on two file descriptors: data that cannot be written is an error; diagnostics are best effort. */
export function fdSink(out: number, err: number): Sink {
  return {
    stdout(text) {
      try {
        writeAll(out, text);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? "error";
        throw new AgentmailError("io", `could not write to stdout (${code}); keep stdout open until agentmail exits`);
      }
    },
    stderr(text) {
      try {
        writeAll(err, text);
      } catch {
        // A closed stderr must not turn success into failure.
      }
    },
  };
}

const processSink: Sink = fdSink(1, 2);

let sink: Sink = processSink;

/** Tests capture output in process by swapping the sink; everything else writes to the real fds. */
export function setSink(replacement: Sink | null): void {
  sink = replacement ?? processSink;
}

/** Writes data to stdout; throws an AgentmailError when stdout cannot take it. */
export function writeStdout(text: string): void {
  sink.stdout(text);
}

export function writeStderr(text: string): void {
  sink.stderr(text);
}

/** Writes data that goes to stderr (a hook's mail): unlike a diagnostic, it throws when stderr cannot take it. */
export function writeStderrData(text: string): void {
  if (sink !== processSink) {
    sink.stderr(text);
    return;
  }
  try {
    writeAll(2, text);
  } catch (error) {
    throw new AgentmailError("io", `could not write to stderr (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
}

/** One JSON document on stdout; the exact values, written so that no terminal acts on them (see jsonForTerminal). */
export function printJson(value: unknown): void {
  writeStdout(jsonForTerminal(value) + "\n");
}

/**
 * One JSON array on stdout, written a batch at a time as the batches come: the same bytes printJson writes for the
 * whole array. Nothing is written before the first batch, so a failure to start makes no torn document.
 */
export async function printJsonArray(batches: AsyncIterable<readonly unknown[]>): Promise<void> {
  let opened = false;
  for await (const batch of batches) {
    if (batch.length === 0) continue;
    // One stringify per batch (an array's text is its items' joined by commas): a third of the time of one per item.
    const items = jsonForTerminal(batch);
    writeStdout((opened ? "," : "[") + items.slice(1, -1));
    opened = true;
  }
  writeStdout(opened ? "]\n" : "[]\n");
}

/**
 * Whether text written to `fd` would be thrown away: Bun reopens a closed stdout or stderr on /dev/null, so a
 * closed stream looks like /dev/null. A receive checks this before it marks a message read.
 */
export function discards(fd: number): boolean {
  try {
    const stream = fstatSync(fd);
    return stream.isCharacterDevice() && stream.rdev === statSync("/dev/null").rdev;
  } catch {
    return true;
  }
}
