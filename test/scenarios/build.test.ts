/**
 * build.ts lays out the bytecode the hot commands use first, from a recording of the built binary running them
 * (bench/bytecode-order.ts). A recording that silently broke would only cost start-up time, so it is checked here:
 * every hot command runs to its end in a private tmux server and leaves a profile Bun can read.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { recordHotPath } from "../../bench/bytecode-order.ts";
import { BINARY } from "../support/repo.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "agentmail-order-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("the build's bytecode layout", () => {
  test("the hook, send and receive, named and not, each leave a profile of the functions they ran", () => {
    const files = recordHotPath(BINARY, dir);
    expect(files.map((file) => file.slice(dir.length + 1))).toEqual([
      "hook-named.txt",
      "hook.txt",
      "send-named.txt",
      "send.txt",
      "receive-named.txt",
      "receive.txt",
    ]);
    for (const file of files) {
      const lines = readFileSync(file, "utf8").split("\n");
      expect(lines[0]).toBe("v2");
      // Thousands of functions run in each (Bun's own included); a handful would mean the command stopped early.
      expect(lines.length).toBeGreaterThan(1000);
    }
  });
});
