/**
 * Conditions that a waiter really waits: it has made its look, found nothing, and blocks on its watch until a wake.
 * A test of a wake sends only once one holds (wait.ts's waitFor), so it checks the wake and not the first look:
 * `watchWaits` in this process, `waitsOnItsWatch` for a process on the file store, and for one on Redis the server's
 * count of blocked clients (`RedisServer.blockedClients`: the wait is a blocking XREAD, made only after the look).
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { FileStore } from "../../src/store/file/file-store.ts";
import type { MailWatch } from "../../src/store/store.ts";

/**
 * Counts the waits begun on the file store's watches in this process: a receive (or an MCP wait) that calls
 * `changed` has made its look, found nothing, and now blocks until a wake. `restore` puts the store back.
 */
export function watchWaits(): { readonly begun: number; restore(): void } {
  const original = FileStore.prototype.watch;
  let begun = 0;
  FileStore.prototype.watch = async function (this: FileStore, ...args: Parameters<FileStore["watch"]>): Promise<MailWatch> {
    const watch = await original.apply(this, args);
    return {
      changed(ms) {
        begun++;
        return watch.changed(ms);
      },
      close: () => watch.close(),
    };
  };
  return {
    get begun() {
      return begun;
    },
    restore() {
      FileStore.prototype.watch = original;
    },
  };
}

/** How many inotify watches process `pid` holds (the file store's watch is one or two). */
export function inotifyWatches(pid: number): number {
  let watches = 0;
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        if (!readlinkSync(`/proc/${pid}/fd/${fd}`).includes("inotify")) continue;
        watches += readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8")
          .split("\n")
          .filter((line) => line.startsWith("inotify wd:")).length;
      } catch {
        // Closed meanwhile.
      }
    }
  } catch {
    // Gone.
  }
  return watches;
}

/** The state letter of every thread of `pid` (R running, S asleep, D in I/O…); none once it is gone. */
function threadStates(pid: number): string[] {
  const states: string[] = [];
  try {
    for (const thread of readdirSync(`/proc/${pid}/task`)) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${thread}/stat`, "utf8");
        states.push(stat.slice(stat.lastIndexOf(")") + 2)[0]!);
      } catch {
        // Ended meanwhile.
      }
    }
  } catch {
    // Gone.
  }
  return states;
}

/**
 * Whether process `pid` (the binary, on the file store) waits on its watch: it holds more inotify watches than
 * `before` (the watch is made just before the first look) and every one of its threads is asleep, so the look is
 * over (a look runs on the main thread, or on a pool thread the main one waits for; a loaded machine leaves them
 * runnable, never asleep). A process asleep on a timer before its look, behind a lock someone holds, would pass for
 * waiting: the tests that use this hold no lock of the waiter's.
 */
export function waitsOnItsWatch(pid: number, before = 0): boolean {
  if (inotifyWatches(pid) <= before) return false;
  const states = threadStates(pid);
  return states.length > 0 && states.every((state) => state === "S");
}
