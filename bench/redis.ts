/**
 * What the Redis store costs against the file store, in one run, on a private redis-server (AOF, appendfsync
 * always, so both stores are durable when a send returns):
 *
 *   append            one message stored: Redis over a unix socket, over TCP loopback, and the file store's
 *                     append + fsync under its lock (src/store/file/mailbox.ts); also Redis on a second server with
 *                     `appendfsync everysec`, to show what giving up a write's own fsync buys
 *   take              the oldest unread message taken, shown and marked read: Redis lease then mark (two
 *                     scripts), the file store's takeOldestUnread (one in-place mark under the lock)
 *   first command     a new connection's first append, and its first take: what a CLI process pays, and how many
 *                     commands (round trips) it sends, the connection's HELLO included
 *   wake              from the start of a send in one client to the wake of another client blocked on the mailbox
 *   8 senders         8 processes × 200 appends into one mailbox at once: messages per second, from the first
 *                     send to the last one stored, and a check that every id printed is stored exactly once
 *
 * Operations of one kind run round-robin across the stores, so a change in machine load hits all of them alike.
 *
 * Run:  npm run bench:redis     (needs redis-server: apt-get install -y redis-server)
 * Exits 0 whatever the timings (it is a report, not a test); exits 1 if a correctness check failed.
 */
import { RedisClient } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createMessage } from "../src/mail/message.ts";
import { appendMessage, takeOldestUnread } from "../src/store/file/mailbox.ts";
import { RedisStore } from "../src/store/redis/redis-store.ts";
import { parseServerUrl } from "../src/store/redis/url.ts";
import { summarize } from "./timing.ts";
import { RedisServer } from "../test/support/redis-server.ts";

const ROUNDS = 300;
const WARMUP = 20;
const WAKE_ROUNDS = 100;
const SENDERS = 8;
const PER_SENDER = 200;
const WORKER = join(import.meta.dir, "..", "test", "unit", "store", "redis", "worker.ts");

const format = (ms: number) => (ms < 1 ? ms.toFixed(3) : ms.toFixed(2));

async function timed(work: () => Promise<unknown> | unknown): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

function table(title: string, rows: [string, number[]][], baseline: string): void {
  const base = summarize(rows.find(([label]) => label === baseline)![1]).median;
  console.log(`\n### ${title}\n`);
  console.log(`| store | median ms | p90 ms | ratio to ${baseline} |`);
  console.log("|---|---:|---:|---:|");
  for (const [label, samples] of rows) {
    const summary = summarize(samples);
    const ratio = (summary.median / base).toFixed(2);
    console.log(`| ${label} (n=${summary.runs}) | ${format(summary.median)} | ${format(summary.p90)} | ${ratio} |`);
  }
}

const problems: string[] = [];
const server = await RedisServer.start({ tcp: true });
const relaxed = await RedisServer.start({ appendfsync: "everysec" });
const fileRoot = mkdtempSync(join(tmpdir(), "agentmail-bench-files-"));
const namespace = `bench/${process.pid}`;
const open = (url: string) => new RedisStore({ address: parseServerUrl(url), namespace, host: "bench", timeoutMs: 10_000 });
const stores = { "redis unix": open(server.url), "redis tcp": open(server.tcpUrl), "redis unix everysec": open(relaxed.url) };

