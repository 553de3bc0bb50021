/**
 * What delivery reads of an agent CLI's process in /proc: its environment and working directory, and nothing (no
 * variables, no directory) for a process that cannot be read, so the adapters say they found no channel.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cwdOf, environOf } from "../../../src/mailman/proc.ts";
import { waitFor } from "../../support/wait.ts";

test("a process's own environment (as it was started, values with '=' kept whole) and its working directory", async () => {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-proc-")));
  const child = Bun.spawn(["sleep", "300"], { cwd, env: { CODEX_HOME: "/x/codex", ODD: "a=b=c", PATH: process.env.PATH! } });
  try {
    // Until it runs sleep, /proc shows the environment of the process it was forked from.
    await waitFor("the child's environment in /proc", () => environOf(child.pid).ODD !== undefined, 60_000, 10);
    expect(environOf(child.pid)).toEqual({ CODEX_HOME: "/x/codex", ODD: "a=b=c", PATH: process.env.PATH! });
    expect(cwdOf(child.pid)).toBe(cwd);
  } finally {
    child.kill(9);
    await child.exited;
    rmSync(cwd, { recursive: true, force: true });
  }
});

test("a process that does not exist (or is not ours to read) has no environment and no working directory", () => {
  const gone = 2 ** 22 + 1; // above the kernel's largest pid (pid_max is at most 2^22)
  expect(environOf(gone)).toEqual({});
  expect(cwdOf(gone)).toBeNull();
});
