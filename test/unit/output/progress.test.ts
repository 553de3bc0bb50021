/** The progress line the bulk commands draw on a terminal (test/scenarios/progress.test.ts shows it in a pty). */
import { describe, expect, test } from "bun:test";
import { progressLine } from "../../../src/output/progress.ts";

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