try {
  const version = /v=([\d.]+)/.exec(await Bun.$`redis-server --version`.text())?.[1] ?? "?";
  const machine = `bun ${Bun.version}, redis ${version}, ${availableParallelism()} cores, load average ${loadavg()[0]!.toFixed(2)}`;
  console.log(`\n## agentmail Redis store benchmark (AOF appendfsync always unless marked) — ${machine}`);

  // append, then take of what was appended, round-robin across the stores.
  const append: Record<string, number[]> = { "redis unix": [], "redis tcp": [], "redis unix everysec": [], file: [] };
  const receive: Record<string, number[]> = { "redis unix": [], "redis tcp": [], "redis unix everysec": [], file: [] };
  const skip = () => problems.push("the file store skipped a line");
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    const keep = round >= WARMUP;
    for (const [label, store] of Object.entries(stores)) {
      const agent = label.replaceAll(" ", "-");
      const ms = await timed(() => store.append(createMessage("bench", agent, `round ${round}`)));
      if (keep) append[label]!.push(ms);
    }
    const fileMs = await timed(() => appendMessage(fileRoot, createMessage("bench", "file", `round ${round}`)));
    if (keep) append.file!.push(fileMs);

    for (const [label, store] of Object.entries(stores)) {
      const agent = label.replaceAll(" ", "-");
      let body = "";
      const ms = await timed(async () => {
        body = (await store.take(agent, () => {}))?.message ?? "";
      });
      if (body !== `round ${round}`) problems.push(`${label} delivered "${body}" in round ${round}`);
      if (keep) receive[label]!.push(ms);
    }
    let fileBody = "";
    const fileReceiveMs = await timed(async () => {
      fileBody = (await takeOldestUnread(fileRoot, "file", skip))?.message ?? "";
    });
    if (fileBody !== `round ${round}`) problems.push(`file delivered "${fileBody}" in round ${round}`);
    if (keep) receive.file!.push(fileReceiveMs);
  }
  table("append (one message, durable when it returns)", Object.entries(append), "file");
  table("take: lease, show, mark read (file: take oldest unread)", Object.entries(receive), "file");

  // A new connection's first append and first take: what each CLI process pays, and the commands it costs.
  const first: Record<string, number[]> = { "redis unix append": [], "redis tcp append": [], "redis unix take": [], "redis tcp take": [] };
  const commands: Record<string, number[]> = { append: [], take: [] };
  const counter = new RedisClient(server.url);
  // Commands a client sent (a script's own calls are counted by the server too, so only these are summed).
  const clientCommands = /^cmdstat_(hello|auth|ping|select|eval|evalsha):calls=(\d+)/gm;
  const processed = async () => {
    const stats = String(await counter.send("INFO", ["commandstats"]));
    return [...stats.matchAll(clientCommands)].reduce((sum, match) => sum + Number(match[2]), 0);
  };
  for (let round = 0; round < 100; round++) {
    for (const [label, url] of [
      ["redis unix", server.url],
      ["redis tcp", server.tcpUrl],
    ] as const) {
      const sender = open(url);
      const before = label === "redis unix" ? await processed() : 0;
      first[`${label} append`]!.push(await timed(() => sender.append(createMessage("bench", "first", "x"))));
      if (label === "redis unix") commands.append!.push((await processed()) - before);
      sender.close();
      const receiver = open(url);
      const beforeTake = label === "redis unix" ? await processed() : 0;
      first[`${label} take`]!.push(await timed(() => receiver.take("first", () => {})));
      if (label === "redis unix") commands.take!.push((await processed()) - beforeTake);
      receiver.close();
    }
  }
  counter.close();
  table("first command on a new connection (connect, HELLO, the script)", Object.entries(first), "redis unix append");
  const perCommand = (samples: number[]) => `${Math.min(...samples)}–${Math.max(...samples)}`;
  console.log(
    `\ncommands each sent, each one round trip (HELLO included): append ${perCommand(commands.append!)}, take ${perCommand(commands.take!)}`,
  );

  // Wake: a second client blocked on the mailbox; from the start of the send to the wake.
  const wake: Record<string, number[]> = { "redis unix": [], "redis tcp": [] };
  for (const [label, url] of [
    ["redis unix", server.url],
    ["redis tcp", server.tcpUrl],
  ] as const) {
    const waiter = open(url);
    const watch = await waiter.watch(["waker"]);
    for (let round = 0; round < WAKE_ROUNDS; round++) {
      const woke = watch.changed(10_000).then(() => performance.now());
      await Bun.sleep(2);
      const start = performance.now();
      await stores[label].append(createMessage("bench", "waker", "wake"));
      const at = await woke;
      if (at - start > 5_000) problems.push(`${label}: a wait did not wake`);
      wake[label]!.push(at - start);
    }
    watch.close();
    waiter.close();
  }
  table("wake of a blocked wait after another client's send", Object.entries(wake), "redis unix");

  // 8 sender processes at once: throughput, and every printed id stored once.
  console.log(`\n### ${SENDERS} sender processes × ${PER_SENDER} appends into one mailbox\n`);
  console.log("| store | messages/s | wall ms |");
  console.log("|---|---:|---:|");
  const parallel: [string, string[], () => Promise<string[]>][] = [
    ["redis unix", ["send", server.url, namespace], async () => (await stores["redis unix"].mail("crowd-unix")).map((r) => r.message.id)],
    ["redis tcp", ["send", server.tcpUrl, namespace], async () => (await stores["redis tcp"].mail("crowd-tcp")).map((r) => r.message.id)],
    [
      "file",
      ["file-send", fileRoot, "-"],
      async () => {
        const ids: string[] = [];
        let message: Awaited<ReturnType<typeof takeOldestUnread>>;
        while ((message = await takeOldestUnread(fileRoot, "crowd-file", skip))) ids.push(message.id);
        return ids;
      },
    ],
  ];
  for (const [label, args, storedIds] of parallel) {
    const to = `crowd-${label.split(" ").at(-1)}`;
    const children = Array.from({ length: SENDERS }, (_, i) =>
      Bun.spawn([process.execPath, WORKER, ...args, to, String(PER_SENDER), `s${i}`], {
        env: { ...process.env, WORKER_STAMP: "1" },
        stdout: "pipe",
        stderr: "inherit",
      }),
    );
    const outputs = await Promise.all(
      children.map(async (child) => {
        const text = await new Response(child.stdout).text();
        await child.exited;
        return text.trim().split("\n");
      }),
    );
    const lines = outputs.flat();
    const starts = lines.filter((line) => line.startsWith("T ")).map((line) => Number(line.slice(2)));
    const ends = lines.filter((line) => line.startsWith("E ")).map((line) => Number(line.slice(2)));
    const printed = lines.filter((line) => !/^[TE] /.test(line)).map((line) => line.split(" ")[0]!);
    const wall = Math.max(...ends) - Math.min(...starts);
    console.log(`| ${label} | ${Math.round((printed.length / wall) * 1000)} | ${wall.toFixed(0)} |`);
    const stored = await storedIds();
    if (printed.length !== SENDERS * PER_SENDER) problems.push(`${label}: senders printed ${printed.length} ids`);
    if (stored.length !== printed.length || new Set(stored).size !== stored.length || !printed.every((id) => stored.includes(id))) {
      problems.push(`${label}: ${stored.length} stored (${new Set(stored).size} distinct) for ${printed.length} printed`);
    }
  }

  if (problems.length > 0) {
    console.log(`\nCORRECTNESS FAILURES (${problems.length}):`);
    for (const problem of problems) console.log(`- ${problem}`);
    process.exitCode = 1;
  } else {
    console.log(
      "\ncorrectness: every take delivered the message its round sent; every wait woke; " +
        "every id the senders printed was stored exactly once",
    );
  }
} finally {
  for (const store of Object.values(stores)) store.close();
  await server.remove();
  await relaxed.remove();
  rmSync(fileRoot, { recursive: true, force: true });
}
