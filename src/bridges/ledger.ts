/**
 * The import ledger, `<root>/.bridges/ledger.jsonl`: before a peer's file becomes a message, its identity (path,
 * device and inode, size, modification time, SHA-256 of the content) is written here and fsynced under the id of the
 * message to be; then the message is appended, then the file is moved as its protocol says. A pass killed anywhere
 * in between leaves an entry without `done`, and the next pass finishes the job instead of importing the file again:
 * nothing is delivered twice and no file is lost. Only the sync lock's holder writes it; once every entry is done
 * and the moves are on disk, the ledger is removed, so it only ever holds the work in flight.
 *
 * A Claude Code team's inbox is one file holding many messages, and its lead may delete the whole team at any moment:
 * an entry of one is recorded with the whole record it becomes and its key in the inbox (an `EntryImport`), so that
 * a pass finishing it needs nothing from the inbox but to settle (remove) the entry.
 *
 * Also the sent log (below): what each message agentmail wrote into a peer's directory became there.
 */
import { closeSync, fsyncSync, readFileSync, rmSync } from "node:fs";
import { openForAppend, readRange, writeFully } from "../store/durable/files.ts";
import type { BridgeRecord } from "./fields.ts";
import type { Identity } from "./files.ts";
import { ensureBridgesDir, ledgerPath, sentLogPath } from "./config.ts";

export interface LedgerImport {
  op: "import";
  /** The id of the message the file becomes. */
  id: string;
  /** The bridge's name (feat124, roo, or the D-Mail endpoint) and kind. */
  bridge: string;
  kind: string;
  /** The source file, absolute. */
  path: string;
  /** The source file as the user sees it. */
  file: string;
  /** The agentmail recipient. */
  to: string;
  identity: Identity;
  sha256: string;
  at: string;
}

/** A message from an entry of a Claude Code team's inbox. */
export interface EntryImport {
  op: "import";
  id: string;
  /** The team's bridge. */
  bridge: string;
  kind: "claude-team";
  /** The inbox, absolute. */
  path: string;
  /** The inbox as the user sees it. */
  file: string;
  to: string;
  /** The entry's key in the inbox (claude-team/inbox.ts entryKey). */
  key: string;
  /** The message the entry becomes, whole. */
  record: BridgeRecord;
  at: string;
}

type LedgerLine = LedgerImport | EntryImport | { op: "delivered"; id: string } | { op: "done"; id: string };

/** Whether an import was recorded (recorded after the append; without it, the mailbox is checked). */
interface Delivered {
  delivered: boolean;
}

export type PendingFileImport = LedgerImport & Delivered;
export type PendingEntryImport = EntryImport & Delivered;
export type PendingImport = PendingFileImport | PendingEntryImport;

export const isEntryImport = (entry: PendingImport): entry is PendingEntryImport => entry.kind === "claude-team";

function append(root: string, lines: LedgerLine[], durable: boolean): void {
  if (lines.length === 0) return;
  const { fd, stat } = openForAppend(ledgerPath(root));
  try {
    // A pass killed mid-write leaves a torn last line: end it, so the next entry is not glued onto it.
    const torn = stat.size > 0 && readRange(fd, stat.size - 1, stat.size)[0] !== 0x0a;
    writeFully(fd, Buffer.from((torn ? "\n" : "") + lines.map((line) => JSON.stringify(line) + "\n").join(""), "utf8"));
    if (durable) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Records files about to be imported; durable (fsynced) before any of them is delivered. */
export function recordImports(root: string, entries: (LedgerImport | EntryImport)[]): void {
  append(root, entries, true);
}

/**
 * Records that messages were appended. Not fsynced: a SIGKILL cannot lose it (it is in the page cache), and if a
 * power cut does, the next pass looks for the message in the mailbox instead.
 */
export function recordDelivered(root: string, ids: string[]): void {
  append(
    root,
    ids.map((id) => ({ op: "delivered" as const, id })),
    false,
  );
}

export function recordDone(root: string, ids: string[]): void {
  append(
    root,
    ids.map((id) => ({ op: "done" as const, id })),
    false,
  );
}

/** Imports recorded and not finished, oldest first. A torn last line (a pass killed mid-write) is skipped. */
export function pendingImports(root: string): PendingImport[] {
  let text: string;
  try {
    text = readFileSync(ledgerPath(root), "utf8");
  } catch {
    return [];
  }
  const pending = new Map<string, PendingImport>();
  for (const line of text.split("\n")) {
    let entry: LedgerLine;
    try {
      entry = JSON.parse(line) as LedgerLine;
    } catch {
      continue;
    }
    if (entry.op === "import") pending.set(entry.id, { ...entry, delivered: false });
    else if (entry.op === "delivered") {
      const known = pending.get(entry.id);
      if (known) known.delivered = true;
    } else if (entry.op === "done") pending.delete(entry.id);
  }
  return [...pending.values()];
}

/** Removes the ledger once nothing is in flight (the caller has made the moves durable first). */
export function clearLedger(root: string): void {
  if (pendingImports(root).length === 0) rmSync(ledgerPath(root), { force: true });
}

/**
 * `<root>/.bridges/sent.jsonl`: one line per message agentmail wrote into a peer's directory (its id, the bridge,
 * the file's name), so a peer's reply that names the file (FEAT-124's `in_reply_to`) is threaded to that message.
 * A lookup aid only: a line that could not be written costs that mapping, never a message.
 */
export interface SentLine {
  id: string;
  bridge: string;
  file: string;
  at: string;
}

export function recordSent(root: string, line: SentLine): void {
  try {
    ensureBridgesDir(root);
    const { fd } = openForAppend(sentLogPath(root));
    try {
      writeFully(fd, Buffer.from(JSON.stringify(line) + "\n", "utf8"));
    } finally {
      closeSync(fd);
    }
  } catch {
    // Only the in_reply_to mapping of a later reply depends on it.
  }
}

/** File name → message id, for the files a bridge wrote. */
export function sentFiles(root: string, bridge: string): Map<string, string> {
  const files = new Map<string, string>();
  let text: string;
  try {
    text = readFileSync(sentLogPath(root), "utf8");
  } catch {
    return files;
  }
  for (const line of text.split("\n")) {
    try {
      const entry = JSON.parse(line) as SentLine;
      if (entry.bridge === bridge && typeof entry.file === "string" && typeof entry.id === "string") files.set(entry.file, entry.id);
    } catch {
      // A torn line.
    }
  }
  return files;
}
