/**
 * The stores this process has open and keeps for its later calls (an MCP server or a mailman runs many), and the one
 * place that closes them all when the command ends. Kept apart from open.ts so the CLI can close them without
 * loading any engine.
 */
import type { Store } from "./store.ts";

const kept = new Map<string, Promise<Store>>();

/**
 * What decides which kept store an invocation means: the server, the namespace (or the repository it comes from),
 * the host, the timeout, and the local directory (AGENTMAIL_DIR, GIT_DIR) its localRoot is.
 */
export function keptStoreKey({ cwd, env }: { cwd: string; env: Record<string, string | undefined> }): string {
  const { AGENTMAIL_URL, AGENTMAIL_NAMESPACE, AGENTMAIL_HOST, AGENTMAIL_REDIS_TIMEOUT, AGENTMAIL_DIR, GIT_DIR } = env;
  return JSON.stringify([AGENTMAIL_URL, AGENTMAIL_NAMESPACE, AGENTMAIL_HOST, AGENTMAIL_REDIS_TIMEOUT, AGENTMAIL_DIR, GIT_DIR, cwd]);
}

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
