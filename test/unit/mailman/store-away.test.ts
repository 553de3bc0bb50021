/**
 * The mailman when its Redis store goes away and comes back (src/mailman/loop.ts), in process against a private
 * redis-server: it says so once, never exits, tries again with growing pauses, and says when the store answers again.
 * (End to end, with a reminder typed after the restart: test/scenarios/redis-hosts.test.ts.)
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runMailman } from "../../../src/mailman/loop.ts";
import { RedisServer } from "../../support/redis-server.ts";
import { waitFor } from "../../support/workflow.ts";
import { freshNamespace, storeAt } from "../store/redis/helpers.ts";

let server: RedisServer;
let root: string;

beforeAll(async () => {
  server = await RedisServer.start();
  root = mkdtempSync(join(tmpdir(), "agentmail-mailman-away-"));
  // The mailman's own files (its state), as `agentmail mailman` makes them before it runs the loop.
  mkdirSync(join(root, ".mailman"));
});

afterAll(async () => {
  await server?.remove();
  rmSync(root, { recursive: true, force: true });
});

test("a server stopped and started again under the mailman: logged once each way, and the mailman runs on", async () => {
  const store = storeAt(server.url, freshNamespace("mailman-away"), { timeoutMs: 200 });
  const logs: string[] = [];
  const stop = new AbortController();
  let ended = false;
  const running = runMailman({
    store,
    root,
    env: { TMUX: "", PATH: process.env.PATH ?? "" },
    project: null,
    intervalMs: 60_000,
    sweepMs: 50,
    log: (line) => logs.push(line),
    signal: stop.signal,
  }).finally(() => {
    ended = true;
  });
  try {
    await waitFor("the mailman to start watching", () => logs.some((line) => line.startsWith("watching ")));
    await server.stop();
    await waitFor(
      () => `the mailman to say the server is away:\n${logs.join("\n")}`,
      () => logs.some((line) => line.includes("cannot reach")),
    );
    await server.launch();
    await waitFor(
      () => `the mailman to say the store answers again:\n${logs.join("\n")}`,
      () => logs.some((line) => line.includes("answers again")),
      120_000,
    );
    expect(ended).toBe(false);
    expect(logs.filter((line) => line.startsWith("sweep failed: cannot reach the mail server at "))).toHaveLength(1);
    expect(logs).toContain(`the store at ${store.location} answers again; sweeping as before`);
  } finally {
    stop.abort();
    await running;
    store.close();
  }
});
