/**
 * `agentmail name` moves a window's unread mail to its new name, against the compiled binary in a private tmux
 * server, on the file store and on a private redis-server: a rename there and back keeps every message unread and
 * delivers it once (the copy coming back is not taken for the read one the old mailbox still holds), `sent` lists a
 * moved message once, and a storm of renames between two names, each `name` SIGKILLed at a random moment and the
 * agent receiving now and then, loses nothing and delivers nothing twice. Checks are on outcomes (ids printed, ids received), never on timing.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Message } from "../../src/mail/message.ts";
import { am, expectSent, oneJson, start } from "../support/e2e.ts";
import { serverWithFreshRepos } from "../support/fresh-repos.ts";
import { RedisServer } from "../support/redis-server.ts";

// Generous: these spawn hundreds of processes and a loaded 2-core machine is slow. No test asserts on time.
setDefaultTimeout(300_000);

const world = serverWithFreshRepos("agentmail-moves-", ["alice"]);
let redis: RedisServer;
let namespaces = 0;

beforeAll(async () => {
  redis = await RedisServer.start();
});

afterAll(async () => {
  await redis?.remove();
});

const STORES = {
  file: (): Record<string, string> => ({}),
  redis: (): Record<string, string> => ({ AGENTMAIL_URL: redis.url, AGENTMAIL_NAMESPACE: `moves-${process.pid}-${++namespaces}` }),
};

/** A new window named `name` and the environment of a process in it, plus what selects the store. */
function windowFor(name: string, store: Record<string, string>) {
  const agent = world.server.addWindow(name, world.scratch);
  return { ...agent, env: { ...agent.env, ...store } };
}

const run = (env: Record<string, string>, args: string[]) => am(args, { env, cwd: world.repo.dir });

/** Receives until nothing is left; the ids in the order received. */
async function receiveAll(env: Record<string, string>): Promise<string[]> {
  const ids: string[] = [];
  for (;;) {
    const result = await run(env, ["receive", "--json"]);
    expect({ code: result.code, stderr: result.stderr }).toMatchObject({ code: 0 });
    const message = oneJson(result) as Message | null;
    if (message === null) return ids;
    ids.push(message.id);
  }
}

/** A seeded generator, so a failing storm can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

for (const [engine, storeEnv] of Object.entries(STORES)) {
  describe(`on the ${engine} store`, () => {
    test("a rename there and back (bob, bob2, bob) keeps 3 unread messages unread; each is received once, listed once", async () => {
      const store = storeEnv();
      const alice = { ...world.server.agent("alice").env, ...store };
      const bob = windowFor(`bob-${engine}`, store);
      const sent: string[] = [];
      for (let i = 1; i <= 3; i++) sent.push(expectSent(await run(alice, ["send", bob.name, `m${i}`])));
      expect(await run(bob.env, ["name", `${bob.name}2`])).toMatchObject({ code: 0, stdout: `${bob.name}2\n` });
      const back = await run(bob.env, ["name", bob.name]);
      expect(back).toMatchObject({ code: 0, stdout: `${bob.name}\n` });
      expect(back.stderr).toBe(`moved 3 unread messages sent to your previous name "${bob.name}2" to "${bob.name}"\n`);
      expect(await receiveAll(bob.env)).toEqual(sent);
      const listed = oneJson(await run(alice, ["sent", "--json"])) as Message[];
      expect(listed.map((message) => [message.id, message.to, message.read_flag])).toEqual(
        [...sent].reverse().map((id) => [id, bob.name, true]),
      );
      world.server.run(["kill-window", "-t", bob.windowId]);
    });

    test("a storm of renames between two names, each name SIGKILLed at a random moment: every id received once", async () => {
      const store = storeEnv();
      const alice = { ...world.server.agent("alice").env, ...store };
      const names = [`x-${engine}`, `y-${engine}`] as const;
      const mover = windowFor(names[0], store);
      const sent: string[] = [];
      for (let i = 0; i < 150; i++) sent.push(expectSent(await run(alice, ["send", names[0], `storm ${i}`])));
      const next = random(engine === "file" ? 20 : 21);
      let killed = 0;
      const received: string[] = [];
      for (let flip = 0; flip < 40; flip++) {
        const target = names[(flip + 1) % 2]!;
        // Most runs are cut short somewhere in the move of 150 messages; some finish.
        const renaming = start(["name", target], { env: mover.env, cwd: world.repo.dir, killAfterMs: Math.floor(next() * 400) });
        const result = await renaming.done;
        if (result.killed) killed++;
        else expect({ flip, code: result.code, stderr: result.stderr }).toMatchObject({ flip, code: 0 });
        // Now and then the agent reads a message under whatever name the window has now, as its hooks would.
        if (flip % 5 === 4) {
          const message = oneJson(await run(mover.env, ["receive", "--json"])) as Message | null;
          if (message) received.push(message.id);
        }
      }
      // The storm did cut runs short (how many depends on the machine's speed, so the bar is low).
      expect(killed).toBeGreaterThan(3);
      // One run to the end finishes whatever a killed one left, wherever the window's name stands.
      expect((await run(mover.env, ["name", names[1]])).code).toBe(0);
      received.push(...(await receiveAll(mover.env)));
      expect(received.length).toBe(sent.length);
      expect(new Set(received)).toEqual(new Set(sent));
      // Nothing is left under the other name either.
      const other = await run(mover.env, ["name", names[0]]);
      expect({ code: other.code, stderr: other.stderr }).toEqual({ code: 0, stderr: "" });
      expect(await receiveAll(mover.env)).toEqual([]);
      const listed = oneJson(await run(alice, ["sent", "--json"])) as Message[];
      expect(listed.length).toBe(sent.length);
      world.server.run(["kill-window", "-t", mover.windowId]);
    });
  });
}
