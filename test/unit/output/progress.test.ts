/**
 * The progress line of the long commands (cleanup, archive, migrate, bridge sync), in process, as the person at the
 * terminal sees it on stderr: the job's name and counts at once, a bar once the number of steps is known, redrawn in
 * place at most every 100 ms with a rate, cleared before the summary; in a pipe, nothing at all. Whether stderr is a
 * terminal is the one thing stood in for (the test's stderr is whatever runs it); the clock is a fake one, so the
 * redraws and rates are exact and nothing waits.
 */
import { afterEach, beforeEach, describe, expect, jest, spyOn, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { megabytes, progressLine, startProgress } from "../../../src/output/progress.ts";
import { setSink } from "../../../src/output/streams.ts";
import * as terminal from "../../../src/output/terminal.ts";
import { runInProcess } from "../../support/in-process.ts";
import { tempRepo } from "../../support/repo.ts";

const CLEAR = "\u001b[K";
const CYAN = "\u001b[36m";

let onTerminal: ReturnType<typeof spyOn<typeof terminal, "stderrIsTerminal">>;
let stderr: string;
let savedNoColor: string | undefined;
let savedColumns: number | undefined;

beforeEach(() => {
  onTerminal = spyOn(terminal, "stderrIsTerminal").mockResolvedValue(true);
  stderr = "";
  savedNoColor = process.env.NO_COLOR;
  delete process.env.NO_COLOR;
  savedColumns = process.stderr.columns;
});
afterEach(() => {
  onTerminal.mockRestore();
  setSink(null);
  jest.useRealTimers();
  if (savedNoColor === undefined) delete process.env.NO_COLOR;
  else process.env.NO_COLOR = savedNoColor;
  process.stderr.columns = savedColumns as number;
});

/** Captures stderr and stops the clock: a job's time passes only through `jest.advanceTimersByTime`. */
function terminalAt(columns: number): void {
  process.stderr.columns = columns;
  setSink({ stdout() {}, stderr: (text) => void (stderr += text) });
  jest.useFakeTimers();
}

/** What the person sees: each `\r…ESC[K` redraw is one state of the line; "" is the line cleared. */
const redraws = (text: string) => {
  expect(text).toStartWith("\r");
  return text
    .slice(1)
    .split("\r")
    .map((draw) => {
      expect(draw).toEndWith(CLEAR);
      return draw.slice(0, -CLEAR.length);
    });
};

describe("a job's progress line on a terminal", () => {
  test("shows the job at once, a bar when the steps are known, new counts at most every 100 ms, and clears at the end", async () => {
    terminalAt(70);
    const progress = await startProgress("migrate", { steps: "mailboxes", items: "messages" });
    expect(redraws(stderr)).toEqual(["migrate 0 mailboxes, 0 messages, 0/s"]);
    jest.advanceTimersByTime(1_000);
    progress.total(4);
    // A redraw in place: the line starts again with a carriage return and is erased to its end.
    expect(redraws(stderr).at(-1)).toBe(`migrate [${CYAN}${"-".repeat(28)}\u001b[39m] 0/4 mailboxes, 0 messages, 0/s`);
    // Within 100 ms of the last redraw: counted, not drawn.
    progress.add(1, 500);
    jest.advanceTimersByTime(50);
    progress.add(0, 250);
    expect(redraws(stderr)).toHaveLength(2);
    jest.advanceTimersByTime(450);
    progress.add(1, 750);
    // 1,500 messages in 1.5 s; half the steps, half the bar.
    expect(redraws(stderr).at(-1)).toBe(
      `migrate [${CYAN}${"#".repeat(10)}${"-".repeat(10)}\u001b[39m] 2/4 mailboxes, 1,500 messages, 1,000/s`,
    );
    progress.end();
    expect(stderr).toEndWith(`\r${CLEAR}`);
    expect(redraws(stderr).at(-1)).toBe("");
  });

  test("the rate counts the steps when the job names no items; more steps than announced fill the bar and no more", async () => {
    terminalAt(50);
    const progress = await startProgress("bridge sync", { steps: "files" }, 2);
    jest.advanceTimersByTime(2_000);
    progress.add(3);
    const line = redraws(stderr).at(-1)!;
    expect(line).toBe(`bridge sync [${CYAN}${"#".repeat(20)}\u001b[39m] 3/2 files, 2/s`);
    expect(line.replaceAll(/\u001b\[\d+m/g, "")).toHaveLength(49);
  });

  test("with NO_COLOR the bar has no colour; a terminal that gives no width is taken as 80 columns", async () => {
    process.env.NO_COLOR = "1";
    terminalAt(0);
    const progress = await startProgress("cleanup", { steps: "mailboxes" }, 10);
    jest.advanceTimersByTime(1_000);
    progress.add(5);
    const line = redraws(stderr).at(-1)!;
    expect(line).not.toContain("\u001b");
    expect(line).toHaveLength(79);
    expect(line).toMatch(/^cleanup \[#{24}-{25}\] 5\/10 mailboxes, 5\/s$/);
  });

  test("a long mailbox read is counted in megabytes", async () => {
    terminalAt(80);
    const progress = megabytes(await startProgress("archive", { steps: "mailboxes", items: "MB read" }, 1));
    jest.advanceTimersByTime(2_000);
    progress.add(0, 3_000_000);
    jest.advanceTimersByTime(1_000);
    progress.add(1, 3_000_000);
    expect(redraws(stderr).at(-1)).toEndWith("] 1/1 mailboxes, 6 MB read, 2/s");
  });

  test("a terminal too narrow for a bar gets the counts alone, cut to fit", () => {
    const look = { label: "cleanup", units: { steps: "mailboxes", items: "MB read" }, items: 12, rate: 3, colour: true };
    expect(progressLine({ ...look, steps: 3, total: 7, width: 48 })).toBe("cleanup 3/7 mailboxes, 12 MB read, 3/s");
    expect(progressLine({ ...look, steps: 3, total: 7, width: 20 })).toBe("cleanup 3/7 mailbox");
    expect(progressLine({ ...look, steps: 3_000, total: null, width: 80 })).toBe("cleanup 3,000 mailboxes, 12 MB read, 3/s");
    expect(progressLine({ ...look, steps: 0, total: 0, width: 1 })).toBe("");
  });
});

describe("agentmail cleanup's progress", () => {
  let repo: ReturnType<typeof tempRepo>;
  beforeEach(() => {
    repo = tempRepo();
    mkdirSync(repo.mailDir, { recursive: true });
    for (const name of ["alice", "bob", "carol"]) {
      const message = { id: `${name.slice(0, 3)}00001`.padEnd(8, "x"), from: "dave", to: name, message: "hi", read_flag: false };
      writeFileSync(join(repo.mailDir, `${name}.jsonl`), `${JSON.stringify({ ...message, created_at: new Date().toISOString() })}\n`);
    }
  });
  afterEach(() => repo.remove());

  test("on a terminal: the line goes through the mailboxes on stderr and is cleared before anything else is said", async () => {
    process.stderr.columns = 70;
    const run = await runInProcess(["cleanup"], { cwd: repo.dir, env: { AGENTMAIL_DIR: repo.mailDir } });
    expect(run.code).toBe(0);
    expect(run.stderr).toStartWith(`\rcleanup 0 mailboxes, 0 MB read, 0/s${CLEAR}`);
    expect(run.stderr).toMatch(/\rcleanup \[\u001b\[36m-+\u001b\[39m\] 0\/3 mailboxes, 0 MB read, [\d,]+\/s\u001b\[K/);
    // Cleared: whatever cleanup says next (a warning here, tmux being out of reach) starts on a clean line.
    const cleared = run.stderr.lastIndexOf(`\r${CLEAR}`);
    expect(cleared).toBeGreaterThan(0);
    expect(run.stderr.slice(cleared + 4)).not.toContain("\r");
    expect(run.stdout).not.toContain("\u001b");
  });

  test("in a pipe (or a log, or an agent's tool call): not a byte of progress", async () => {
    onTerminal.mockResolvedValue(false);
    const run = await runInProcess(["cleanup"], { cwd: repo.dir, env: { AGENTMAIL_DIR: repo.mailDir } });
    expect(run.code).toBe(0);
    expect(run.stderr).not.toContain("\r");
    expect(run.stderr).not.toContain("cleanup ");
    expect(run.stderr).not.toContain("\u001b");
  });
});

describe("the progress line", () => {
  const look = { label: "sync", units: { steps: "files" }, steps: 250, items: 0, rate: 1234.4, colour: false };

  test("a bar over the steps when their number is known, fitted to the width", () => {
    const line = progressLine({ ...look, total: 1_000, width: 60 });
    expect(line).toBe("sync [######---------------------] 250/1,000 files, 1,234/s");
    expect(line.length).toBe(59);
  });

  test("no bar while the total is unknown, or when the width leaves no room", () => {
    expect(progressLine({ ...look, total: null, width: 80 })).toBe("sync 250 files, 1,234/s");
    expect(progressLine({ ...look, total: 1_000, width: 30 })).toBe("sync 250/1,000 files, 1,234/s");
  });
});
