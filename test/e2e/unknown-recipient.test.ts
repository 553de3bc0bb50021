/**
 * An unknown recipient fails loudly with a "did you mean" that is worth following: never the caller itself, never a
 * window with an empty name, and the way to list the real recipients.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test, setDefaultTimeout } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { am, expectError } from "../support/e2e.ts";
import { tempRepo } from "../support/repo.ts";
import { TmuxServer } from "../support/tmux-server.ts";

setDefaultTimeout(30_000);

let server: TmuxServer;
let scratch: string;
let repo: ReturnType<typeof tempRepo>;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "agentmail-unknown-"));
  server = TmuxServer.start(["alice", "bob"], scratch);
  server.run(["new-window", "-d", "-t", `${server.session}:`, "-n", "", "-c", scratch, "bash --norc --noprofile -i"]);
});
afterAll(() => {
  server?.stop();
  rmSync(scratch, { recursive: true, force: true });
});
beforeEach(() => {
  repo = tempRepo();
});
afterEach(() => repo.remove());

const send = (to: string) => am(["send", to, "hi"], { env: server.agent("alice").env, cwd: repo.dir });

describe("did you mean", () => {
  test("suggests the close name", async () => {
    const expected = `error: no window named "bobb" in this tmux session; did you mean "bob"? run 'agentmail recipients' to list them\n`;
    expect(expectError(await send("bobb"), 1)).toBe(expected);
  });

  test("never suggests the caller itself", async () => {
    const error = expectError(await send("alicee"), 1);
    expect(error).not.toContain('"alice"');
    expect(error).toContain("run 'agentmail recipients' to list them");
  });

  test("never suggests a window with an empty name", async () => {
    const error = expectError(await send("x"), 1);
    expect(error).not.toContain('""');
    expect(error).toBe(`error: no window named "x" in this tmux session; run 'agentmail recipients' to list them\n`);
  });
});
