import type { MailWatch } from "../store.ts";
import type { Connection } from "./connection.ts";

/** The newest entry id of each stream in an XREAD reply: RESP3 gives an object keyed by stream, RESP2 an array. */
function newestIds(reply: unknown): Map<string, string> {
  const newest = new Map<string, string>();
  const streams: [string, unknown[]][] = Array.isArray(reply)
    ? (reply as [string, unknown[]][])
    : Object.entries((reply ?? {}) as Record<string, unknown[]>);
  for (const [key, entries] of streams) {
    const last = entries[entries.length - 1] as [string, unknown] | undefined;
    if (last) newest.set(key, last[0]);
  }
  return newest;
}

/**
 * Waits on bells (streams of one entry, re-added on every ring: scripts.ts) with a blocking XREAD on a connection of
 * its own, since a blocking read holds up every other command on its connection. The newest id of each bell is
 * taken when the watch is made, so a ring between then and the first wait still wakes it. A wait never blocks longer
 * than `capMs` (a lease: a lease that runs out rings no bell, and a waiter must look again then).
 */
export async function watchBells(main: Connection, bells: readonly string[], capMs: number): Promise<MailWatch> {
  const newest = (await Promise.all(bells.map((key) => main.command("XREVRANGE", [key, "+", "-", "COUNT", "1"])))) as [string, unknown][][];
  const seen = new Map(bells.map((key, i) => [key, newest[i]![0]?.[0] ?? "0-0"]));
  const blocker = main.sibling();
  let closed = false;
  let finish: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return {
    async changed(ms) {
      if (closed) return;
      const blockMs = Math.max(1, Math.ceil(Math.min(ms, capMs)));
      const args = ["BLOCK", String(blockMs), "STREAMS", ...seen.keys(), ...seen.values()];
      try {
        const reply = await Promise.race([blocker.command("XREAD", args, blockMs), done.then(() => null)]);
        for (const [key, id] of newestIds(reply)) seen.set(key, id);
      } catch (error) {
        if (!closed) throw error;
      }
    },
    close() {
      if (closed) return;
      closed = true;
      finish();
      blocker.close();
    },
  };
}
