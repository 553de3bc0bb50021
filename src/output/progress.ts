/**
 * A progress line for long jobs (migrate, bridge sync, cleanup, archive), on stderr and only when a person reads
 * it there (a terminal): a bar over the job's steps when their number is known, what was done and the rate, redrawn
 * in place at most every 100 ms, and cleared when the job ends, so the command's own summary follows on a clean
 * line. Anywhere else (a pipe, a log, an agent's tool call) nothing at all is written. Colour only without NO_COLOR.
 * Labels and units are ours, never hostile text.
 */
import { writeStderr } from "./streams.ts";
import { stderrIsTerminal } from "./terminal.ts";

export interface Progress {
  /** `steps` more steps are done (a mailbox, a file), and `items` more of what the rate counts (messages). */
  add(steps: number, items?: number): void;
  /** The job has this many steps in all, once known. */
  total(steps: number): void;
  /** The job is over: the line is cleared. */
  end(): void;
}

export interface ProgressUnits {
  /** What a step is, plural (`mailboxes`). */
  steps: string;
  /** What the rate counts, plural (`messages`); the steps themselves when not given. */
  items?: string;
}

const QUIET: Progress = { add() {}, total() {}, end() {} };
const REDRAW_MS = 100;

export interface ProgressLook {
  label: string;
  units: ProgressUnits;
  steps: number;
  total: number | null;
  items: number;
  /** Items per second so far. */
  rate: number;
  width: number;
  colour: boolean;
}

const number = (n: number) => Math.round(n).toLocaleString("en");

/** One progress line, at most `width` - 1 columns (without the escapes that colour it). */
export function progressLine({ label, units, steps, total, items, rate, width, colour }: ProgressLook): string {
  const done = total === null ? `${number(steps)} ${units.steps}` : `${number(steps)}/${number(total)} ${units.steps}`;
  const counted = units.items ? `, ${number(items)} ${units.items}` : "";
  const tail = ` ${done}${counted}, ${number(rate)}/s`;
  const head = `${label} `;
  const room = width - 1 - head.length - tail.length - 2;
  if (total === null || room < 10) return `${head}${tail.slice(1)}`.slice(0, Math.max(width - 1, 0));
  const filled = Math.min(room, Math.floor((room * Math.min(steps, total)) / Math.max(total, 1)));
  const bar = "#".repeat(filled) + "-".repeat(room - filled);
  return `${head}[${colour ? `\u001b[36m${bar}\u001b[39m` : bar}]${tail}`;
}

/** The same line, told bytes: it counts megabytes (a long mailbox read through). */
export function megabytes(progress: Progress): Progress {
  return { ...progress, add: (steps, bytes = 0) => progress.add(steps, bytes / 1e6) };
}

/** A progress line for this job when stderr is a terminal; otherwise one that writes nothing. */
export async function startProgress(label: string, units: ProgressUnits, total: number | null = null): Promise<Progress> {
  if (!(await stderrIsTerminal())) return QUIET;
  const started = performance.now();
  let steps = 0;
  let items = 0;
  let size = total;
  let drawn = 0;
  const draw = (force: boolean) => {
    const now = performance.now();
    if (!force && now - drawn < REDRAW_MS) return;
    drawn = now;
    const rate = (units.items ? items : steps) / Math.max((now - started) / 1000, 0.001);
    // A pty without a size (script, some CI) says 0 columns.
    const width = process.stderr.columns || 80;
    const look = { label, units, steps, total: size, items, rate, width, colour: !process.env.NO_COLOR };
    writeStderr(`\r${progressLine(look)}\u001b[K`);
  };
  draw(true);
  return {
    add(moreSteps, moreItems = 0) {
      steps += moreSteps;
      items += moreItems;
      draw(false);
    },
    total(all) {
      size = all;
      draw(true);
    },
    end() {
      writeStderr("\r\u001b[K");
    },
  };
}
