/**
 * Dead letters, in process: the sweep returns expired mail and mail of a recipient gone longer than the limit to its
 * sender, in its own store when it wrote from another project (on this tmux server's repositories, or on Redis its
 * namespace); the foreground mailman does it on every sweep and logs each bounce.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bouncingShow, goneLimitMs, sweepDeadLetters, DEFAULT_GONE_MS, type Presence } from "../../../src/dead-letters/dead-letters.ts";
import { returnBounce } from "../../../src/dead-letters/return-path.ts";
import { bounceOf } from "../../../src/mail/bounce.ts";
import { runningMailman } from "../../../src/mailman/files.ts";
import { MAILMAN_DIR, MAILMAN_FILES } from "../../../src/store/local/layout.ts";
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

  test("a project no pane works in keeps the bounce here, under the sender's address, with why; a local sender's goes here", async () => {
    const message = letter("someone@elsewhere", "codex", "x");
    const bounce = (mailbox: string) => bounceOf(message, mailbox, "test", new Date());
    const tmux = { TMUX: server.agent("claude").env.TMUX! };
    expect(await returnBounce(store, message, bounce, tmux)).toEqual({
      to: "someone@elsewhere",
      kept: 'no repository of a project named "elsewhere" works on this tmux server now',
    });
    const [kept] = await store.unread("someone@elsewhere");
    expect(kept).toMatchObject({ from: "agentmail", to: "someone@elsewhere", kept_because: expect.stringContaining("elsewhere") });
    // Without tmux at all: the same; stored once (a bounce's id is the original's, the same every time).
    expect((await returnBounce(store, message, bounce, {})).kept).toContain("no repository");
    expect(await store.countUnread("someone@elsewhere")).toBe(1);
    // A local sender: its mailbox here.
    const local = letter("claude", "codex", "y");
    expect(await returnBounce(store, local, (mailbox) => bounceOf(local, mailbox, "test", new Date()), {})).toEqual({
      to: "claude",
      kept: null,
    });
    while (await store.take("claude", () => {}));
    while (await store.take("someone@elsewhere", () => {}));
  });

  test("a copy that records its sender's store bounces exactly there, though another clone has the project's name", async () => {
    const clone = join(root, "clone");
    mkdirSync(clone);
    const twin = newRepository(clone, "lib");
    server.run(["new-session", "-d", "-s", "a-twin", "-n", "reviewer", "-c", twin, SHELL]);
    const twinStore = await openStore({ cwd: twin, env: {} });
    try {
      // Recorded: the second clone's store, whichever pane tmux lists first.
      const recorded = { ...letter("reviewer@lib", "codex", "from the twin", 0, -1000), sender_store: join(twin, ".git") };
      // Not recorded (an older agentmail's copy): two projects named lib, so none is guessed; it waits here.
      const unrecorded = letter("reviewer@lib", "codex", "from which lib?", 0, -1000);
      for (const message of [recorded, unrecorded]) await store.append(message);
      const swept = await withEnv({ TMUX: server.agent("claude").env.TMUX! }, () =>
        sweepDeadLetters(store, { presence: presence(["claude", "codex"]), goneMs: 0 }),
      );
      const byId = new Map(swept.bounced.map((each) => [each.id, each]));
      expect(byId.get(recorded.id)).toMatchObject({ to: "reviewer@lib", kept: null });
      expect(byId.get(unrecorded.id)!.kept).toContain('2 repositories are named "lib"');
      expect(byId.get(unrecorded.id)!.reason).toContain(`its bounce waits in ${store.location} until the store it was sent from takes it`);
      expect(await bodies(twinStore, "reviewer")).toEqual([expect.stringContaining(`Your message ${recorded.id} to codex`)]);
      expect(await bodies(libStore, "reviewer")).toEqual([]);
      expect((await store.unread("reviewer@lib")).map((message) => message.bounce_of)).toEqual([unrecorded.id]);
      // The copy's record says so: its sender's `sent` reads it there.
      const events = (await store.deliveries("codex", new Set([unrecorded.id]))).get(unrecorded.id)!;
      expect(events.at(-1)).toMatchObject({ event: "bounced", reason: expect.stringContaining("2 repositories are named") });
      // The twin gone from tmux: one lib left, and the kept bounce goes on to it at the next sweep.
      server.run(["kill-session", "-t", "a-twin"]);
      const next = await withEnv({ TMUX: server.agent("claude").env.TMUX! }, () =>
        sweepDeadLetters(store, { presence: presence(["claude", "codex"]), goneMs: 0 }),
      );
      expect(next.forwarded).toEqual([{ id: expect.any(String), mailbox: "reviewer@lib", why: null }]);
      expect(await bodies(libStore, "reviewer")).toEqual([expect.stringContaining(`Your message ${unrecorded.id} to codex`)]);
      const arrived = (await libStore.unread("reviewer"))[0]!;
      expect(arrived).toMatchObject({ to: "reviewer", from: "agentmail", type: "bounce" });
      expect(arrived.kept_because).toBeUndefined();
      expect(await store.countUnread("reviewer@lib")).toBe(0);
    } finally {
      while (await libStore.take("reviewer", () => {}));
      rmSync(clone, { recursive: true, force: true });
    }
  });

  test("a store that is gone, or a mailbox there that cannot be written, keeps the bounce here until it takes it", async () => {
    const gone = join(root, "gone");
    const away = join(root, "gone-away");
    const dir = newRepository(root, "gone");
    const goneStore = await openStore({ cwd: dir, env: {} });
    const stale = { ...letter("dev@gone", "codex", "to a store that goes", 0, -1000), sender_store: join(dir, ".git") };
    await store.append(stale);
    renameSync(gone, away);
    try {
      const swept = await sweepDeadLetters(store, { presence: presence(["claude", "codex"]), goneMs: 0 });
      expect(swept.bounced).toEqual([
        expect.objectContaining({ id: stale.id, kept: expect.stringContaining("is gone (no git directory there now)") }),
      ]);
      expect(existsSync(gone)).toBe(false);
      // Never bounced by the gone rule, however long nobody is there: it waits.
      const waiting = await sweepDeadLetters(store, { presence: presence([]), goneMs: 1, now: Date.now() + 1000 * HOUR });
      expect(waiting.bounced).toEqual([]);
      expect(waiting.waiting).toEqual([expect.objectContaining({ mailbox: "dev@gone", why: expect.stringContaining("is gone") })]);
      expect((await store.unread("dev@gone"))[0]).toMatchObject({ return_store: join(dir, ".git"), bounce_of: stale.id });
      // Back, but its mailbox is a FIFO: still kept (no hang, no failure).
      renameSync(away, gone);
      mkdirSync(join(dir, ".git", "mail"), { recursive: true });
      Bun.spawnSync(["mkfifo", join(dir, ".git", "mail", "dev.jsonl")]);
      const fifo = await sweepDeadLetters(store, { presence: presence(["claude", "codex"]), goneMs: 0 });
      expect(fifo.forwarded).toEqual([]);
      expect(fifo.waiting[0]!.why).toMatch(/dev\.jsonl|not a regular file|FIFO/i);
      rmSync(join(dir, ".git", "mail", "dev.jsonl"));
      const back = await sweepDeadLetters(store, { presence: presence(["claude", "codex"]), goneMs: 0 });
      expect(back.forwarded).toEqual([expect.objectContaining({ mailbox: "dev@gone" })]);
      expect(await bodies(goneStore, "dev")).toEqual([expect.stringContaining(`Your message ${stale.id} to codex`)]);
      expect(await store.countUnread("dev@gone")).toBe(0);
    } finally {
      if (existsSync(away)) renameSync(away, gone);
    }
  });

  test("a receive whose expired message's bounce cannot be written there takes the next message; the bounce waits here", async () => {
    const dir = newRepository(root, "fifo");
    mkdirSync(join(dir, ".git", "mail"), { recursive: true });
    Bun.spawnSync(["mkfifo", join(dir, ".git", "mail", "dev.jsonl")]);
    const stale = { ...letter("dev@fifo", "codex", "expired", 0, -1000), sender_store: join(dir, ".git") };
    const next = letter("claude", "codex", "still flows");
    for (const message of [stale, next]) await store.append(message);
    const bouncing = bouncingShow(store, "codex", (message) => (message.id === stale.id ? "expired" : null), null);
    expect(await store.take("codex", bouncing.show, { prefer: (message) => message.id === stale.id, only: true })).not.toBeNull();
    expect(await bouncing.settle()).toMatchObject({ id: stale.id, to: "dev@fifo", kept: expect.any(String) });
    expect(await bodies(store, "codex")).toEqual(["still flows"]);
    expect(await store.countUnread("dev@fifo")).toBe(1);
    while (await store.take("codex", () => {}));
    while (await store.take("dev@fifo", () => {}));
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
