/**
 * An unknown recipient fails loudly with a "did you mean" that is worth following: never the caller itself, never a
 * window with an empty name, and the way to list the real recipients.
 */
import { describe, expect, test } from "bun:test";
import { am, expectError } from "../support/e2e.ts";
import { serverWithFreshRepos } from "../support/fresh-repos.ts";

// A third window with an empty name.
const world = serverWithFreshRepos("agentmail-unknown-", ["alice", "bob"], (server, scratch) => {
  server.run(["new-window", "-d", "-t", `${server.session}:`, "-n", "", "-c", scratch, "bash --norc --noprofile -i"]);
});

const send = (to: string) => am(["send", to, "hi"], { env: world.server.agent("alice").env, cwd: world.repo.dir });

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
