/**
 * The start-up budget of the commands agents run on every turn (docs/performance.md): `send`, `receive` and
 * `receive --hook`, plain and with AGENTMAIL_NAME, call none of the built-ins whose first call costs a compiled
 * binary measurable start-up time (bench/builtins.ts): Array#map and #flatMap, Array.from, Buffer.from, and any
 * regular expression. The commands run in process, in a private tmux server, while those built-ins record every
 * call made directly from agentmail's code; a call from a library, or on an error path, is not the budget's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runInProcess } from "../support/in-process.ts";
import { tempRepo } from "../support/repo.ts";
import { outsideTmuxEnv, TmuxServer } from "../support/tmux-server.ts";

/** Where agentmail's own code is: a call whose caller's frame is here counts. */
const OWN_CODE = `${import.meta.dir.replace(/test\/startup$/, "")}src/`;

const calls: string[] = [];
let recording = false;

/** The caller of the patched built-in: the third line of the stack (after the Error and the wrapper). */
function caller(): string {
  const frames = (new Error().stack ?? "").split("\n");
  return frames[3]?.trim() ?? "";
}

function record<T extends object>(owner: T, key: keyof T | symbol, label: string): () => void {
  const original = (owner as Record<PropertyKey, unknown>)[key as PropertyKey] as (...args: unknown[]) => unknown;
  const wrapped = function (this: unknown, ...args: unknown[]) {
    if (recording) {
      const frame = caller();
      if (frame.includes(OWN_CODE)) calls.push(`${label} at ${frame.slice(frame.indexOf(OWN_CODE) + OWN_CODE.length - 4)}`);
    }
    return original.apply(this, args);
  };
  (owner as Record<PropertyKey, unknown>)[key as PropertyKey] = wrapped;
  return () => {
    (owner as Record<PropertyKey, unknown>)[key as PropertyKey] = original;
  };
}

let repo: ReturnType<typeof tempRepo>;
let server: TmuxServer;
const restore: (() => void)[] = [];

beforeAll(async () => {
  repo = tempRepo();
  server = TmuxServer.start(["alice", "bob"], repo.dir);
  // A store in use: the first send of a repository creates it, once.
  for (const name of ["alice", "bob"]) {
    expect((await runInProcess(["status", "ready"], { env: server.named(name), cwd: repo.dir })).code).toBe(0);
  }
  restore.push(
    record(Array.prototype, "map", "Array#map"),
    record(Array.prototype, "flatMap", "Array#flatMap"),
    record(Array, "from", "Array.from"),
    record(Buffer, "from", "Buffer.from"),
    record(RegExp.prototype, "exec", "a regular expression"),
    record(RegExp.prototype, "test", "a regular expression"),
    record(RegExp.prototype, Symbol.replace, "a regular expression"),
    record(RegExp.prototype, Symbol.split, "a regular expression"),
    record(RegExp.prototype, Symbol.match, "a regular expression"),
    record(RegExp.prototype, Symbol.matchAll, "a regular expression"),
    record(RegExp.prototype, Symbol.search, "a regular expression"),
  );
});

afterAll(() => {
  for (const undo of restore) undo();
  server.stop();
  repo.remove();
});

/** Runs a command line as `name` (by window, by AGENTMAIL_NAME, or outside tmux) and returns the costly calls it made. */
async function costlyCalls(argv: string[], name: string, named: boolean | "outside tmux"): Promise<{ code: number; calls: string[] }> {
  const env = named === "outside tmux" ? outsideTmuxEnv() : named ? server.named(name) : server.agent(name).env;
  calls.length = 0;
  recording = true;
  try {
    const { code } = await runInProcess(argv, { env, cwd: repo.dir });
    return { code, calls: [...calls] };
  } finally {
    recording = false;
  }
}

for (const named of [false, true]) {
  describe(named ? "with AGENTMAIL_NAME" : "asking tmux", () => {
    test("send to one agent", async () => {
      expect(await costlyCalls(["send", "bob", "PR #12 is ready"], "alice", named)).toEqual({ code: 0, calls: [] });
    });

    test("receive of one message, and of none", async () => {
      expect(await costlyCalls(["receive"], "bob", named)).toEqual({ code: 0, calls: [] });
      expect(await costlyCalls(["receive"], "bob", named)).toEqual({ code: 0, calls: [] });
    });

    test("receive --hook with mail waiting, and without", async () => {
      // Both in one hook: it shows up to five (the token budget, docs/delivery.md).
      await runInProcess(["send", "bob", "one"], { env: server.agent("alice").env, cwd: repo.dir });
      await runInProcess(["send", "bob", "two"], { env: server.agent("alice").env, cwd: repo.dir });
      expect(await costlyCalls(["receive", "--hook"], "bob", named)).toEqual({ code: 2, calls: [] });
      expect(await costlyCalls(["receive", "--hook"], "bob", named)).toEqual({ code: 0, calls: [] });
    });

    test("receive --after-tool (after every tool call) without mail", async () => {
      expect(await costlyCalls(["receive", "--after-tool", "claude"], "bob", named)).toEqual({ code: 0, calls: [] });
    });
  });
}

test("receive --hook outside tmux (a hook in a plain terminal) is silent at the same cost", async () => {
  expect(await costlyCalls(["receive", "--hook"], "bob", "outside tmux")).toEqual({ code: 0, calls: [] });
});
