/**
 * What one agentmail call costs on the Redis store, whole processes against the compiled binary, next to the file
 * store and the floor in the same run (a private redis-server with AOF `appendfsync always`, a private tmux server,
 * a throwaway repository):
 *
 *   floor            agentmail's own tmux call (as in bench/run.ts) then `agentmail --version`
 *   send / receive   on the file store, on Redis over its unix socket, on Redis over TCP loopback; each receive
 *                    takes the message the send of the same round delivered
 *   wake             a `receive --wait` blocked on the store; from the moment a send exits to the moment the waiting
 *                    receive has printed the message and exited (an upper bound of the wake-up itself)
 *   throughput       8 concurrent sending processes × 50 messages into one mailbox, then checked: every printed id
 *                    delivered once
 *
 * The timed commands run round-robin, one of each per round, so machine load hits all of them alike.
 *
 * Run:  npm run bench   (also runs bench/run.ts first)     node_modules/.bin/bun bench/hosts.ts
 */
import { loadavg } from "node:os";
import { RedisServer } from "../test/support/redis-server.ts";
import { BINARY, tempRepo } from "../test/support/repo.ts";
import { TmuxServer, type Agent } from "../test/support/tmux-server.ts";
import { summarize, timedFloor, timedSpawn, type Run } from "./timing.ts";

const ROUNDS = 40;
const WARMUP = 4;
const WAKE_TRIALS = 12;
const SENDERS = 8;
const PER_SENDER = 50;

const problems: string[] = [];

function check(what: string, run: Run, ok: boolean): void {
  if (!ok && problems.length < 20)
    problems.push(
      `${what}: exit ${run.code}, stdout ${JSON.stringify(run.stdout.slice(0, 120))}, stderr ${JSON.stringify(run.stderr.slice(0, 200))}`,
    );
}

interface Store {
  label: string;
  env: Record<string, string>;
}

const redis = await RedisServer.start({ tcp: true });
const repo = tempRepo();
const server = TmuxServer.start(["alice", "bob", ...Array.from({ length: SENDERS }, (_, i) => `s${i}`)], repo.dir);
const as = (name: string, store: Store): Agent => {
  const agent = server.agent(name);
  return { ...agent, env: { ...agent.env, ...store.env } };
};

try {
  const stores: Store[] = [
    { label: "file store", env: {} },
    { label: "Redis, unix socket", env: { AGENTMAIL_URL: redis.url, AGENTMAIL_NAMESPACE: "bench" } },
    { label: "Redis, TCP loopback", env: { AGENTMAIL_URL: redis.tcpUrl, AGENTMAIL_NAMESPACE: "bench-tcp" } },
  ];
  const samples = new Map<string, number[]>();
  const record = (label: string, ms: number) => samples.set(label, [...(samples.get(label) ?? []), ms]);

  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    const timed = round >= WARMUP;
    const floor = await timedFloor(server.agent("bob"), repo.dir);
    if (timed) record("floor", floor.ms);
    for (const store of stores) {
      const send = await timedSpawn([BINARY, "send", "bob", `round ${round}`], as("alice", store), repo.dir);
      check(`send (${store.label})`, send, send.code === 0 && /^[A-Za-z0-9]{8}\n$/.test(send.stdout));
      const receive = await timedSpawn([BINARY, "receive"], as("bob", store), repo.dir);
      check(`receive (${store.label})`, receive, receive.code === 0 && receive.stdout.includes(`ID: ${send.stdout.trim()}\n`));
      if (timed) {
        record(`send, ${store.label}`, send.ms);
        record(`receive, ${store.label}`, receive.ms);
      }
    }
  }

  const floor = summarize(samples.get("floor")!).median;
  console.log(`agentmail on Redis: ${ROUNDS} interleaved rounds, load average ${loadavg()[0]!.toFixed(2)} at the end`);
  console.log(`${"".padEnd(32)} ${"median ms".padStart(10)} ${"p90 ms".padStart(8)} ${"× floor".padStart(8)}`);
  for (const [label, values] of samples) {
    const summary = summarize(values);
    const ratio = label === "floor" ? "" : (summary.median / floor).toFixed(2);
    console.log(`${label.padEnd(32)} ${summary.median.toFixed(2).padStart(10)} ${summary.p90.toFixed(2).padStart(8)} ${ratio.padStart(8)}`);
  }

  // Wake-up: a receive blocked in --wait, woken by a send from another process.
  for (const store of stores.slice(0, 2)) {
    const wakes: number[] = [];
    for (let trial = 0; trial < WAKE_TRIALS; trial++) {
      const waiting = Bun.spawn([BINARY, "receive", "--wait", "20"], {
        env: as("bob", store).env,
        cwd: repo.dir,
        stdout: "pipe",
        stderr: "pipe",
      });
      const output = new Response(waiting.stdout).text();
      await Bun.sleep(250);
      const send = await timedSpawn([BINARY, "send", "bob", `wake ${trial}`], as("alice", store), repo.dir);
      const sentAt = performance.now();
      await waiting.exited;
      wakes.push(performance.now() - sentAt);
      const text = await output;
      if (!text.includes(`ID: ${send.stdout.trim()}\n`))
        problems.push(`wake (${store.label}): the waiting receive printed ${JSON.stringify(text.slice(0, 80))}`);
    }
    const summary = summarize(wakes);
    console.log(
      `wake, ${store.label}: median ${summary.median.toFixed(1)} ms, p90 ${summary.p90.toFixed(1)} ms (send's exit → waiter's exit)`,
    );
  }

  // Throughput: concurrent sending processes into one mailbox, then every printed id delivered once.
  for (const store of stores.slice(0, 2)) {
    const started = performance.now();
    const printed = (
      await Promise.all(
        Array.from({ length: SENDERS }, async (_, i) => {
          const ids: string[] = [];
          for (let n = 0; n < PER_SENDER; n++)
            ids.push((await timedSpawn([BINARY, "send", "bob", `burst ${i} ${n}`], as(`s${i}`, store), repo.dir)).stdout.trim());
          return ids;
        }),
      )
    ).flat();
    const seconds = (performance.now() - started) / 1000;
    const inbox = await timedSpawn([BINARY, "inbox", "--json"], as("bob", store), repo.dir);
    const delivered = (JSON.parse(inbox.stdout) as { id: string }[]).map((message) => message.id);
    const missing = printed.filter((id) => !delivered.includes(id));
    if (missing.length > 0 || new Set(delivered).size !== delivered.length)
      problems.push(`throughput (${store.label}): ${missing.length} printed ids missing or duplicated`);
    console.log(
      `throughput, ${store.label}: ${SENDERS} processes × ${PER_SENDER} sends, ${(printed.length / seconds).toFixed(0)} messages/s`,
    );
  }
} finally {
  server.stop();
  repo.remove();
  await redis.remove();
}

if (problems.length > 0) {
  console.error(`correctness problems:\n${problems.join("\n")}`);
  process.exitCode = 1;
}
