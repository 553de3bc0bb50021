/**
 * The stores this process has open and keeps for its later calls (an MCP server or a mailman runs many), and the one
 * place that closes them all when the command ends. Kept apart from open.ts so the CLI can close them without
 * loading any engine.
 */
import type { Store } from "./store.ts";

const kept = new Map<string, Promise<Store>>();

/** The store kept under `key`, opened by `open` the first time (a failed open is not kept: the next call tries again). */
export function keptStore(key: string, open: () => Promise<Store>): Promise<Store> {
  let store = kept.get(key);
  if (!store) {
    store = open();
    kept.set(key, store);
    store.catch(() => kept.delete(key));
  }
  return store;
}

/** Closes every store kept so far: a command's last step, so its process can exit. */
export async function closeStores(): Promise<void> {
  const stores = [...kept.values()];
  kept.clear();
  for (const store of await Promise.allSettled(stores)) if (store.status === "fulfilled") store.value.close();
}
