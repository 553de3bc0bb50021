/**
 * One sync pass, both ways, over every configured bridge: finish any import a killed pass left half done (the
 * ledger), import what peers left for agentmail's agents, then write queued Roo messages whose slot is free.
 * Imports run in batches under the store's sync lock, so `bridge sync`, any number of
 * `bridge run`s and the mailman may run at once and each file is still delivered exactly once; a batch holds the lock
 * about a second at most, so no holder looks stale and nobody waits long.
 */
import { dirname, join } from "node:path";
import { AgentmailError, toAgentmailError } from "../mail/errors.ts";
import { newId } from "../mail/ids.ts";
import { withLock } from "../store/durable/lock.ts";
import { importTeamBatch, recoverEntryImports, type TeamPassContext } from "./claude-team/import.ts";
import { type BridgeConfig, ensureBridgesDir, problemsPath, readBridges, syncLockPath } from "./config.ts";
import type { BridgeRecord } from "./fields.ts";
import { type Candidate, type ImportContext, type Left, MAX_FILE_BYTES, recordOf, scanBridge } from "./scan.ts";
import {
  clearLedger,
  isEntryImport,
  type LedgerImport,
  type PendingFileImport,
  pendingImports,
  recordDelivered,
  recordDone,
  recordImports,
  sentFiles,
} from "./ledger.ts";
import { Malformed } from "./formats/frontmatter.ts";
import { identityAt, moveAside, readPeerFile, removeIfStill, sameIdentity, syncDirectories, type PeerFile } from "./files.ts";
import type { Store } from "../store/store.ts";
import { deliverable, type Deliverable, deliverImported, idLookup, recipientProblem } from "./deliver.ts";
import { flushRooQueue, withRooQueue } from "./queue.ts";
import { readFileSync } from "node:fs";
import { replaceFile } from "../store/durable/files.ts";
import { displayName } from "../mail/names.ts";

export interface Imported {
  file: string;
  to: string;
  id: string;
}

export interface Exported {
  file: string;
  id: string;
}

export interface BridgeReport {
  name: string;
  kind: string;
  imported: Imported[];
  exported: Exported[];
  /** Roo messages waiting in the store for their recipient to delete the previous one. */
  queued: number;
  left: Left[];
  /** Files for names that are not agentmail agents (the peer's own mail), left for the peer. */
  others: number;
}

export interface SyncReport {
  bridges: BridgeReport[];
  /** Files still being written when the pass ended; a later pass imports them. */
  deferred: number;
  /** Files left alone that no earlier pass had reported. */
  newlyLeft: Left[];
}

export interface SyncOptions {
  /** How long to wait for another pass's batch; 0: do not wait, throw `locked` (the loops skip a pass then). */
  lockTimeoutMs?: number;
  /** A file changed more recently than this may still be being written: it waits. */
  settleMs?: number;
  /** How long a one-shot pass waits for such files before leaving them to a later one. */
  settleWaitMs?: number;
  /** Hears how far the pass is: the files waiting when it began, then each batch's files (output/progress.ts). */
  progress?: SyncProgress;
}

export interface SyncProgress {
  total(files: number): void;
  add(files: number): void;
}

const SETTLE_MS = 150;
const SETTLE_WAIT_MS = 2_000;
const BATCH_FILES = 200;
const BATCH_MS = 500;

/** A peer's file as a move needs it: its bridge (name and kind), where it is, and how to show it. */
interface Source {
  bridge: string;
  kind: string;
  path: string;
  file: string;
}

interface Prepared {
  candidate: Candidate;
  file: PeerFile;
  record: BridgeRecord;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

const explain = (error: unknown) => (error instanceof Error ? error.message : String(error));

class Pass {
  readonly reports = new Map<string, BridgeReport>();
  /** Paths this pass has dealt with (imported or left alone), so later batches skip them. */
  readonly seen = new Set<string>();
  fresh = 0;
  /** The files waiting were counted for the progress line (at the first batch). */
  private counted = false;
  private sentFileIds: Map<string, string> | null = null;
  /** Who can take an import, read again for each batch. */
  private known: Deliverable = { agents: new Set(), roles: new Set(), groups: new Set() };

