/**
 * The views (`watch`, `web`) a person runs on this machine against one store: each leaves a mark while it runs, a
 * file named for the store, the person and its process (pid and start time), in a directory only the user can enter.
 * The person is registered offline only when the last of them ends; the mark of a process that is gone (killed)
 * counts for nothing. Views on other hosts (a Redis store) are not seen here: a view that finds its person set
 * offline while it runs registers them again (actions/room.ts).
 */
import { createHash } from "node:crypto";
import { readdirSync, rmdirSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { currentProcess, HOSTNAME, isGone } from "../store/durable/process-identity.ts";
import { privateDir } from "./private-dir.ts";

type Env = Record<string, string | undefined>;

const DIR = "agentmail-views";

export interface ViewMark {
  /** Removes the mark; true when no other view of the person on this store still runs here. */
  leave(): boolean;
}

/** Marks a view of `name` on the store labelled `store` as running (see the head of this file). */
export function enterView(env: Env, store: string, name: string): ViewMark {
  const dir = privateDir(env, DIR);
  // Without a private directory, each view is taken for the only one (the behaviour before marks).
  if (dir === null) return { leave: () => true };
  const key = createHash("sha256").update(`${store}\n${name}`).digest("hex").slice(0, 32);
  const self = currentProcess();
  // A view of its own even within one process (the tests open two).
  const nonce = crypto.getRandomValues(new Uint32Array(1))[0]!.toString(36);
  const mark = join(dir, `${key}.${self.pid}.${self.start ?? ""}.${nonce}`);
  try {
    writeFileSync(mark, "", { mode: 0o600 });
  } catch {
    return { leave: () => true };
  }
  othersLive(dir, key);
  return {
    leave() {
      try {
        unlinkSync(mark);
      } catch {
        // Removed already.
      }
      const others = othersLive(dir, key);
      try {
        rmdirSync(dir);
      } catch {
        // Other marks are there: theirs to remove.
      }
      return !others;
    },
  };
}

/** Whether a mark of `key` names a live process; the marks of processes that are gone (killed views) are removed. */
function othersLive(dir: string, key: string): boolean {
  let entries: string[] = [];
  try {
    entries = readdirSync(dir);
  } catch {
    return false;
  }
  let live = false;
  for (const entry of entries) {
    const [, pid, start] = entry.split(".");
    if (pid === undefined) continue;
    if (!isGone({ pid: Number(pid), host: HOSTNAME, start: start || null })) {
      if (entry.startsWith(`${key}.`)) live = true;
      continue;
    }
    try {
      unlinkSync(join(dir, entry));
    } catch {
      // Another view cleaned it.
    }
  }
  return live;
}
