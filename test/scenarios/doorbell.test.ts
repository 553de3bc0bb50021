/**
 * The installed Stop hook with the doorbell, end to end: the command `hooks install` writes, run by `sh -c` in the
 * agent's pane, with agentmail behind a wrapper that logs each start. With no mail it starts nothing (once agentmail
 * has looked) and marks the agent ready; a send rings it. Sends racing hooks, process against process, lose nothing:
 * after each send has exited, the next hook shows its message unless an earlier one did, and each is shown once.
 * On a Redis store, where another host's send cannot ring a file here, the pane's pointer goes and every hook asks.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hookCommand } from "../../src/hooks/hook-commands.ts";
import { panePointer } from "../../src/mail/doorbell.ts";
import { am, BINARY } from "../support/e2e.ts";
import { RedisServer } from "../support/redis-server.ts";
import { tempRepo } from "../support/repo.ts";
import { TmuxServer } from "../support/tmux-server.ts";

let repo: ReturnType<typeof tempRepo>;
let server: TmuxServer;
let wrapper: string;
let log: string;

beforeAll(() => {
  repo = tempRepo();
  server = TmuxServer.start(["alice", "bob", "carol"], repo.dir);
  log = join(repo.dir, "starts.log");
  wrapper = join(repo.dir, "agentmail");
  writeFileSync(wrapper, `#!/bin/sh\necho "$*" >> '${log}'\nexec '${BINARY}' "$@"\n`);
  chmodSync(wrapper, 0o755);
});
afterAll(() => {
  server.stop();
  repo.remove();
});

const starts = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : []);
const env = (who: string, extra: Record<string, string> = {}) => ({ ...server.agent(who).env, ...extra });

interface Hook {
  code: number | null;
  stderr: string;
}

async function stopHook(who: string, extra: Record<string, string> = {}): Promise<Hook> {
  const child = Bun.spawn(["sh", "-c", hookCommand.delivery(wrapper)], {
    env: env(who, extra),
    cwd: repo.dir,
    stdin: "ignore",
    stderr: "pipe",
  });
  const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
  return { code, stderr };
}

const run = (who: string, args: string[], extra: Record<string, string> = {}) => am(args, { env: env(who, extra), cwd: repo.dir });
const statusOf = async (who: string, extra: Record<string, string> = {}) =>
  JSON.parse((await run(who, ["status", "--json"], extra)).stdout).status;
const shownIds = (hook: Hook) => [...hook.stderr.matchAll(/^ID: (\S+)$/gm)].map((match) => match[1]!);

describe("the Stop hook with no mail", () => {
  test("starts agentmail once to look, then nothing while no mail comes; marks the agent ready each time", async () => {
    expect((await run("bob", ["status", "work"])).code).toBe(0);
    const before = starts().length;
    expect(await stopHook("bob")).toEqual({ code: 0, stderr: "" });
    expect(starts().slice(before)).toEqual(["receive --hook --ready"]);
    expect(await statusOf("bob")).toBe("ready");
    for (let turn = 0; turn < 3; turn++) {
      expect((await run("bob", ["status", "work"])).code).toBe(0);
      expect(await statusOf("bob")).toBe("work");
      expect(await stopHook("bob")).toEqual({ code: 0, stderr: "" });
      expect(await statusOf("bob")).toBe("ready");
    }
    expect(starts().length).toBe(before + 1);
  });

  test("a send rings it: the next hook starts agentmail and delivers with exit 2, and the one after starts nothing", async () => {
    await stopHook("bob");
    const id = (await run("alice", ["send", "bob", "please review"])).stdout.trim();
    const before = starts().length;
    const hook = await stopHook("bob");
    expect(hook.code).toBe(2);
    expect(shownIds(hook)).toEqual([id]);
    expect(await stopHook("bob")).toEqual({ code: 0, stderr: "" });
    expect(starts().length).toBe(before + 1);
  });
});

describe("sends racing hooks, process against process", () => {
  test("after each send has exited, the next hook shows its message unless one already did; each is shown once", async () => {
    await stopHook("carol");
    await stopHook("carol");
    const shown: string[] = [];
    const sent: string[] = [];
    // Thirty messages in a few seconds are a burst: each shown whole needs a window that lets thirty through.
    const wide = { AGENTMAIL_DELIVERY_MESSAGES: "100", AGENTMAIL_DELIVERY_CHARS: "100000" };
    for (let round = 0; round < 30; round++) {
      // The send starts at a different moment of the hook's run each round: before, during, after its look.
      const delay = (round % 10) * 2;
      const [hook, id] = await Promise.all([
        stopHook("carol", wide),
        Bun.sleep(delay).then(async () => (await run("alice", ["send", "carol", `round ${round}`])).stdout.trim()),
      ]);
      sent.push(id);
      shown.push(...shownIds(hook));
      if (!shown.includes(id)) {
        const next = await stopHook("carol", wide);
        expect(next.code).toBe(2);
        shown.push(...shownIds(next));
      }
      expect(shown).toContain(id);
    }
    expect(shown.sort()).toEqual(sent.sort());
    expect(await stopHook("carol")).toEqual({ code: 0, stderr: "" });
  });
});

describe("on a Redis store", () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(() => redis.remove());

  test("the pane's pointer goes, so every hook starts agentmail; mail is delivered and the status set", async () => {
    await stopHook("bob");
    const pointer = panePointer(env("bob"))!;
    expect(existsSync(pointer.path)).toBe(true);
    const shared = { AGENTMAIL_URL: redis.url, AGENTMAIL_NAMESPACE: "doorbell" };
    expect((await run("bob", ["status", "work"], shared)).code).toBe(0);
    expect(existsSync(pointer.path)).toBe(false);
    const before = starts().length;
    expect(await stopHook("bob", shared)).toEqual({ code: 0, stderr: "" });
    expect(await statusOf("bob", shared)).toBe("ready");
    const id = (await run("alice", ["send", "bob", "over redis"], shared)).stdout.trim();
    const hook = await stopHook("bob", shared);
    expect({ code: hook.code, ids: shownIds(hook) }).toEqual({ code: 2, ids: [id] });
    expect(starts().length).toBe(before + 2);
  });
});
