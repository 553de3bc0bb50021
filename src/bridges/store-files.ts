/**
 * Where bridges keep their own state in the store: `<root>/.bridges/`, a dot-directory, so no name can make it a
 * mailbox and the mailman's watch on the store does not see it change.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { BRIDGE_FILES, BRIDGES_DIR } from "../store/layout.ts";

export const bridgesDir = (root: string) => join(root, BRIDGES_DIR);
export const configPath = (root: string) => join(bridgesDir(root), BRIDGE_FILES.config);
export const configLockPath = (root: string) => join(bridgesDir(root), BRIDGE_FILES.configLock);
/** Serializes sync passes (imports, Roo queue flushes) across `bridge sync`, `bridge run` and the mailman. */
export const syncLockPath = (root: string) => join(bridgesDir(root), BRIDGE_FILES.syncLock);
export const ledgerPath = (root: string) => join(bridgesDir(root), BRIDGE_FILES.ledger);
export const sentLogPath = (root: string) => join(bridgesDir(root), BRIDGE_FILES.sentLog);
export const problemsPath = (root: string) => join(bridgesDir(root), BRIDGE_FILES.problems);
export const rooQueueDir = (root: string) => join(bridgesDir(root), BRIDGE_FILES.rooQueue);
export const rooQueueLockPath = (root: string) => join(bridgesDir(root), BRIDGE_FILES.rooQueueLock);

export function ensureBridgesDir(root: string): string {
  mkdirSync(bridgesDir(root), { recursive: true, mode: 0o700 });
  return bridgesDir(root);
}
