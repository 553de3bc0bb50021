/**
 * A sender follows its mail to the end, on both stores, against the compiled binary in a private tmux server: each
 * copy's state in `sent` (stored, notified, read, acknowledged, bounced), `ack` and a reply acknowledging,
 * `send --wait-for read|reply|ack` (exit 3 when not reached), `--ttl` and the gone-recipient rule returning mail as
 * a bounce, and exactly once under storms with kills: a killed `--wait-for` leaves every reply to a later receive,
 * and of racing, killed takers each expired message bounces once. Waits are on conditions, never on time.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { am, expectError, expectSent, oneJson, start, type Running } from "../support/e2e.ts";
import { RedisServer } from "../support/redis-server.ts";
import { tempRepo } from "../support/repo.ts";
import { TmuxServer } from "../support/tmux-server.ts";
import { waitFor } from "../support/wait.ts";

setDefaultTimeout(120_000);

let scratch: string;
let server: TmuxServer;
let redis: RedisServer;
let repo: ReturnType<typeof tempRepo>;
let namespaces = 0;

beforeAll(async () => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-states-")));
  server = TmuxServer.start(["alice", "bob"], scratch);
  redis = await RedisServer.start();
  repo = tempRepo();
});

afterAll(async () => {
  server?.stop();
  await redis?.remove();
  repo?.remove();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

interface SentCopy {
  id: string;
  to: string;
  delivery: { state: string; at?: string; reason?: string; channel?: string; shown?: string; event?: string; reply?: string };
}

for (const engine of ["file", "redis"] as const) {
  describe(`on the ${engine} store`, () => {
    let store: Record<string, string>;
    beforeEach(() => {
      store =
        engine === "file"
          ? { AGENTMAIL_DIR: mkdtempSync(join(scratch, "store-")) }
          : { AGENTMAIL_URL: redis.url, AGENTMAIL_NAMESPACE: `states-${process.pid}-${++namespaces}` };
    });
    const env = (name: string, extra: Record<string, string> = {}) => ({ ...server.agent(name).env, ...store, ...extra });
    const run = (name: string, args: string[], extra: Record<string, string> = {}) => am(args, { env: env(name, extra), cwd: repo.dir });
    const sent = async (): Promise<SentCopy[]> => oneJson(await run("alice", ["sent", "--json"])) as SentCopy[];
    const stateOf = async (id: string) => (await sent()).find((copy) => copy.id === id)!.delivery;

    test("a message through each state: stored, notified (via a channel), read, acknowledged (ack), in sent and sent --json", async () => {
      const first = expectSent(await run("alice", ["send", "bob", "PR #12 is ready"]));
      expect((await run("alice", ["sent"])).stdout).toMatch(new RegExp(`^${first}  \\d+s  to bob  stored  PR #12 is ready\\n$`));
      expect(await stateOf(first)).toEqual({ state: "stored", at: expect.any(String) });
      const second = expectSent(await run("alice", ["send", "bob", "CI is green"]));
      // With a budget of one message the hook shows the oldest and lists the other: notified, through the stop hook.
      const hook = await run("bob", ["receive", "--hook"], { AGENTMAIL_DELIVERY_MESSAGES: "1" });
      expect(hook.code).toBe(2);
      expect(await stateOf(first)).toMatchObject({ state: "read", at: expect.any(String), channel: "stop-hook", shown: "whole" });
      expect(await stateOf(second)).toMatchObject({ state: "notified", channel: "stop-hook", shown: "listed" });
      expect((await run("alice", ["sent"])).stdout).toMatch(
        new RegExp(
          `^${second}  \\d+s  to bob  notified \\S+Z via stop-hook  CI is green\\n${first}  \\d+s  to bob  read \\S+Z via stop-hook  PR #12`,
        ),
      );
      if (engine === "file") {
        // The hook's list recorded the notification once (not once more as a count of what waits).
        const record = readFileSync(join(store.AGENTMAIL_DIR!, "bob.jsonl.delivery"), "utf8");
        expect(record.split("\n").filter((line) => line.includes(`"id":"${second}"`))).toHaveLength(1);
      }
      expect((await run("bob", ["receive"])).stdout).toContain("CI is green");
      expect(await stateOf(second)).toMatchObject({ state: "read", channel: "stop-hook" });
      expect((await run("bob", ["ack", second])).stdout).toBe(`Acknowledged ${second}\n`);
      expect(await stateOf(second)).toMatchObject({ state: "acknowledged", at: expect.any(String) });
      expect((await run("alice", ["sent"])).stdout).toMatch(new RegExp(`^${second}  \\d+s  to bob  acknowledged \\S+Z  CI is green\\n`));
      // An id that is not in the caller's mailbox acknowledges nothing.
      expect(expectError(await run("bob", ["ack", "NoSuchId"]), 1)).toContain("agentmail inbox --all");
    });

    test("a reply acknowledges what it answers, naming the reply", async () => {
      const id = expectSent(await run("alice", ["send", "bob", "question?"]));
      const reply = expectSent(await run("bob", ["reply", id, "answer"]));
      expect(await stateOf(id)).toMatchObject({ state: "acknowledged", reply });
    });

    test("--wait-for read ends when the copy is read; --wait-for ack times out with exit 3 and says where it got to", async () => {
      const waiting = start(["send", "bob", "read me", "--wait-for", "read", "--timeout", "60"], {
        env: env("alice"),
        cwd: repo.dir,
        timeoutMs: 90_000,
      });
      const id = await waitFor("the message to be stored", async () => (await sent()).find((copy) => copy.delivery.state === "stored")?.id);
      expect((await run("bob", ["receive"])).stdout).toContain("read me");
      const done = await waiting.done;
      expect(done.code).toBe(0);
      expect(done.stdout).toMatch(new RegExp(`^${id}\\nto bob  read \\S+Z\\n$`));
      const timedOut = await run("alice", ["send", "bob", "ack me", "--wait-for", "ack", "--timeout", "0.5"]);
      expect(timedOut.code).toBe(3);
      expect(timedOut.stdout).toMatch(/^\w{8}\nto bob {2}stored\n$/);
      expect(timedOut.stderr).toContain("did not reach acknowledged within 0.5 s; where it is: bob stored");
    });

    test("--wait-for reply prints the reply as receive does, and marks it read", async () => {
      const waiting = start(["send", "bob", "ship it?", "--wait-for", "reply"], { env: env("alice"), cwd: repo.dir, timeoutMs: 90_000 });
      const id = await waitFor("the message to be stored", async () => (await sent()).find((copy) => copy.delivery.state === "stored")?.id);
      const reply = expectSent(await run("bob", ["reply", id, "shipped"]));
      const done = await waiting.done;
      expect(done.code).toBe(0);
      expect(done.stdout).toStartWith(`${id}\nFrom: bob\nID: ${reply}\n`);
      expect(done.stdout).toEndWith("\n\n> shipped\n");
      expect((await run("alice", ["receive"])).stdout).toBe("No unread messages\n");
    });

    test("--ttl: mail unread past its time goes back to its sender as a bounce, once; sent --undelivered lists it", async () => {
      const id = expectSent(await run("alice", ["send", "bob", "deploy window closes soon", "--ttl", "1s"]));
      await waitFor("the time to live to run out", () => expired(id));
      expect((await run("bob", ["receive"])).stdout).toBe("No unread messages\n");
      expect(await stateOf(id)).toMatchObject({ state: "bounced", reason: expect.stringContaining("its time to live ran out") });
      expect((await run("alice", ["sent", "--undelivered"])).stdout).toMatch(
        new RegExp(`^${id}  \\d+s  to bob  bounced \\S+Z \\(its time to live ran out at \\S+Z, unread\\)  deploy window closes soon\\n$`),
      );
      const bounce = (await run("alice", ["receive"])).stdout;
      expect(bounce).toStartWith("From: agentmail\n");
      expect(bounce).toContain(`Your message ${id} to bob was not delivered: its time to live ran out`);
      expect((await run("alice", ["receive"])).stdout).toBe("No unread messages\n");
      expect(expectError(await run("alice", ["send", "bob", "x", "--ttl", "forever"]), 1)).toContain("--ttl");
    });

    /** Whether the message's time to live ran out (its expires_at is past). */
    async function expired(id: string): Promise<boolean> {
      const copy = (await sent()).find((each) => each.id === id) as unknown as { expires_at?: string } | undefined;
      return copy?.expires_at !== undefined && Date.now() > Date.parse(copy.expires_at) + 20;
    }

    test("mail to an agent gone longer than AGENTMAIL_GONE_AFTER goes back to its sender on cleanup", async () => {
      const dave = server.addWindow("dave", scratch);
      const id = expectSent(await run("alice", ["send", "dave", "are you there?"]));
      server.run(["kill-window", "-t", dave.windowId]);
      const gone = { AGENTMAIL_GONE_AFTER: "1s" };
      await waitFor("dave to be gone over a second", async () => {
        const cleaned = await run("alice", ["cleanup"], gone);
        return cleaned.code === 0 && (await stateOf(id)).state === "bounced";
      });
      expect((await stateOf(id)).reason).toContain("dave");
      const bounce = (await run("alice", ["receive"])).stdout;
      expect(bounce).toContain(`Your message ${id} to dave was not delivered`);
      expect((await run("alice", ["receive"])).stdout).toBe("No unread messages\n");
    });

    test("a storm of --wait-for reply killed mid-wait leaves every reply to a later receive, each once", async () => {
      const waits: Running[] = [];
      for (let i = 0; i < 6; i++) {
        waits.push(start(["send", "bob", `job ${i}`, "--wait-for", "reply"], { env: env("alice"), cwd: repo.dir, timeoutMs: 90_000 }));
      }
      const ids = await waitFor("the six messages to be stored", async () => {
        const copies = await sent();
        return copies.length === 6 ? copies.map((copy) => copy.id) : null;
      });
      for (const wait of waits) wait.kill();
      for (const wait of waits) expect((await wait.done).killed).toBe(true);
      const replies = new Set<string>();
      for (const id of ids) replies.add(expectSent(await run("bob", ["reply", id, `done ${id}`])));
      const received: string[] = [];
      for (;;) {
        const taken = await run("alice", ["receive", "--json"]);
        if (taken.stdout.trim() === "null") break;
        received.push((JSON.parse(taken.stdout) as { id: string }).id);
      }
      expect(received.sort()).toEqual([...replies].sort());
      expect(new Set((await sent()).map((copy) => copy.delivery.state))).toEqual(new Set(["acknowledged"]));
    });

    test("expired mail under racing receives and cleanups, some killed, bounces once each", async () => {
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) ids.push(expectSent(await run("alice", ["send", "bob", `stale ${i}`, "--ttl", "1s"])));
      await waitFor("every time to live to run out", async () => {
        for (const id of ids) if (!(await expired(id))) return false;
        return true;
      });
      const racers: Running[] = [];
      for (let i = 0; i < 4; i++) racers.push(start(["receive"], { env: env("bob"), cwd: repo.dir, killAfterMs: 20 + i * 15 }));
      for (let i = 0; i < 3; i++) racers.push(start(["cleanup"], { env: env("alice"), cwd: repo.dir, killAfterMs: 10 + i * 25 }));
      for (let i = 0; i < 3; i++) racers.push(start(["receive"], { env: env("bob"), cwd: repo.dir }));
      const outcomes = await Promise.all(racers.map((racer) => racer.done));
      // Whoever finished showed no expired message to bob.
      for (const outcome of outcomes) expect(outcome.stdout).not.toContain("stale ");
      // What the killed ones left, the next takers finish.
      expect((await run("bob", ["receive"])).stdout).toBe("No unread messages\n");
      expect((await run("alice", ["cleanup"])).code).toBe(0);
      const bounced: string[] = [];
      for (;;) {
        const taken = await run("alice", ["receive", "--json"]);
        if (taken.stdout.trim() === "null") break;
        bounced.push(String((JSON.parse(taken.stdout) as { in_reply_to: string }).in_reply_to));
      }
      expect(bounced.sort()).toEqual([...ids].sort());
      for (const id of ids) expect((await stateOf(id)).state).toBe("bounced");
    });
  });
}
