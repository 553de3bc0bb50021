/**
 * The mailman's share of bridging: one sync pass per sweep, when the store has bridges. Costs one stat when it has
 * none (the sync code and YAML load only then), never throws, and logs a failure once until it changes.
 */
import { existsSync } from "node:fs";
import type { Store } from "../store/store.ts";
import { configPath } from "./store-files.ts";

export function bridgeSyncer(root: string, store: Store, log: (line: string) => void): () => Promise<void> {
  let lastFailure: string | null = null;
  const totals = { passes: 0, imported: 0, exported: 0 };
  return async () => {
    try {
      if (!existsSync(configPath(root))) return;
      const { loggedPass } = await import("./run-loop.ts");
      await loggedPass(root, store, (line) => log(`bridges: ${line}`), totals);
      lastFailure = null;
    } catch (error) {
      const failure = error instanceof Error ? error.message : String(error);
      if (failure !== lastFailure) log(`bridges: sync failed: ${failure}`);
      lastFailure = failure;
    }
  };
}
