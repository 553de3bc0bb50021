import type { Message } from "../core/message.ts";
import { compactMailbox, listMailboxes } from "../store/mailbox.ts";
import { rootExists } from "../store/paths.ts";
import { roleRoot } from "../store/role-mail.ts";
import { listStatuses, removeStatus } from "../store/status.ts";
import { listAllPanes } from "../tmux/windows.ts";
import type { Place } from "./context.ts";
import { mailRoot } from "../store/paths.ts";

const HOUR_MS = 3_600_000;

export interface CleanupOptions {
  staleHours: number;
  readHours: number;
  dryRun: boolean;
}

export interface CleanupReport {
  dry_run: boolean;
  /** Whether tmux could be asked which windows exist; without it, only --stale-hours forgets statuses. */
  windows_checked: boolean;
  forgotten: { name: string; reason: string }[];
  dropped: { name: string; count: number }[];
  removed: string[];
}

/**
 * Forgets statuses of agents whose windows are gone or that have not updated them for `staleHours`, drops read
 * messages older than `readHours`, and removes mailboxes left empty. A dry run decides exactly the same way.
 */
export async function cleanup(place: Place, options: CleanupOptions, now = Date.now()): Promise<CleanupReport> {
  const root = mailRoot(place.cwd, place.env);
  const report: CleanupReport = { dry_run: options.dryRun, windows_checked: false, forgotten: [], dropped: [], removed: [] };
  if (!rootExists(root)) return report;
  const panes = place.env.TMUX ? await listAllPanes(place.env) : null;
  report.windows_checked = panes !== null;
  const windowNames = new Set(panes?.map((pane) => pane.windowName));
  for (const status of listStatuses(root)) {
    const idleHours = (now - Date.parse(status.updated_at)) / HOUR_MS;
    const reason = panes !== null && !windowNames.has(status.name) ? "window gone" : idleHours > options.staleHours ? `not updated for ${idleHours.toFixed(1)} h` : null;
    if (!reason) continue;
    report.forgotten.push({ name: status.name, reason });
    if (!options.dryRun) removeStatus(root, status.name);
  }
  const tooOld = (message: Message) => {
    const created = Date.parse(String(message.created_at));
    return Number.isFinite(created) && now - created > options.readHours * HOUR_MS;
  };
  // Role queues are mailboxes too, under their address (role:<role>).
  const mailboxes = (dir: string) => listMailboxes(dir).map((name) => ({ dir, name }));
  for (const { dir, name } of [...mailboxes(root), ...mailboxes(roleRoot(root))]) {
    const { dropped, removed } = await compactMailbox(dir, name, tooOld, options.dryRun);
    if (dropped > 0) report.dropped.push({ name, count: dropped });
    if (removed) report.removed.push(name);
  }
  return report;
}
