/**
 * Dead letters, in process: the sweep returns expired mail and mail of a recipient gone longer than the limit to its
 * sender, in its own store when it wrote from another project (on this tmux server's repositories, or on Redis its
 * namespace); the foreground mailman does it on every sweep and logs each bounce.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bouncingShow, goneLimitMs, sweepDeadLetters, DEFAULT_GONE_MS, type Presence } from "../../../src/delivery/dead-letters.ts";
import { returnAddressOf } from "../../../src/delivery/return-path.ts";
import { runningMailman } from "../../../src/mailman/files.ts";
import { MAILMAN_DIR, MAILMAN_FILES } from "../../../src/store/layout.ts";
import { createMessage, type Message } from "../../../src/mail/message.ts";
import { openStore } from "../../../src/store/open.ts";
import type { Store } from "../../../src/store/store.ts";
import { runInProcess } from "../../support/in-process.ts";
import { RedisServer } from "../../support/redis-server.ts";
import { TmuxServer } from "../../support/tmux-server.ts";
import { waitFor } from "../../support/wait.ts";
import { repository as newRepository } from "../../support/projects.ts";

const SHELL = "bash --norc --noprofile -i";
const HOUR = 3_600_000;

let root: string;
let app: string;
let lib: string;
let server: TmuxServer;
let store: Store;
let libStore: Store;

/** A new repository under the scratch root. */
const repository = (name: string): string => newRepository(root, name);

/** A message as a send stores it, `hoursAgo` old, expiring `expiresIn` ms from now when given. */
function letter(from: string, to: string, body: string, hoursAgo = 0, expiresIn?: number): Message {
  const message = createMessage(from, to, body, new Date(Date.now() - hoursAgo * HOUR));
  if (expiresIn !== undefined) message.expires_at = new Date(Date.now() + expiresIn).toISOString();
  return message;
}

const presence = (windows: string[]): Presence => ({ windows: new Set(windows), panes: new Set(), host: "this-host" });
const bodies = async (where: Store, mailbox: string) => (await where.unread(mailbox)).map((message) => message.message);

/** Runs `work` with these variables in process.env (the return path reads the caller's environment), then restores it. */
async function withEnv<T>(env: Record<string, string>, work: () => Promise<T>): Promise<T> {
  const saved: Record<string, string | undefined> = {};
  for (const key of Object.keys(env)) saved[key] = process.env[key];
  Object.assign(process.env, env);
  try {
    return await work();
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-dead-letters-")));
  app = repository("app");
  lib = repository("lib");
  server = TmuxServer.start(["claude"], app);
  server.run(["new-session", "-d", "-s", "lib", "-n", "reviewer", "-c", lib, SHELL]);
  store = await openStore({ cwd: app, env: {} });
  libStore = await openStore({ cwd: lib, env: {} });
});

