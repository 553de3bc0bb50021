/**
 * Bridge addresses (`feat124:NAME`, `roo:SLUG`, `dmail:ENDPOINT`). Imported by `send` on its hot path, so this file
 * imports nothing: everything else about bridges loads only once an address is known to be one.
 */
export const BRIDGE_KINDS = ["feat124", "roo", "dmail"] as const;
export type BridgeKind = (typeof BRIDGE_KINDS)[number];

const ADDRESS = /^(feat124|roo|dmail):/;

export function isBridgeAddress(recipient: string): boolean {
  return ADDRESS.test(recipient);
}

export interface BridgeAddress {
  kind: BridgeKind;
  /** The FEAT-124 mailbox name, the Roo slug, or the D-Mail endpoint's name. */
  target: string;
}

export function parseBridgeAddress(address: string): BridgeAddress | null {
  const match = ADDRESS.exec(address);
  if (!match) return null;
  return { kind: match[1] as BridgeKind, target: address.slice(match[0].length) };
}

export function formatBridgeAddress(kind: BridgeKind, target: string): string {
  return `${kind}:${target}`;
}