  constructor(
    readonly root: string,
    readonly store: Store,
    readonly bridges: BridgeConfig[],
    readonly settleMs: number,
    readonly progress?: SyncProgress,
  ) {
    for (const bridge of bridges) {
      this.reports.set(bridge.name, { name: bridge.name, kind: bridge.kind, imported: [], exported: [], queued: 0, left: [], others: 0 });
    }
  }

  report(name: string): BridgeReport {
    let report = this.reports.get(name);
    if (!report) {
      report = { name, kind: "removed", imported: [], exported: [], queued: 0, left: [], others: 0 };
      this.reports.set(name, report);
    }
    return report;
  }

  leave(left: Left): void {
    const report = this.report(left.bridge);
    if (!report.left.some((entry) => entry.file === left.file)) report.left.push(left);
  }

  readonly context: ImportContext = {
    idOfFile: (fileName) => {
      this.sentFileIds ??= sentFiles(this.root, "feat124");
      return this.sentFileIds.get(fileName);
    },
    recipientProblem: (recipient) => recipientProblem(recipient, this.known),
  };

  /** What the claude-team imports report through. */
  private teamContext(): TeamPassContext {
    return {
      root: this.root,
      store: this.store,
      known: this.known,
      leave: (left) => this.leave(left),
      imported: (bridge, entry) => void this.report(bridge).imported.push(entry),
      others: (bridge, count) => void (this.report(bridge).others = count),
    };
  }

  /** One batch under the lock: recover, then import up to a batch of files and team entries. True when some remain. */
  async batch(): Promise<boolean> {
    await this.recover();
    this.known = await deliverable(this.store);
    const teamsLeft = await this.importTeams();
    const candidates: Candidate[] = [];
    for (const bridge of this.bridges) {
      if (bridge.kind === "claude-team") continue;
      const scan = scanBridge(bridge, this.known.agents, this.known.roles);
      const report = this.report(bridge.name);
      report.others = scan.others;
      for (const left of scan.left) this.leave(left);
      candidates.push(...scan.candidates.filter((candidate) => !this.seen.has(candidate.path)));
    }
    if (!this.counted) this.progress?.total(candidates.length);
    this.counted = true;
    const started = Date.now();
    const prepared: Prepared[] = [];
    let more = false;
    for (const candidate of candidates) {
      if (prepared.length >= BATCH_FILES || Date.now() - started > BATCH_MS) {
        more = true;
        break;
      }
      this.seen.add(candidate.path);
      const ready = this.prepare(candidate);
      if (ready) prepared.push(ready);
    }
    await this.commit(prepared);
    this.progress?.add(prepared.length);
    return more || teamsLeft;
  }

  /** Claude Code teams' inboxes (claude-team/import.ts); true when entries remain for another batch. */
  private async importTeams(): Promise<boolean> {
    if (!this.bridges.some((bridge) => bridge.kind === "claude-team")) return false;
    const pending = pendingImports(this.root).filter(isEntryImport);
    return importTeamBatch(this.bridges, this.teamContext(), pending);
  }

  private prepare(candidate: Candidate): Prepared | null {
    try {
      const file = readPeerFile(candidate.path, MAX_FILE_BYTES);
      if (!file) return null;
      if (Date.now() - file.ctimeMs < this.settleMs) {
        this.seen.delete(candidate.path);
        this.fresh++;
        return null;
      }
      return { candidate, file, record: recordOf(candidate, file, newId(), this.context) };
    } catch (error) {
      // Whatever reading one file runs into is that file's problem, never the pass's: the other files still flow.
      const expected = error instanceof Malformed || error instanceof AgentmailError || (error as NodeJS.ErrnoException).code;
      const reason = expected ? explain(error) : toAgentmailError(error).message;
      this.leave({ bridge: candidate.bridge.name, file: candidate.file, reason });
      return null;
    }
  }

