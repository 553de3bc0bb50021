/**
 * Exactly-once FIFO delivery with many processes on "several hosts" (worker processes with different host names)
 * sharing one real redis-server: concurrent senders and receivers, receivers SIGKILLed while showing a message or at random,
 * and a wait woken by a send from another process.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { chunksOf } from "../../../support/byte-stream.ts";
import { RedisServer } from "../../../support/redis-server.ts";
import { NO_FALLBACK_MS, woken } from "../../../support/wait.ts";
import { appendAll, drain, freshNamespace, mail, storeAt } from "./helpers.ts";

const WORKER = join(import.meta.dir, "worker.ts");
let server: RedisServer;
/** Every worker started, so a failed test leaves none running. */
const started: ReturnType<typeof Bun.spawn>[] = [];

beforeAll(async () => {
  server = await RedisServer.start();
});

afterAll(async () => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await server?.remove();
});

interface Worker {
  child: ReturnType<typeof Bun.spawn>;
  /** Lines printed so far (complete lines only). */
  lines: string[];
  /** Resolves with the exit code once the process ended and its output was read. */
  done: Promise<number | null>;
  /** Resolves with the first line that starts with `prefix`. */
  line(prefix: string): Promise<string>;
}

function startWorker(args: string[], env: Record<string, string> = {}): Worker {
  const child = Bun.spawn([process.execPath, WORKER, ...args], {
    env: { ...process.env, ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "inherit",
  });
  started.push(child);
  const lines: string[] = [];
  const waiters: { prefix: string; resolve: (line: string) => void }[] = [];
  const reading = (async () => {
    let buffer = "";
    for await (const chunk of chunksOf(child.stdout as ReadableStream<Uint8Array>)) {
      buffer += new TextDecoder().decode(chunk);
      let newline: number;
      while ((newline = buffer.indexOf("\n")) !== -1) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        lines.push(line);
        for (const waiter of waiters.splice(0)) {
          if (line.startsWith(waiter.prefix)) waiter.resolve(line);
          else waiters.push(waiter);
        }
      }
    }
  })();
  return {
    child,
    lines,
    done: reading.then(() => child.exited).then(() => child.exitCode),
    line(prefix) {
      const seen = lines.find((line) => line.startsWith(prefix));
      return seen !== undefined ? Promise.resolve(seen) : new Promise((resolve) => waiters.push({ prefix, resolve }));
    },
  };
}

/** Every `S <id> <body>` line of the given workers, in each worker's order. */
function shown(workers: Worker[]): { worker: number; id: string; body: string }[] {
  return workers.flatMap((worker, index) =>
    worker.lines
      .filter((line) => line.startsWith("S "))
      .map((line) => {
        const [, id, body] = line.split(" ");
        return { worker: index, id: id!, body: body! };
      }),
  );
}

describe("concurrent senders and receivers", () => {
  test("8 senders × 100 on two hosts with 6 receivers: every id delivered exactly once, each sender's mail in order", async () => {
    const namespace = freshNamespace("8x100");
    const host = (i: number) => ({ WORKER_HOST: i % 2 ? "host-b" : "host-a" });
    const receivers = Array.from({ length: 6 }, (_, i) => startWorker(["receive", server.url, namespace, "bob"], host(i)));
    const senders = Array.from({ length: 8 }, (_, i) => startWorker(["send", server.url, namespace, "bob", "100", `s${i}`], host(i)));
    expect(await Promise.all(senders.map((sender) => sender.done))).toEqual(Array(8).fill(0));
    const sent = senders.flatMap((sender) => sender.lines.filter((line) => !/^[TE] /.test(line)).map((line) => line.split(" ")[0]!));
    expect(sent).toHaveLength(800);

    const stopper = storeAt(server.url, namespace);
    await appendAll(
      stopper,
      Array.from({ length: 6 }, () => mail("test", "bob", "STOP")),
    );
    expect(await Promise.all(receivers.map((receiver) => receiver.done))).toEqual(Array(6).fill(0));
    expect(await stopper.countUnread("bob")).toBe(0);
    stopper.close();

    const deliveries = shown(receivers).filter((delivery) => delivery.body !== "STOP");
    expect(deliveries.map((delivery) => delivery.id).sort()).toEqual([...sent].sort());
    for (let worker = 0; worker < 6; worker++) {
      const last = new Map<string, number>();
      for (const delivery of deliveries.filter((entry) => entry.worker === worker)) {
        const [tag, n] = delivery.body.split("-");
        expect(Number(n)).toBeGreaterThan(last.get(tag!) ?? -1);
        last.set(tag!, Number(n));
      }
    }
    const perReceiver = receivers.map((_, worker) => deliveries.filter((delivery) => delivery.worker === worker).length);
    console.error(`8x100 with 6 receivers: deliveries per receiver ${perReceiver.join(", ")}`);
  });
});

