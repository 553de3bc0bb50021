/**
 * What the Redis store costs against the file store, in one run, on a private redis-server (AOF, appendfsync
 * always, so both stores are durable when a send returns):
 *
 *   append            one message stored: Redis over a unix socket, over TCP loopback, and the file store's
 *                     append + fsync under its lock (src/store/mailbox.ts); also Redis on a second server with
 *                     `appendfsync everysec`, to show what giving up a write's own fsync buys
 *   claim+ack         the oldest unread message taken and marked read: Redis claim then acknowledge (two
 *                     scripts), the file store's takeOldestUnread (one in-place mark under the lock)
 *   first append      a new connection's first send (connect, PING, script): what a CLI process pays once
 *   wake              from the start of a send in one client to the wake of another client blocked on the mailbox
 *   8 senders         8 processes × 200 appends into one mailbox at once: messages per second, from the first
 *                     send to the last one stored, and a check that every id printed is stored exactly once
 *
 * Operations of one kind run round-robin across the stores, so a change in machine load hits all of them alike.
 *
 * Run:  npm run bench:redis     (needs redis-server: apt-get install -y redis-server)
 * Exits 0 whatever the timings (it is a report, not a test); exits 1 if a correctness check failed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createMessage } from "../src/core/message.ts";
import { appendMessage, takeOldestUnread } from "../src/store/mailbox.ts";
import { RedisMailStore } from "../src/store/redis/redis-store.ts";
import { summarize } from "./timing.ts";
import { parseServerUrl } from "../src/store/redis/url.ts";
import { RedisServer } from "../test/support/redis-server.ts";

const ROUNDS = 300;
const WARMUP = 20;
const WAKE_ROUNDS = 100;
const SENDERS = 8;
const PER_SENDER = 200;
const WORKER = join(import.meta.dir, "..", "test", "redis", "worker.ts");

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
const open = (url: string) => new RedisMailStore({ address: parseServerUrl(url), namespace, host: "bench", timeoutMs: 10_000 });
const stores = { "redis unix": open(server.url), "redis tcp": open(server.tcpUrl), "redis unix everysec": open(relaxed.url) };

try {
  const version = /v=([\d.]+)/.exec(await Bun.$`redis-server --version`.text())?.[1] ?? "?";
  const machine = `bun ${Bun.version}, redis ${version}, ${availableParallelism()} cores, load average ${loadavg()[0]!.toFixed(2)}`;
  console.log(`\n## agentmail Redis store benchmark (AOF appendfsync always unless marked) — ${machine}`);

  // append, then claim+ack of what was appended, round-robin across the three stores.
  const append: Record<string, number[]> = { "redis unix": [], "redis tcp": [], "redis unix everysec": [], file: [] };
  const receive: Record<string, number[]> = { "redis unix": [], "redis tcp": [], "redis unix everysec": [], file: [] };
  const skip = () => problems.push("the file store skipped a line");
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    const keep = round >= WARMUP;
    for (const [label, store] of Object.entries(stores)) {
      const agent = label.replaceAll(" ", "-");
      const ms = await timed(() => store.append([createMessage("bench", agent, `round ${round}`)]));
      if (keep) append[label]!.push(ms);
    }
    const fileMs = await timed(() => appendMessage(fileRoot, createMessage("bench", "file", `round ${round}`)));
    if (keep) append.file!.push(fileMs);

    for (const [label, store] of Object.entries(stores)) {
      const agent = label.replaceAll(" ", "-");
      let body = "";
      const ms = await timed(async () => {
        const claim = await store.claim(agent);
        body = claim?.message.message ?? "";
        if (claim) await store.acknowledge(claim);
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
  table("claim + acknowledge (file: take oldest unread)", Object.entries(receive), "file");

  // A new connection's first append: what each CLI process pays on top of the append itself.
  const first: Record<string, number[]> = { "redis unix": [], "redis tcp": [] };
  for (let round = 0; round < 100; round++) {
    for (const [label, url] of [
      ["redis unix", server.url],
      ["redis tcp", server.tcpUrl],
    ] as const) {
      const fresh = open(url);
      first[label]!.push(await timed(() => fresh.append([createMessage("bench", "first", "x")])));
      fresh.close();
    }
  }
  table("first append on a new connection (connect + PING + script)", Object.entries(first), "redis unix");

  // Wake: a second client blocked on the mailbox; from the start of the send to the wake.
  const wake: Record<string, number[]> = { "redis unix": [], "redis tcp": [] };
  for (const [label, url] of [
    ["redis unix", server.url],
    ["redis tcp", server.tcpUrl],
  ] as const) {
    const waiter = open(url);
    const watch = await waiter.watch("waker");
    await watch.changed(1);
    for (let round = 0; round < WAKE_ROUNDS; round++) {
      const woke = watch.changed(10_000).then((changed) => ({ changed, at: performance.now() }));
      await Bun.sleep(2);
      const start = performance.now();
      await stores[label].append([createMessage("bench", "waker", "wake")]);
      const { changed, at } = await woke;
      if (!changed) problems.push(`${label}: a wait did not wake`);
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
    ["redis unix", ["send", server.url, namespace], async () => (await stores["redis unix"].messages("crowd-unix")).map((m) => m.id)],
    ["redis tcp", ["send", server.tcpUrl, namespace], async () => (await stores["redis tcp"].messages("crowd-tcp")).map((m) => m.id)],
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
      "\ncorrectness: every claim delivered the message its round sent; every wait woke; " +
        "every id the senders printed was stored exactly once",
    );
  }
} finally {
  for (const store of Object.values(stores)) store.close();
  await server.remove();
  await relaxed.remove();
  rmSync(fileRoot, { recursive: true, force: true });
}
