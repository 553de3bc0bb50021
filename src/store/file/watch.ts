import { watch, type FSWatcher } from "node:fs";

export interface StoreWatcher {
  /** Resolves on the next change to a watched name, or after `ms`, whichever comes first. */
  changed(ms: number): Promise<void>;
  close(): void;
}

/**
 * Watches the store's directory for changes to files whose names pass `interesting`. Watching is best effort
 * (inotify can be unavailable or overflow): callers also poll, so a missed event only delays, never silences.
 */
export function watchStore(root: string, interesting: (filename: string) => boolean): StoreWatcher {
  let wake: (() => void) | null = null;
  let pending = false;
  let watcher: FSWatcher | null = null;
  try {
    watcher = watch(root, { persistent: true }, (_event, filename) => {
      if (filename !== null && !interesting(String(filename))) return;
      pending = true;
      wake?.();
    });
    watcher.on("error", () => {
      watcher?.close();
      watcher = null;
    });
  } catch {
    watcher = null;
  }
  return {
    changed(ms) {
      if (pending) {
        pending = false;
        return Promise.resolve();
      }
      return new Promise((done) => {
        const timer = setTimeout(finish, ms);
        function finish() {
          clearTimeout(timer);
          wake = null;
          pending = false;
          done();
        }
        wake = finish;
      });
    },
    close() {
      watcher?.close();
      watcher = null;
      wake?.();
    },
  };
}
