/**
 * Watching the bridged directories for `bridge run`: one fs.watch per directory (recursive for FEAT-124, whose
 * mailboxes are subdirectories), any event wakes the loop. Best effort, as the store's own watch: inotify can be
 * missing or overflow, so the loop also sweeps on a timer and a lost event only delays a sync.
 */
import { watch, type FSWatcher } from "node:fs";

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
