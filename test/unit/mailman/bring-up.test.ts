/**
 * Bringing up the store's mailman (src/mailman/bring-up.ts), in process: only when none runs and it was not stopped
 * by hand, spawned in the background with the environment less the agent's secrets; and the one tmux look a send
 * makes: does a recipient's window hold an agent CLI with a channel (here: none, only shells).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { mailmanEnvironment, STARTER_VARIABLE } from "../../../src/mailman/daemon.ts";
import { agentCliAmong, bringUpMailman } from "../../../src/mailman/bring-up.ts";
import {
  claimMailman,
  clearStoppedByHand,
  mailmanWanted,
  noteStoppedByHand,
  releaseMailman,
  stoppedByHand,
} from "../../../src/mailman/files.ts";
import { tempRepo } from "../../support/repo.ts";
import { TmuxServer } from "../../support/tmux-server.ts";
import { waitFor } from "../../support/workflow.ts";

let repo: ReturnType<typeof tempRepo>;
let server: TmuxServer;
beforeAll(() => {
  repo = tempRepo();
  server = TmuxServer.start(["alice", "bob"], repo.dir);
});
afterAll(() => {
  server.stop();
  repo.remove();
});

test("wanted when none runs and it was not stopped by hand; spawned in the background, its starter in its environment", async () => {
  const root = repo.mailDir;
  const marker = join(repo.dir, "spawned");
  // A stand-in for agentmail: writes what it was asked and its starter, then ends.
  const self = ["/bin/sh", "-c", `echo "$* $${STARTER_VARIABLE}" > '${marker}'`, "stand-in"];
  const starter = { how: "session-start" as const, agent: "bob", pane: "%1" };
  expect(mailmanWanted(root)).toBe(true);
  expect(bringUpMailman(root, { PATH: process.env.PATH, ANTHROPIC_API_KEY: "secret" }, starter, self)).toBe(true);
  await waitFor("the stand-in run", () => existsSync(marker) && readFileSync(marker, "utf8").includes("mailman"));
  expect(readFileSync(marker, "utf8")).toBe(`mailman --interval 60 --sweep 5 ${JSON.stringify(starter)}\n`);
  await claimMailman(root);
  expect(mailmanWanted(root)).toBe(false);
  expect(bringUpMailman(root, {}, starter, self)).toBe(false);
  releaseMailman(root);
  noteStoppedByHand(root);
  expect(stoppedByHand(root)).toMatch(/^\d{4}-/);
  expect(bringUpMailman(root, {}, starter, self)).toBe(false);
  clearStoppedByHand(root);
  expect(mailmanWanted(root)).toBe(true);
});

test("the environment keeps what agentmail reads and drops the rest", () => {
  const env = mailmanEnvironment(
    {
      PATH: "/bin",
      HOME: "/h",
      TMUX: "/s,1,0",
      TMUX_PANE: "%1",
      AGENTMAIL_URL: "redis://x",
      AGENTMAIL_NAME: "bob",
      OPENAI_API_KEY: "k",
      LC_ALL: "C",
    },
    { how: "send", agent: "alice", pane: "%2" },
  );
  expect(env).toEqual({
    PATH: "/bin",
    HOME: "/h",
    TMUX: "/s,1,0",
    AGENTMAIL_URL: "redis://x",
    LC_ALL: "C",
    [STARTER_VARIABLE]: JSON.stringify({ how: "send", agent: "alice", pane: "%2" }),
  });
});

test("a send's look: a window that runs a shell holds no agent CLI with a channel; a name with no window neither", async () => {
  const env = server.agent("alice").env;
  expect(await agentCliAmong(new Set(["bob"]), env)).toBe(false);
  expect(await agentCliAmong(new Set(["nobody"]), env)).toBe(false);
});