  /** Ledger (fsynced), messages (fsynced, a batch per mailbox), moves, directories fsynced, ledger cleared. */
  private async commit(prepared: Prepared[]): Promise<void> {
    if (prepared.length === 0) return;
    const at = new Date().toISOString();
    recordImports(
      this.root,
      prepared.map(
        ({ candidate, file, record }): LedgerImport => ({
          op: "import",
          id: record.id,
          bridge: candidate.bridge.name,
          kind: candidate.bridge.kind,
          path: candidate.path,
          file: candidate.file,
          to: record.to,
          identity: file.identity,
          sha256: file.sha256,
          at,
        }),
      ),
    );
    // All at once: the store writes the appends of one mailbox made together with one fsync, in this order.
    const outcomes = await Promise.allSettled(prepared.map((item) => deliverImported(this.store, item.record)));
    const delivered: Prepared[] = [];
    for (const [index, item] of prepared.entries()) {
      const outcome = outcomes[index]!;
      if (outcome.status === "fulfilled") {
        delivered.push(item);
        this.report(item.candidate.bridge.name).imported.push({ file: item.candidate.file, to: item.record.to, id: item.record.id });
      } else {
        const reason = `could not be delivered to ${item.record.to}: ${explain(outcome.reason)}`;
        this.leave({ bridge: item.candidate.bridge.name, file: item.candidate.file, reason });
      }
    }
    recordDelivered(
      this.root,
      delivered.map((item) => item.record.id),
    );
    const touched = new Set<string>();
    const done: string[] = [];
    for (const { candidate, file, record } of delivered) {
      const source: Source = { bridge: candidate.bridge.name, kind: candidate.bridge.kind, path: candidate.path, file: candidate.file };
      if (this.finish(source, record.id, file, touched)) done.push(record.id);
    }
    syncDirectories(touched);
    recordDone(this.root, done);
    clearLedger(this.root);
  }

  /** Moves an imported file as its protocol says; false (and left alone, reported) when the move failed. */
  private finish(source: Source, id: string, file: Pick<PeerFile, "identity" | "sha256">, touched: Set<string>): boolean {
    const { bridge, kind, path, file: label } = source;
    try {
      if (kind === "feat124") moveAside(path, file.identity, file.sha256, join(dirname(path), "read"), touched);
      else if (kind === "dmail") moveAside(path, file.identity, file.sha256, join(dirname(dirname(path)), "archive"), touched);
      else {
        removeIfStill(path, file.identity);
        touched.add(dirname(path));
      }
      return true;
    } catch (error) {
      this.leave({ bridge, file: label, reason: `delivered as ${id}, but could not be moved out of the way: ${explain(error)}` });
      return false;
    }
  }

  /** Finishes the imports a killed pass left in the ledger: delivers what was not, moves what was not moved. */
  private async recover(): Promise<void> {
    const pending = pendingImports(this.root);
    if (pending.length === 0) return;
    const touched = new Set<string>();
    const holds = idLookup(this.store);
    const done = await recoverEntryImports(pending.filter(isEntryImport), this.teamContext(), holds);
    for (const entry of pending) {
      if (!isEntryImport(entry) && (await this.recoverOne(entry, touched, holds))) done.push(entry.id);
    }
    syncDirectories(touched);
    recordDone(this.root, done);
    clearLedger(this.root);
  }

