/**
 * `bridge run`: syncs on every change in a bridged directory, and at least every sweep, until stopped. Passes that
 * find another process syncing skip and retry shortly (that process does the work); a file left alone is logged
 * once; a failure is logged once until it changes, and never ends the loop.
 */
import { join } from "node:path";
import { AgentmailError } from "../core/errors.ts";
import { inboxesDir } from "./claude-team/paths.ts";
import { readBridges } from "./config.ts";
import { exportedLine, importedLine, leftLine } from "./report-lines.ts";
import { bridgesDir } from "./store-files.ts";
import { syncBridges } from "./sync.ts";
import { DirWatcher, type WatchTarget } from "./watch-dirs.ts";
import type { Store } from "../store/store.ts";

export interface BridgeLoopOptions {
  root: string;
  store: Store;
  sweepMs: number;
  log: (line: string) => void;
  signal: AbortSignal;
}

export interface BridgeLoopTotals {
  passes: number;
  imported: number;
  exported: number;
}

const BUSY_RETRY_MS = 250;
/** A member's inbox in a team's `inboxes/`, but not the lead's (Claude reads that one) nor locks and temp files. */
const MEMBER_INBOX = /^(?!team-lead\.json$)[^.]+\.json$/;
const SETTLE_RETRY_MS = 200;

function targets(root: string): WatchTarget[] {
  const list: WatchTarget[] = [{ dir: bridgesDir(root), recursive: false, only: "config.json" }];
  for (const bridge of readBridges(root)) {
    if (bridge.kind === "feat124") list.push({ dir: bridge.dir, recursive: true });
    else if (bridge.kind === "roo") list.push({ dir: bridge.dir, recursive: false });
    // A team's lead deletes its inboxes when it exits: its members' mail is imported as soon as it is written.
    else if (bridge.kind === "claude-team") list.push({ dir: inboxesDir(bridge.dir), recursive: false, matching: MEMBER_INBOX });
    else list.push({ dir: join(bridge.dir, "outbox"), recursive: false });
  }
  return list;
}

/** One pass, logged; returns how soon to look again when sooner than the sweep (busy, or files still being written). */
export async function loggedPass(
  root: string,
  store: Store,
  log: (line: string) => void,
  totals: BridgeLoopTotals,
): Promise<number | null> {
  let report: Awaited<ReturnType<typeof syncBridges>>;
  try {
    report = await syncBridges(root, store, { lockTimeoutMs: 0, settleWaitMs: 0 });
  } catch (error) {
    if (error instanceof AgentmailError && error.code === "locked") return BUSY_RETRY_MS;
    throw error;
  }
  totals.passes++;
  for (const bridge of report.bridges) {
    for (const entry of bridge.imported) log(importedLine(bridge.name, entry));
    for (const entry of bridge.exported) log(exportedLine(bridge.name, entry));
    totals.imported += bridge.imported.length;
    totals.exported += bridge.exported.length;
  }
  for (const entry of report.newlyLeft) log(leftLine(entry));
  return report.deferred > 0 ? SETTLE_RETRY_MS : null;
}

export async function runBridgeLoop(options: BridgeLoopOptions): Promise<BridgeLoopTotals> {
  const { root, store, log, signal } = options;
  const totals: BridgeLoopTotals = { passes: 0, imported: 0, exported: 0 };
  const watcher = new DirWatcher();
  const stop = () => watcher.close();
  signal.addEventListener("abort", stop);
  let lastFailure: string | null = null;
  log(`syncing the bridges of ${root}`);
  try {
    while (!signal.aborted) {
      let again: number | null = null;
      try {
        watcher.update(targets(root));
        again = await loggedPass(root, store, log, totals);
        lastFailure = null;
      } catch (error) {
        const failure = error instanceof Error ? error.message : String(error);
        if (failure !== lastFailure) log(`sync failed: ${failure}`);
        lastFailure = failure;
      }
      if (signal.aborted) break;
      await watcher.changed(again ?? options.sweepMs);
    }
  } finally {
    signal.removeEventListener("abort", stop);
    watcher.close();
  }
  return totals;
}
