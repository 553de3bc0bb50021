/**
 * The bridges of a store, kept in `<root>/.bridges/config.json` so every worktree sees the same ones. Written whole
 * (temp, fsync, rename) under a lock; directories are stored absolute, as resolved when the bridge was added. Also
 * where bridges keep the rest of their state in the store (bridgesDir and the paths below it).
 */
import { mkdirSync, readFileSync } from "node:fs";
import { AgentmailError } from "../mail/errors.ts";
import { displayName } from "../mail/names.ts";
import { replaceFile } from "../store/durable/files.ts";
import { withLock } from "../store/durable/lock.ts";
import type { BridgeKind } from "./address.ts";
import { join } from "node:path";
import { BRIDGE_FILES, BRIDGES_DIR } from "../store/local/layout.ts";

export interface BridgeConfig {
  /** `feat124`, `roo`, the D-Mail endpoint's name, or the Claude Code team's name. */
  name: string;
  kind: BridgeKind;
  /** Absolute: the FEAT-124 `.mail` directory, the Roo mailbox directory, the D-Mail tool's directory, or the team's. */
  dir: string;
  /** How paths under `dir` are shown (relative to the repository's top when inside it): `.mail`, `.roo/mailbox`. */
  label: string;
  /** D-Mail: the recipient for each kind. */
  routes?: Record<string, string>;
  /** D-Mail: the recipient for any other kind. */
  to?: string;
  /** Claude Code team: the agentmail agent (window) its lead runs in, when known: its mail when the lead does not poll. */
  lead?: string;
  /** Claude Code team: member name → the agentmail recipient of its inbox (`--member`, and `bridge join --as`). */
  members?: Record<string, string>;
}

interface BridgesFile {
  bridges: BridgeConfig[];
}

function isBridge(value: unknown): value is BridgeConfig {
  const bridge = value as BridgeConfig;
  return (
    typeof bridge === "object" &&
    bridge !== null &&
    typeof bridge.name === "string" &&
    typeof bridge.dir === "string" &&
    typeof bridge.label === "string" &&
    ["feat124", "roo", "dmail", "claude-team"].includes(bridge.kind)
  );
}

/** The configured bridges; none when the file does not exist. A file that does not parse is an error saying so. */
export function readBridges(root: string): BridgeConfig[] {
  let text: string;
  try {
    text = readFileSync(configPath(root), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AgentmailError("io", `${configPath(root)} is not valid JSON; fix it, or remove it and add the bridges again`);
  }
  const bridges = (value as BridgesFile | null)?.bridges;
  if (!Array.isArray(bridges) || !bridges.every(isBridge)) {
    throw new AgentmailError("io", `${configPath(root)} does not hold a list of bridges; fix it, or remove it and add the bridges again`);
  }
  return bridges;
}

/** Changes the configuration under its lock: `change` gets the current bridges and returns the new ones. */
export async function updateBridges(root: string, change: (bridges: BridgeConfig[]) => BridgeConfig[]): Promise<BridgeConfig[]> {
  ensureBridgesDir(root);
  return withLock(configLockPath(root), () => {
    const next = change(readBridges(root));
    replaceFile(configPath(root), JSON.stringify({ bridges: next }, null, 2) + "\n");
    return next;
  });
}

export function findBridge(bridges: BridgeConfig[], kind: BridgeKind, name: string): BridgeConfig {
  const bridge = bridges.find((candidate) => candidate.kind === kind && candidate.name === name);
  if (bridge) return bridge;
  if (kind === "dmail") {
    const known = bridges.filter((candidate) => candidate.kind === "dmail").map((candidate) => candidate.name);
    const hint = known.length > 0 ? `the D-Mail endpoints are ${known.join(", ")}` : "no D-Mail endpoint is configured";
    const add = "agentmail bridge add dmail NAME --dir DIR --to RECIPIENT";
    throw new AgentmailError("unknown_recipient", `no D-Mail endpoint named '${displayName(name)}' (${hint}); add one with '${add}'`);
  }
  if (kind === "claude-team") {
    const known = bridges.filter((candidate) => candidate.kind === "claude-team").map((candidate) => candidate.name);
    const hint = known.length > 0 ? `the bridged teams are ${known.join(", ")}` : "no Claude Code team is bridged";
    const add = "agentmail bridge add claude-team [TEAM] [--lead WINDOW]";
    throw new AgentmailError("unknown_recipient", `no Claude Code team '${displayName(name)}' is bridged (${hint}); add it with '${add}'`);
  }
  throw new AgentmailError("unknown_recipient", `no ${kind} bridge is configured; add it with 'agentmail bridge add ${kind}'`);
}

/**
 * Where bridges keep their own state in the store: `<root>/.bridges/`, a dot-directory, so no name can make it a
 * mailbox and the mailman's watch on the store does not see it change.
 */
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
