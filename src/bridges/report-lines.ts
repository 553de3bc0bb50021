/** The one-line forms of a sync's events, shared by `bridge sync`, `bridge run` and the mailman's log. */
import { displayName } from "../mail/names.ts";
import type { Left } from "./inbound.ts";
import type { BridgeReport, Exported, Imported } from "./sync.ts";

export const importedLine = (bridge: string, entry: Imported) =>
  `imported ${bridge} ${displayName(entry.file)} -> ${displayName(entry.to)} ${entry.id}`;
export const exportedLine = (bridge: string, entry: Exported) => `exported ${bridge} ${displayName(entry.file)} ${entry.id}`;
export const leftLine = (entry: Left) => `left ${entry.bridge} ${displayName(entry.file)}: ${displayName(entry.reason)}`;

export function summaryLine(report: BridgeReport): string {
  const parts = [`${report.imported.length} imported`, `${report.exported.length} exported`];
  if (report.queued > 0) parts.push(`${report.queued} queued`);
  parts.push(`${report.left.length} left alone`);
  if (report.others > 0) parts.push(`${report.others} for others`);
  return `${report.name}: ${parts.join(", ")}`;
}
