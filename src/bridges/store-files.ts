/**
 * Where bridges keep their own state in the store: `<root>/.bridges/`, a dot-directory, so no name can make it a
 * mailbox and the mailman's watch on the store does not see it change.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";

export const bridgesDir = (root: string) => join(root, ".bridges");
export const configPath = (root: string) => join(bridgesDir(root), "config.json");
export const configLockPath = (root: string) => join(bridgesDir(root), "config.lock");
/** Serializes sync passes (imports, Roo queue flushes) across `bridge sync`, `bridge run` and the mailman. */
export const syncLockPath = (root: string) => join(bridgesDir(root), "sync.lock");
export const ledgerPath = (root: string) => join(bridgesDir(root), "ledger.jsonl");
export const sentLogPath = (root: string) => join(bridgesDir(root), "sent.jsonl");
export const problemsPath = (root: string) => join(bridgesDir(root), "problems.json");
export const rooQueueDir = (root: string) => join(bridgesDir(root), "roo-queue");
export const rooQueueLockPath = (root: string) => join(bridgesDir(root), "roo-queue.lock");

export function ensureBridgesDir(root: string): string {
  mkdirSync(bridgesDir(root), { recursive: true, mode: 0o700 });
  return bridgesDir(root);
}
