/**
 * Bridge addresses (`feat124:NAME`, `roo:SLUG`, `dmail:ENDPOINT`, `claude-team:TEAM/MEMBER`). Imported by `send` on its hot path, so this file
 * imports nothing: everything else about bridges loads only once an address is known to be one.
 */
export const BRIDGE_KINDS = ["feat124", "roo", "dmail", "claude-team"] as const;
export type BridgeKind = (typeof BRIDGE_KINDS)[number];

/** The kind an address starts with. */
function kindOf(address: string): BridgeKind | null {
  for (const kind of BRIDGE_KINDS) if (address.startsWith(`${kind}:`)) return kind;
  return null;
}

export function isBridgeAddress(recipient: string): boolean {
  return kindOf(recipient) !== null;
}

export interface BridgeAddress {
  kind: BridgeKind;
  /** The FEAT-124 mailbox name, the Roo slug, the D-Mail endpoint's name, or a Claude Code team's `TEAM/MEMBER`. */
  target: string;
}

export function parseBridgeAddress(address: string): BridgeAddress | null {
  const kind = kindOf(address);
  return kind === null ? null : { kind, target: address.slice(kind.length + 1) };
}

export function formatBridgeAddress(kind: BridgeKind, target: string): string {
  return `${kind}:${target}`;
}