afterAll(() => {
  server?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe("the gone limit", () => {
  test("AGENTMAIL_GONE_AFTER: a duration, off, or the default of a day; anything else is refused", () => {
    expect(goneLimitMs({})).toBe(DEFAULT_GONE_MS);
    expect(goneLimitMs({ AGENTMAIL_GONE_AFTER: "off" })).toBe(0);
    expect(goneLimitMs({ AGENTMAIL_GONE_AFTER: " 2h " })).toBe(2 * HOUR);
    expect(() => goneLimitMs({ AGENTMAIL_GONE_AFTER: "soon" })).toThrow("AGENTMAIL_GONE_AFTER");
  });
});

describe("the sweep", () => {
  test("expired mail and mail of an agent gone too long go back to their senders; the rest stays", async () => {
    const expired = letter("claude", "codex", "stale", 0, -1000);
    const fresh = letter("claude", "codex", "fresh", 0, HOUR);
    const toGhost = letter("claude", "ghost", "are you there?", 3);
    const recent = letter("claude", "ghost2", "just sent", 0);
    for (const message of [expired, fresh, toGhost, recent]) await store.append(message);
    const options = { presence: presence(["claude", "codex"]), goneMs: 2 * HOUR };

    const dry = await sweepDeadLetters(store, { ...options, dryRun: true });
    expect(dry.bounced.map((each) => each.id).sort()).toEqual([expired.id, toGhost.id].sort());
    expect(await bodies(store, "codex")).toEqual(["stale", "fresh"]);

    const swept = await sweepDeadLetters(store, options);
    expect(swept.failed).toEqual([]);
    const byId = new Map(swept.bounced.map((each) => [each.id, each]));
    expect(byId.get(expired.id)).toMatchObject({
      mailbox: "codex",
      to: "claude",
      reason: expect.stringContaining("its time to live ran out"),
    });
    expect(byId.get(toGhost.id)).toMatchObject({
      mailbox: "ghost",
      to: "claude",
      reason: expect.stringContaining("ghost has been gone since"),
    });
    expect(swept.bounced).toHaveLength(2);
    expect(await bodies(store, "codex")).toEqual(["fresh"]);
    expect(await bodies(store, "ghost")).toEqual([]);
    expect(await bodies(store, "ghost2")).toEqual(["just sent"]);
    const bounces = (await store.unread("claude")).map((message) => message.message);
    expect(bounces.some((body) => body.includes(`Your message ${expired.id} to codex was not delivered`))).toBe(true);
    expect(bounces.some((body) => body.includes(`Your message ${toGhost.id} to ghost was not delivered`))).toBe(true);
    expect((await store.deliveries("ghost", new Set([toGhost.id]))).get(toGhost.id)?.map((event) => event.event)).toContain("bounced");

    // A bounce is never bounced back: with its recipient gone too, it just goes, and nothing new is stored.
    const before = await store.mailboxes();
    const again = await sweepDeadLetters(store, { presence: presence(["codex", "ghost2"]), goneMs: 1 });
    expect(again.bounced.map((each) => [each.mailbox, each.to])).toEqual([
      ["claude", ""],
      ["claude", ""],
    ]);
    expect(await bodies(store, "claude")).toEqual([]);
    expect((await store.mailboxes()).filter((mailbox) => !before.includes(mailbox))).toEqual([]);
    while (await store.take("claude", () => {}));
    while (await store.take("codex", () => {}));
    while (await store.take("ghost2", () => {}));
  });

  test("without tmux to ask, or with the limit off, nobody counts as gone", async () => {
    const old = letter("claude", "ghost3", "old", 100);
    await store.append(old);
    expect((await sweepDeadLetters(store, { presence: { windows: null, panes: null, host: "h" }, goneMs: 1 })).bounced).toEqual([]);
    expect((await sweepDeadLetters(store, { presence: presence([]), goneMs: 0 })).bounced).toEqual([]);
    expect(await bodies(store, "ghost3")).toEqual(["old"]);
    while (await store.take("ghost3", () => {}));
  });

  test("a take that shows: what the judge passes is shown; one no longer condemned when shown stays unread", async () => {
    await store.append(letter("claude", "codex", "keep me"));
    const showing = bouncingShow(store, "codex", () => null, null);
    await expect(store.take("codex", showing.show)).rejects.toThrow("is no longer to be returned; it stays in the mailbox");
    expect(await bodies(store, "codex")).toEqual(["keep me"]);
    const shown: string[] = [];
    const reading = bouncingShow(
      store,
      "codex",
      () => null,
      (message) => void shown.push(message.message),
    );
    expect(await store.take("codex", reading.show)).not.toBeNull();
    expect(await reading.settle()).toBeNull();
    expect(shown).toEqual(["keep me"]);
  });
});

describe("the return path", () => {
  test("mail from another project's agent bounces into that project's store, found through a pane working there", async () => {
    const stale = letter("reviewer@lib", "codex", "from lib", 0, -1000);
    await store.append(stale);
    const swept = await withEnv({ TMUX: server.agent("claude").env.TMUX! }, () =>
      sweepDeadLetters(store, { presence: presence(["claude", "codex"]), goneMs: 0 }),
    );
    expect(swept.bounced).toEqual([expect.objectContaining({ id: stale.id, to: "reviewer@lib" })]);
    const bounces = await bodies(libStore, "reviewer");
    expect(bounces).toHaveLength(1);
    expect(bounces[0]).toContain(`Your message ${stale.id} to codex was not delivered`);
    expect(await bodies(store, "reviewer@lib")).toEqual([]);
    while (await libStore.take("reviewer", () => {}));
  });

  test("a project no pane works in keeps the bounce here, under the sender's address", async () => {
    const message = letter("someone@elsewhere", "codex", "x");
    const back = await returnAddressOf(store, message, { TMUX: server.agent("claude").env.TMUX });
    expect(back).toMatchObject({ store, mailbox: "someone@elsewhere", shown: "someone@elsewhere" });
    // Without tmux at all: the same.
    expect(await returnAddressOf(store, message, {})).toMatchObject({ store, mailbox: "someone@elsewhere" });
    // A local sender: its mailbox here.
    expect(await returnAddressOf(store, letter("claude", "codex", "y"), {})).toMatchObject({ store, mailbox: "claude" });
  });

  test("on Redis, mail from name@project bounces into that project's namespace", async () => {
    const redis = await RedisServer.start();
    try {
      const env = { AGENTMAIL_URL: redis.url };
      const here = await openStore({ cwd: app, env: { ...env, AGENTMAIL_NAMESPACE: "app" } });
      const there = await openStore({ cwd: app, env: { ...env, AGENTMAIL_NAMESPACE: "lib" } });
      const stale = letter("claude@lib", "codex", "over redis", 0, -1000);
      await here.append(stale);
      const swept = await withEnv(env, () => sweepDeadLetters(here, { presence: presence(["codex"]), goneMs: 0 }));
      expect(swept.bounced).toEqual([expect.objectContaining({ id: stale.id, mailbox: "codex", to: "claude@lib" })]);
      const bounces = await bodies(there, "claude");
      expect(bounces).toHaveLength(1);
      expect(bounces[0]).toContain(`Your message ${stale.id} to codex was not delivered`);
      expect(await bodies(here, "codex")).toEqual([]);
    } finally {
      await redis.remove();
    }
  });
});

describe("the mailman", () => {
  const mailRoot = () => join(app, ".git", "mail");
  const env = () => ({ TMUX: server.agent("claude").env.TMUX, TMUX_PANE: server.agent("claude").env.TMUX_PANE });

  /** Runs the foreground mailman until it has finished `sweeps` whole sweeps (each writes its state file, deleted before). */
  async function mailmanFor(sweeps: number, extraEnv: Record<string, string> = {}) {
    const state = join(mailRoot(), MAILMAN_DIR, MAILMAN_FILES.state);
    const running = runInProcess(["mailman", "--sweep", "0.05", "--interval", "60"], { env: { ...env(), ...extraEnv }, cwd: app });
    await waitFor("the mailman to record its pid", () => runningMailman(mailRoot())?.pid === process.pid);
    for (let sweep = 0; sweep < sweeps; sweep++) {
      rmSync(state, { force: true });
      await waitFor(`the mailman to finish sweep ${sweep + 1}`, () => existsSync(state), 60_000, 20);
    }
    process.kill(process.pid, "SIGTERM");
    return running;
  }

  test("every sweep returns dead letters and logs each; a mailbox that is no file is left to the reminder loop", async () => {
    const stale = letter("claude", "codex", "mailman's", 0, -1000);
    await store.append(stale);
    // A directory where a mailbox file would be: that mailbox cannot be swept, the others still are.
    mkdirSync(join(mailRoot(), "broken.jsonl"));
    const result = await mailmanFor(2);
    rmSync(join(mailRoot(), "broken.jsonl"), { recursive: true });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`returned ${stale.id} of "codex" to "claude": its time to live ran out`);
    expect(result.stderr).not.toContain("could not return dead letters");
    expect(await bodies(store, "codex")).toEqual([]);
    expect((await store.unread("claude")).some((message) => message.message.includes(`Your message ${stale.id}`))).toBe(true);
    while (await store.take("claude", () => {}));
  });

  test("a sweep that fails says why, once until it changes, and the mailman keeps running", async () => {
    const result = await mailmanFor(3, { AGENTMAIL_GONE_AFTER: "soon" });
    expect(result.code).toBe(0);
    const failures = result.stderr.split("\n").filter((line) => line.includes("could not return dead letters"));
    expect(failures).toHaveLength(1);
    expect(failures[0]).toContain("AGENTMAIL_GONE_AFTER");
  });
});
