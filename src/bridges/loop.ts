/**
 * `bridge run`: syncs on every change in a bridged directory, and at least every sweep, until stopped. Passes that
 * find another process syncing skip and retry shortly (that process does the work); a file left alone is logged
 * once; a failure is logged once until it changes, and never ends the loop. Also the mailman's share (bridgeSyncer:
 * one pass per sweep) and the watches on the peers' directories.
 */
import { join } from "node:path";
import { AgentmailError } from "../mail/errors.ts";
import { inboxesDir } from "./claude-team/paths.ts";
import { bridgesDir, configPath, readBridges } from "./config.ts";
import type { SyncReport } from "./sync.ts";
import type { Store } from "../store/store.ts";
import { existsSync, type FSWatcher, watch } from "node:fs";

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
  // The sync code (and YAML with it) loads on the first pass: the mailman of a store without bridges never loads it.
  const { exportedLine, importedLine, leftLine, syncBridges } = await import("./sync.ts");
  let report: SyncReport;
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

/**
 * Watching the bridged directories for `bridge run`: one fs.watch per directory (recursive for FEAT-124, whose
 * mailboxes are subdirectories), any event wakes the loop. Best effort, as the store's own watch: inotify can be
 * missing or overflow, so the loop also sweeps on a timer and a lost event only delays a sync.
 */
export interface WatchTarget {
  dir: string;
  recursive: boolean;
  /** Wake only for this file name (the loop's own lock and ledger churn in the store must not wake it). */
  only?: string;
  /** Wake only for names like this (a team's inboxes: not the lead's, not lock directories or temp files). */
  matching?: RegExp;
}

export class DirWatcher {
  private watchers: FSWatcher[] = [];
  private key = "";
  private pending = false;
  private wake: (() => void) | null = null;

  /** Watches exactly `targets` (directories that do not exist yet are picked up by a later call). */
  update(targets: WatchTarget[]): void {
    const key = JSON.stringify(targets);
    if (key === this.key && this.watchers.length > 0) return;
    this.closeWatchers();
    this.key = key;
    for (const target of targets) {
      try {
        const watcher = watch(target.dir, { persistent: true, recursive: target.recursive }, (_event, name) => {
          if (name !== null && target.only !== undefined && String(name) !== target.only) return;
          if (name !== null && target.matching !== undefined && !target.matching.test(String(name))) return;
          this.poke();
        });
        watcher.on("error", () => watcher.close());
        this.watchers.push(watcher);
      } catch {
        // Missing or unwatchable: the sweep covers it, and the next update tries again.
        this.key = "";
      }
    }
  }

  poke(): void {
    this.pending = true;
    this.wake?.();
  }

  /** Resolves on the next event, or after `ms`. */
  changed(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((done) => {
      const timer = setTimeout(finish, ms);
      const self = this;
      function finish() {
        clearTimeout(timer);
        self.wake = null;
        self.pending = false;
        done();
      }
      this.wake = finish;
    });
  }

  private closeWatchers(): void {
    for (const watcher of this.watchers) watcher.close();
    this.watchers = [];
  }

  close(): void {
    this.closeWatchers();
    this.wake?.();
  }
}

/**
 * The mailman's share of bridging: one sync pass per sweep, when the store has bridges. Costs one stat when it has
 * none (the sync code and YAML load only then), never throws, and logs a failure once until it changes.
 */
export function bridgeSyncer(root: string, store: Store, log: (line: string) => void): () => Promise<void> {
  let lastFailure: string | null = null;
  const totals = { passes: 0, imported: 0, exported: 0 };
  return async () => {
    try {
      if (!existsSync(configPath(root))) return;
      await loggedPass(root, store, (line) => log(`bridges: ${line}`), totals);
      lastFailure = null;
    } catch (error) {
      const failure = error instanceof Error ? error.message : String(error);
      if (failure !== lastFailure) log(`bridges: sync failed: ${failure}`);
      lastFailure = failure;
    }
  };
}
