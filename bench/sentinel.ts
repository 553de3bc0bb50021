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

function table(title: string, rows: [string, number[]][]): void {
  const base = summarize(rows[0]![1]).median;
  console.log(`\n### ${title}\n`);
  console.log("| setup | median ms | p90 ms | ratio to the plain server |");
  console.log("|---|---:|---:|---:|");
  for (const [label, samples] of rows) {
    const summary = summarize(samples);
    console.log(
      `| ${label} (n=${summary.runs}) | ${summary.median.toFixed(2)} | ${summary.p90.toFixed(2)} | ${(summary.median / base).toFixed(2)} |`,
    );
  }
}

try {
  const version = /v=([\d.]+)/.exec(await Bun.$`redis-server --version`.text())?.[1] ?? "?";
  console.log(
    `\n## agentmail through Sentinel — bun ${Bun.version}, redis ${version}, ${availableParallelism()} cores, load ${loadavg()[0]!.toFixed(2)}`,
  );

  const send = setups.map((): number[] => []);
  const receive = setups.map((): number[] => []);
  const sendCpu = setups.map((): number[] => []);
  const receiveCpu = setups.map((): number[] => []);
  const as = (name: string, url: string, i: number): Agent => {
    const agent = tmux.agent(name);
    return { ...agent, env: { ...agent.env, AGENTMAIL_URL: url, AGENTMAIL_NAMESPACE: `bench/process/${i}` } };
  };
  for (let round = 0; round < WARMUP + PROCESS_ROUNDS; round++) {
    for (const [i, { url, label }] of setups.entries()) {
      const sent = await timedSpawn([BINARY, "send", "bob", `round ${round}`], as("alice", url, i), repo.dir);
      const taken = await timedSpawn([BINARY, "receive"], as("bob", url, i), repo.dir);
      if (sent.code !== 0 || !taken.stdout.includes(`ID: ${sent.stdout.trim()}\n`))
        problems.push(`${label}: ${sent.stderr}${taken.stderr}`);
      if (round >= WARMUP) {
        send[i]!.push(sent.ms);
        receive[i]!.push(taken.ms);
        sendCpu[i]!.push(sent.cpuMs);
        receiveCpu[i]!.push(taken.cpuMs);
      }
    }
  }
  table(
    "send, whole process",
    setups.map(({ label }, i) => [label, send[i]!]),
  );
  table(
    "receive, whole process",
    setups.map(({ label }, i) => [label, receive[i]!]),
  );

  const append = setups.map((): number[] => []);
  const take = setups.map((): number[] => []);
  for (let round = 0; round < WARMUP + STORE_ROUNDS; round++) {
    for (const [i, store] of stores.entries()) {
      let started = performance.now();
      await store.append(createMessage("bench", "bob", `round ${round}`));
      const appended = performance.now() - started;
      started = performance.now();
      const message = await store.take("bob", () => {});
      const taken = performance.now() - started;
      if (message?.message !== `round ${round}`) problems.push(`${setups[i]!.label}: took ${message?.message}`);
      if (round >= WARMUP) {
        append[i]!.push(appended);
        take[i]!.push(taken);
      }
    }
  }
  table(
    "append, store kept open",
    setups.map(({ label }, i) => [label, append[i]!]),
  );
  table(
    "take and mark read, store kept open",
    setups.map(({ label }, i) => [label, take[i]!]),
  );
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
