/**
 * What Sentinel costs, in one run, as ratios to a plain server: a private redis-server (TCP loopback, AOF
 * `appendfsync always`) and a private Sentinel deployment (a primary and two replicas configured the same, three
 * sentinels; test/support/redis-sentinel.ts), both on this machine.
 *
 *   send / receive (process)   whole `agentmail send` and `agentmail receive` processes against the compiled binary,
 *                              in a private tmux server: what an agent pays per call, the sentinel's answer and the
 *                              primary's ROLE included
 *   append / take (store)      one message stored, and one taken and marked read, by a store kept open (a
 *                              long-lived process: the MCP server, the mailman): the server's share alone
 *
 * each for: the plain server; Sentinel with replicas=0; Sentinel with replicas=1 (the default: each send and read
 * mark waits for one replica's WAIT). Operations run round-robin across the three, so machine load hits them alike.
 *
 * Run:  node_modules/.bin/bun bench/sentinel.ts     (npm run build first; needs redis-server and tmux)
 * Exits 0 whatever the timings (a report, not a test); exits 1 if a correctness check failed.
 */
import { availableParallelism, loadavg } from "node:os";
import { createMessage } from "../src/mail/message.ts";
import { RedisStore } from "../src/store/redis/redis-store.ts";
import { parseServerUrl } from "../src/store/redis/url.ts";
import { SentinelCluster } from "../test/support/redis-sentinel.ts";
import { RedisServer } from "../test/support/redis-server.ts";
import { BINARY, tempRepo } from "../test/support/repo.ts";
import { TmuxServer, type Agent } from "../test/support/tmux-server.ts";
import { summarize, timedSpawn } from "./timing.ts";

const PROCESS_ROUNDS = 60;
const STORE_ROUNDS = 300;
const WARMUP = 5;

const problems: string[] = [];
const plain = await RedisServer.start({ tcp: true });
const cluster = await SentinelCluster.start();
const repo = tempRepo();
const tmux = TmuxServer.start(["alice", "bob"], repo.dir);
const setups = [
  { label: "plain server", url: plain.tcpUrl },
  { label: "Sentinel, replicas=0", url: cluster.url("replicas=0") },
  { label: "Sentinel, replicas=1", url: cluster.url("replicas=1") },
];
const stores = setups.map(
  ({ url }, i) => new RedisStore({ address: parseServerUrl(url), namespace: `bench/store/${i}`, host: "bench", timeoutMs: 10_000 }),
);

/** A table of wall times, with the CPU time of whole processes (steadier than wall time on a loaded machine) when given. */
function table(title: string, rows: { label: string; ms: number[]; cpuMs?: number[] }[]): void {
  const base = summarize(rows[0]!.ms).median;
  const cpuBase = rows[0]!.cpuMs ? summarize(rows[0]!.cpuMs).median : null;
  console.log(`\n### ${title}\n`);
  console.log(`| setup | median ms | p90 ms | ratio to the plain server |${cpuBase ? " median CPU ms | CPU ratio |" : ""}`);
  console.log(`|---|---:|---:|---:|${cpuBase ? "---:|---:|" : ""}`);
  for (const { label, ms, cpuMs } of rows) {
    const wall = summarize(ms);
    const cpu = cpuMs && cpuBase ? ` ${summarize(cpuMs).median.toFixed(2)} | ${(summarize(cpuMs).median / cpuBase).toFixed(2)} |` : "";
    console.log(
      `| ${label} (n=${wall.runs}) | ${wall.median.toFixed(2)} | ${wall.p90.toFixed(2)} | ${(wall.median / base).toFixed(2)} |${cpu}`,
    );
  }
}

interface Sample {
  ms: number;
  cpuMs?: number;
}

/**
 * Runs `step` for each setup, round-robin, `rounds` times after the warm-up; returns, per kind of operation it timed,
 * the samples of each setup.
 */
async function measure(rounds: number, step: (i: number, round: number) => Promise<Record<string, Sample>>) {
  const samples = new Map<string, { ms: number[]; cpuMs: number[] }[]>();
  for (let round = 0; round < WARMUP + rounds; round++) {
    for (const i of setups.keys()) {
      const timed = await step(i, round);
      if (round < WARMUP) continue;
      for (const [kind, sample] of Object.entries(timed)) {
        if (!samples.has(kind))
          samples.set(
            kind,
            setups.map(() => ({ ms: [], cpuMs: [] })),
          );
        samples.get(kind)![i]!.ms.push(sample.ms);
        if (sample.cpuMs !== undefined) samples.get(kind)![i]!.cpuMs.push(sample.cpuMs);
      }
    }
  }
  for (const [kind, perSetup] of samples) {
    table(
      kind,
      perSetup.map(({ ms, cpuMs }, i) => ({ label: setups[i]!.label, ms, cpuMs: cpuMs.length > 0 ? cpuMs : undefined })),
    );
  }
}

try {
  const version = /v=([\d.]+)/.exec(await Bun.$`redis-server --version`.text())?.[1] ?? "?";
  console.log(
    `\n## agentmail through Sentinel — bun ${Bun.version}, redis ${version}, ${availableParallelism()} cores, load ${loadavg()[0]!.toFixed(2)}`,
  );

  const as = (name: string, i: number): Agent => {
    const agent = tmux.agent(name);
    return { ...agent, env: { ...agent.env, AGENTMAIL_URL: setups[i]!.url, AGENTMAIL_NAMESPACE: `bench/process/${i}` } };
  };
  await measure(PROCESS_ROUNDS, async (i, round) => {
    const sent = await timedSpawn([BINARY, "send", "bob", `round ${round}`], as("alice", i), repo.dir);
    const taken = await timedSpawn([BINARY, "receive"], as("bob", i), repo.dir);
    if (sent.code !== 0 || !taken.stdout.includes(`ID: ${sent.stdout.trim()}\n`))
      problems.push(`${setups[i]!.label}: ${sent.stderr}${taken.stderr}`);
    return { "send, whole process": sent, "receive, whole process": taken };
  });
  await measure(STORE_ROUNDS, async (i, round) => {
    let started = performance.now();
    await stores[i]!.append(createMessage("bench", "bob", `round ${round}`));
    const appended = performance.now() - started;
    started = performance.now();
    const message = await stores[i]!.take("bob", () => {});
    if (message?.message !== `round ${round}`) problems.push(`${setups[i]!.label}: took ${message?.message}`);
    return { "append, store kept open": { ms: appended }, "take and mark read, store kept open": { ms: performance.now() - started } };
  });
  console.log(`\nload average at the end: ${loadavg()[0]!.toFixed(2)}`);
} finally {
  for (const store of stores) store.close();
  tmux.stop();
  repo.remove();
  await plain.remove();
  await cluster.remove();
}
if (problems.length > 0) {
  console.error(`correctness problems:\n${problems.slice(0, 10).join("\n")}`);
  process.exitCode = 1;
}
