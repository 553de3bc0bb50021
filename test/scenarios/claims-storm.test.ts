/**
 * The storm on both stores: 8 agents in their own tmux windows claim overlapping paths (globs, shared and exclusive)
 * through the compiled binary at once, some claims and releases SIGKILLed mid-way; never two agents hold conflicting
 * claims (see test/support/claims-storm.ts), and the store is left whole. On the file store, in one repository; on
 * Redis (a private redis-server), from two hosts at once, 4 agents each.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync } from "node:fs";
import { FileStore } from "../../src/store/file/file-store.ts";
import { RedisStore } from "../../src/store/redis/redis-store.ts";
import { parseServerUrl } from "../../src/store/redis/url.ts";
import { claimStorm, type StormReport } from "../support/claims-storm.ts";
import { Hosts } from "../support/hosts.ts";
import { tempRepo } from "../support/repo.ts";
import { TmuxServer } from "../support/tmux-server.ts";

setDefaultTimeout(240_000);

const AGENTS = Array.from({ length: 8 }, (_, i) => `agent-${i}`);
let repo: ReturnType<typeof tempRepo>;
let server: TmuxServer;

beforeAll(() => {
  repo = tempRepo();
  server = TmuxServer.start(AGENTS, repo.dir);
});

afterAll(() => {
  server?.stop();
  repo?.remove();
});

function expectCalm(report: StormReport, label: string): void {
  console.log(`${label} storm: ${JSON.stringify({ ...report, left: report.left.length, failures: report.failures.length })}`);
  expect(report.failures.map((failure) => `${failure.code} ${failure.stderr}`)).toEqual([]);
  expect(report.snapshotViolations).toEqual([]);
  expect(report.spanViolations).toEqual([]);
  expect(report.left).toEqual([]);
  // The storm did storm: claims were granted and refused, runs were killed, the reader saw the store often.
  expect(report.granted).toBeGreaterThan(10);
  expect(report.refused).toBeGreaterThan(0);
  expect(report.killed).toBeGreaterThan(0);
  expect(report.snapshots).toBeGreaterThan(10);
}

test("file store: 8 agents claiming overlapping paths with SIGKILLs: never two conflicting holders, nothing left, no lock left", async () => {
  const store = new FileStore(repo.mailDir);
  const read = async () => (await store.fileClaims()).claims;
  expectCalm(await claimStorm({ env: (agent) => server.agent(agent).env, cwd: () => repo.dir, read }, AGENTS, 12), "file store");
  expect(readdirSync(repo.mailDir).filter((name) => name.includes(".claims.json.lock"))).toEqual([]);
});

test("Redis, from two hosts: 8 agents claiming overlapping paths with SIGKILLs: never two conflicting holders, nothing left", async () => {
  const hosts = await Hosts.start({ "host-a": AGENTS.slice(0, 4), "host-b": AGENTS.slice(4) });
  // Patient, as the binary is in these tests: a slow answer on a loaded machine is no unreadable store.
  const address = parseServerUrl(hosts.redis.url);
  const store = new RedisStore({ address, namespace: "github.com/acme/widgets", host: "reader", timeoutMs: 60_000 });
  try {
    const hostOf = (agent: string) => hosts.host(AGENTS.indexOf(agent) < 4 ? "host-a" : "host-b");
    const world = {
      env: (agent: string) => hostOf(agent).env(agent),
      // One repository, a clone on each host: the same origin, so the same namespace.
      cwd: (agent: string) => hostOf(agent).clone,
      read: async () => (await store.fileClaims()).claims,
    };
    expectCalm(await claimStorm(world, AGENTS, 12), "Redis");
  } finally {
    store.close();
    await hosts.remove();
  }
});