describe("receivers that die", () => {
  test("receivers SIGKILLed while showing a message on this host: their leases are broken at once and the mail stays in order", async () => {
    const namespace = freshNamespace("killed");
    const store = storeAt(server.url, namespace);
    try {
      await appendAll(
        store,
        Array.from({ length: 10 }, (_, i) => mail("alice", "bob", `m${i}`)),
      );
      const hanging: Worker[] = [];
      for (let i = 0; i < 3; i++) {
        hanging.push(startWorker(["hang", server.url, namespace, "bob"]));
        expect(await hanging[i]!.line("C ")).toEndWith(` m${i}`);
      }
      for (const worker of hanging) {
        worker.child.kill("SIGKILL");
        await worker.done;
      }
      expect(await store.countUnread("bob")).toBe(10);
      expect(await drain(store, "bob")).toEqual(Array.from({ length: 10 }, (_, i) => `m${i}`));
      // A new receiver on this host breaks a dead one's lease rather than waiting out its lease.
      await store.append(mail("alice", "bob", "again"));
      const first = startWorker(["hang", server.url, namespace, "bob"]);
      expect(await first.line("C ")).toEndWith(" again");
      first.child.kill("SIGKILL");
      await first.done;
      const second = startWorker(["hang", server.url, namespace, "bob"]);
      expect(await second.line("C ")).toEndWith(" again");
      second.child.kill("SIGKILL");
      await second.done;
    } finally {
      store.close();
    }
  });

  test("a receiver killed on another host: later mail overtakes the message it was showing only until the lease runs out, then it comes next", async () => {
    const namespace = freshNamespace("killed-elsewhere");
    const store = storeAt(server.url, namespace);
    try {
      // A long lease: while it is live, the message is not takeable from here (its holder's death cannot be seen).
      await appendAll(store, [mail("alice", "bob", "held"), mail("alice", "bob", "later")]);
      const longLease = startWorker(["hang", server.url, namespace, "bob"], { WORKER_HOST: "host-b", WORKER_LEASE_MS: "600000" });
      expect(await longLease.line("C ")).toEndWith(" held");
      longLease.child.kill("SIGKILL");
      await longLease.done;
      expect(await drain(store, "bob")).toEqual(["later"]);
      expect(await store.countUnread("bob")).toBe(1);

      // A short lease: once it runs out, the message is the oldest takeable one again, ahead of newer mail.
      await store.append(mail("alice", "carol", "held briefly"));
      const shortLease = startWorker(["hang", server.url, namespace, "carol"], { WORKER_HOST: "host-b", WORKER_LEASE_MS: "200" });
      expect(await shortLease.line("C ")).toEndWith(" held briefly");
      shortLease.child.kill("SIGKILL");
      await shortLease.done;
      // Once the lease runs out the message is takeable again, and comes before mail sent after that.
      const watch = await store.watch(["carol"]);
      let shown: string | null = null;
      const showAndSendNewer = async (message: { message: string }) => {
        shown = message.message;
        await store.append(mail("alice", "carol", "newer"));
      };
      while (!(await store.take("carol", showAndSendNewer))) await watch.changed(50);
      watch.close();
      expect(shown!).toBe("held briefly");
      expect(await drain(store, "carol")).toEqual(["newer"]);
    } finally {
      store.close();
    }
  });

  test("receivers killed while receiving: each message acknowledged exactly once, shown again only after a kill", async () => {
    const namespace = freshNamespace("random-kills");
    const store = storeAt(server.url, namespace);
    const bodies = Array.from({ length: 600 }, (_, i) => `r-${i}`);
    await appendAll(
      store,
      bodies.map((body) => mail("alice", "bob", body)),
    );
    const killed: Worker[] = [];
    const all: Worker[] = [];
    const spawnReceiver = () => {
      const worker = startWorker(["receive", server.url, namespace, "bob"], { WORKER_PAUSE_MS: "2" });
      all.push(worker);
      return worker;
    };
    let live = [spawnReceiver(), spawnReceiver(), spawnReceiver()];
    // Stop killing while plenty is left, so the receiver picked next surely has something to show.
    for (let round = 0; round < 12 && (await store.countUnread("bob")) > 50; round++) {
      // Kill a receiver once it has shown something, so every kill lands mid-delivery rather than at start-up.
      const victim = live[round % live.length]!;
      await victim.line("S ");
      victim.child.kill("SIGKILL");
      await victim.done;
      killed.push(victim);
      live = live.map((worker) => (worker === victim ? spawnReceiver() : worker));
    }
    await appendAll(
      store,
      live.map(() => mail("test", "bob", "STOP")),
    );
    expect(await Promise.all(live.map((worker) => worker.done))).toEqual([0, 0, 0]);
    expect(await store.countUnread("bob")).toBe(0);

    // Every message shown; none acknowledged twice; a showing without an acknowledgement only by a killed receiver
    // (which may have died just after acknowledging, before saying so).
    const shownBodies = new Set<string>();
    const acknowledgements = new Map<string, number>();
    let repeats = 0;
    for (const worker of all) {
      const acknowledged = new Set(worker.lines.filter((line) => line.startsWith("A ")).map((line) => line.slice(2)));
      for (const line of worker.lines.filter((entry) => entry.startsWith("S "))) {
        const [, id, body] = line.split(" ");
        if (body === "STOP") continue;
        shownBodies.add(body!);
        if (acknowledged.has(id!)) acknowledgements.set(body!, (acknowledgements.get(body!) ?? 0) + 1);
        else {
          expect(killed).toContain(worker);
          repeats++;
        }
      }
    }
    expect([...shownBodies].sort()).toEqual([...bodies].sort());
    expect([...acknowledgements.values()].filter((count) => count > 1)).toEqual([]);
    expect(await store.unread("bob")).toEqual([]);
    expect((await store.mail("bob")).filter((record) => !record.message.read_flag)).toEqual([]);
    store.close();
    console.error(`random kills: ${killed.length} receivers killed, ${repeats} showing(s) not acknowledged, ${bodies.length} delivered`);
  });
});

describe("waking across processes", () => {
  test("a wait wakes on a send from another process", async () => {
    const namespace = freshNamespace("wake");
    // Its lease, which caps a wait, is an hour: only the sender's bell can end the wait within woken's bound.
    const store = storeAt(server.url, namespace, { leaseMs: NO_FALLBACK_MS });
    try {
      const watch = await store.watch(["bob"]);
      let at = 0;
      const woke = watch.changed(NO_FALLBACK_MS).then(() => (at = performance.timeOrigin + performance.now()));
      const sender = startWorker(["send", server.url, namespace, "bob", "1", "wake"], { WORKER_STAMP: "1" });
      await woken("a wait on bob, after another process sent to bob", woke);
      expect(await sender.done).toBe(0);
      expect(await drain(store, "bob")).toEqual(["wake-0"]);
      const sendStarted = Number((await sender.line("T ")).slice(2));
      console.error(`redis wake latency across processes: ${(at - sendStarted).toFixed(2)} ms from the start of the send`);
      watch.close();
    } finally {
      store.close();
    }
  });
});