  private async recoverOne(
    entry: PendingFileImport,
    touched: Set<string>,
    holds: (mailbox: string, id: string) => Promise<boolean>,
  ): Promise<boolean> {
    const now = identityAt(entry.path);
    if (now === null || !sameIdentity(now, entry.identity)) return true;
    let file: PeerFile | null;
    try {
      file = readPeerFile(entry.path, MAX_FILE_BYTES);
    } catch {
      return true;
    }
    // Changed since it was recorded: what was recorded is gone, and the new content is a new message.
    if (!file || file.sha256 !== entry.sha256) return true;
    this.seen.add(entry.path);
    // Delivering again is safe: each target already holding the id is passed over.
    if (!entry.delivered) {
      const bridge = this.bridges.find((candidate) => candidate.name === entry.bridge && candidate.kind === entry.kind);
      // Its bridge was removed: nothing was delivered and the file is where it was, so there is nothing to finish.
      if (!bridge) return true;
      try {
        const record = recordOf({ bridge, path: entry.path, file: entry.file }, file, entry.id, this.context, entry.to);
        await deliverImported(this.store, record, holds);
        recordDelivered(this.root, [entry.id]);
        this.report(bridge.name).imported.push({ file: entry.file, to: entry.to, id: entry.id });
      } catch (error) {
        this.leave({ bridge: entry.bridge, file: entry.file, reason: `could not be delivered to ${entry.to}: ${explain(error)}` });
        return false;
      }
    }
    return this.finish(entry, entry.id, { identity: entry.identity, sha256: entry.sha256 }, touched);
  }

  async flushRoo(): Promise<void> {
    const roo = this.bridges.find((bridge) => bridge.kind === "roo");
    if (!roo) return;
    const report = this.report(roo.name);
    const { written, waiting } = await withRooQueue(this.root, () => flushRooQueue(this.root, roo.dir));
    for (const { slug, id } of written) report.exported.push({ file: join(roo.label, `to-${slug}.md`), id });
    report.queued = waiting;
  }
}

/**
 * One pass over every configured bridge. Throws `locked` only when another pass holds the lock for longer than
 * `lockTimeoutMs` (with 0: at once, which the loops take as "someone else is syncing").
 */
export async function syncBridges(root: string, store: Store, options: SyncOptions = {}): Promise<SyncReport> {
  const bridges = readBridges(root);
  ensureBridgesDir(root);
  const pass = new Pass(root, store, bridges, options.settleMs ?? SETTLE_MS, options.progress);
  const lock = syncLockPath(root);
  const lockOptions = options.lockTimeoutMs === undefined ? {} : { timeoutMs: options.lockTimeoutMs };
  const waitUntil = Date.now() + (options.settleWaitMs ?? SETTLE_WAIT_MS);
  for (;;) {
    pass.fresh = 0;
    const more = await withLock(lock, () => pass.batch(), lockOptions);
    if (more) continue;
    if (pass.fresh > 0 && Date.now() < waitUntil) {
      await sleep(pass.settleMs);
      continue;
    }
    break;
  }
  await pass.flushRoo();
  const left = [...pass.reports.values()].flatMap((report) => report.left);
  const newlyLeft = await withLock(lock, () => rememberProblems(root, left));
  return { bridges: [...pass.reports.values()], deferred: pass.fresh, newlyLeft };
}

/**
 * Files left alone, remembered in `<root>/.bridges/problems.json` so that the long-running syncs (`bridge run`, the
 * mailman) report each one once, not on every pass, and `doctor` can list them. A file that is fixed or gone
 * drops out; one whose reason changes is reported again.
 */
export function readProblems(root: string): Left[] {
  try {
    const value = JSON.parse(readFileSync(problemsPath(root), "utf8")) as { left?: Left[] };
    const left = Array.isArray(value.left) ? value.left : [];
    return left.filter((entry) => typeof entry?.file === "string" && typeof entry.reason === "string");
  } catch {
    return [];
  }
}

const keyOf = (left: Left) => `${left.bridge}\u0000${left.file}\u0000${left.reason}`;

/**
 * Stores this pass's complete list of files left alone and returns those not reported before. The caller holds the
 * sync lock. Written only when the list changed.
 */
export function rememberProblems(root: string, left: Left[]): Left[] {
  const before = readProblems(root);
  const known = new Set(before.map(keyOf));
  const fresh = left.filter((entry) => !known.has(keyOf(entry)));
  const now = new Set(left.map(keyOf));
  if (fresh.length > 0 || before.some((entry) => !now.has(keyOf(entry)))) {
    replaceFile(problemsPath(root), JSON.stringify({ left }, null, 1) + "\n");
  }
  return fresh;
}

/** The one-line forms of a sync's events, shared by `bridge sync`, `bridge run` and the mailman's log. */
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
