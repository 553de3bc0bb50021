/**
 * A separate process that uses the Redis store the way a command will, for the concurrency tests and the bench:
 *
 *   bun test/unit/store/redis/worker.ts send <url> <namespace> <to> <count> <tag>   prints "<id> <body>" once each is stored
 *   bun test/unit/store/redis/worker.ts receive <url> <namespace> <agent>           loops: takes one, printing "S <id> <body>"
 *       as its showing, then "A <id>" once it is marked read; waits on the mailbox when it is empty; exits after taking "STOP"
 *   bun test/unit/store/redis/worker.ts hang <url> <namespace> <agent>              takes one and, while showing it, prints
 *       "C <id> <body>" and waits forever (to be killed before it is marked read)
 *   bun test/unit/store/redis/worker.ts file-send <dir> - <to> <count> <tag>         like send, into the file store in <dir>
 *
 * send and file-send end with "E <epoch ms>" once their last message is stored.
 *
 * WORKER_HOST names the agent host (default host-a); WORKER_STAMP=1 makes send print "T <epoch ms>" just before
 * each append, once connected; WORKER_LEASE_MS the lease, WORKER_PAUSE_MS a pause between
 * showing and the mark (a wider window for a kill to land in). Output is written synchronously, so a line is
 * out before the next step starts.
 */
import { writeSync } from "node:fs";
import { createMessage } from "../../../../src/mail/message.ts";
import { RedisStore } from "../../../../src/store/redis/redis-store.ts";
import { parseServerUrl } from "../../../../src/store/redis/url.ts";

const [mode, url, namespace, agent, ...rest] = process.argv.slice(2);
const print = (line: string) => writeSync(1, line + "\n");
const now = () => performance.timeOrigin + performance.now();

async function sendToFiles(): Promise<void> {
  const { appendMessage } = await import("../../../../src/store/file/mailbox.ts");
  const [count, tag] = rest;
  for (let i = 0; i < Number(count); i++) {
    const message = createMessage(tag!, agent!, `${tag}-${i}`);
    if (process.env.WORKER_STAMP) print(`T ${now()}`);
    await appendMessage(url!, message);
    print(`${message.id} ${message.message}`);
  }
  print(`E ${now()}`);
}

async function useRedis(): Promise<void> {
  const store = new RedisStore({
    address: parseServerUrl(url!),
    namespace: namespace!,
    host: process.env.WORKER_HOST ?? "host-a",
    leaseMs: process.env.WORKER_LEASE_MS ? Number(process.env.WORKER_LEASE_MS) : undefined,
    // Patient: the workers run many at once on a loaded machine, and a slow answer is no failure of delivery.
    timeoutMs: 60_000,
  });
  if (mode === "send") {
    const [count, tag] = rest;
    await store.countUnread(agent!);
    for (let i = 0; i < Number(count); i++) {
      const message = createMessage(tag!, agent!, `${tag}-${i}`);
      if (process.env.WORKER_STAMP) print(`T ${now()}`);
      await store.append(message);
      print(`${message.id} ${message.message}`);
    }
    print(`E ${now()}`);
    store.close();
  } else if (mode === "receive") {
    const watch = await store.watch([agent!]);
    for (;;) {
      const taken = await store.take(agent!, async (message) => {
        print(`S ${message.id} ${message.message}`);
        if (pauseMs > 0) await sleep(pauseMs);
      });
      if (!taken) {
        await watch.changed(5_000);
        continue;
      }
      print(`A ${taken.id}`);
      if (taken.message === "STOP") break;
    }
    watch.close();
    store.close();
  } else if (mode === "hang") {
    const taken = await store.take(agent!, async (message) => {
      print(`C ${message.id} ${message.message}`);
      await new Promise(() => setInterval(() => {}, 60_000));
    });
    if (!taken) print("C none");
    setInterval(() => {}, 60_000);
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
}

const pauseMs = Number(process.env.WORKER_PAUSE_MS ?? 0);
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
await (mode === "file-send" ? sendToFiles() : useRedis());
