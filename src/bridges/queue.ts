/**
 * A Roo mailbox holds one message per recipient (`to-<slug>.md`), and writing a second one over the first would lose
 * it. So while the file is there, agentmail queues further messages for that slug in the store,
 * `<root>/.bridges/roo-queue/<slug>/<sequence>_<id>.md`, each already in Roo form, and a sync writes the oldest one
 * as soon as the recipient has deleted the file. Sends and flushes hold the queue's lock, so the order is kept.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { decodeName, encodeName } from "../mail/names.ts";
import { createExclusive, syncDirectory, writeFully } from "../store/durable/files.ts";
import { withLock } from "../store/durable/lock.ts";
import { ensurePeerDir, identityAt, readPeerFile, writeFileIfAbsent } from "./files.ts";
import { parseRoo, rooFileName } from "./formats/roo.ts";
import { bridgesDir, ensureBridgesDir, rooQueueDir, rooQueueLockPath } from "./config.ts";

const ENTRY = /^(\d{10})_([A-Za-z0-9]+)\.md$/;

const slugDir = (root: string, slug: string) => join(rooQueueDir(root), encodeName(slug));

function entries(root: string, slug: string): string[] {
  try {
    return readdirSync(slugDir(root, slug))
      .filter((name) => ENTRY.test(name))
      .sort();
  } catch {
    return [];
  }
}

export function withRooQueue<T>(root: string, critical: () => T | Promise<T>): Promise<T> {
  ensureBridgesDir(root);
  return withLock(rooQueueLockPath(root), critical);
}

/**
 * Hands a message to a Roo recipient: written as `to-<slug>.md` when nothing waits before it and the file is free,
 * queued otherwise. Returns whether it was queued. The caller holds the queue's lock.
 */
export function deliverOrQueue(root: string, rooDir: string, slug: string, id: string, content: string): boolean {
  const { waiting } = flushSlug(root, rooDir, slug);
  if (waiting === 0 && writeFileIfAbsent(rooDir, rooFileName(slug), content)) return false;
  const dir = slugDir(root, slug);
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    syncDirectory(rooQueueDir(root));
    syncDirectory(bridgesDir(root));
  }
  const last = entries(root, slug).at(-1);
  const sequence = last ? Number(ENTRY.exec(last)![1]) + 1 : 1;
  const path = join(dir, `${String(sequence).padStart(10, "0")}_${id}.md`);
  const fd = createExclusive(path);
  try {
    writeFully(fd, Buffer.from(content, "utf8"));
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(path, { force: true });
    throw error;
  }
  closeSync(fd);
  syncDirectory(dir);
  return true;
}

export interface Flush {
  slug: string;
  id: string;
}

/**
 * Writes, for each slug whose `to-<slug>.md` is gone, its oldest queued message. The caller holds the queue's lock.
 * A flush killed after writing the file and before dropping the entry finds the file (with the same id) next time
 * and drops the entry; had the recipient already deleted it by then, the message is written once more — the same
 * rule as a receive killed between showing and marking a message: at most once more, never lost.
 */
export function flushRooQueue(root: string, rooDir: string): { written: Flush[]; waiting: number } {
  const written: Flush[] = [];
  let waiting = 0;
  let slugs: string[];
  try {
    slugs = readdirSync(rooQueueDir(root));
  } catch {
    return { written, waiting };
  }
  for (const encoded of slugs) {
    const slug = decodeName(encoded);
    if (slug === null) continue;
    const flushed = flushSlug(root, rooDir, slug);
    written.push(...flushed.written);
    waiting += flushed.waiting;
  }
  return { written, waiting };
}

function flushSlug(root: string, rooDir: string, slug: string): { written: Flush[]; waiting: number } {
  const written: Flush[] = [];
  const target = join(rooDir, rooFileName(slug));
  for (const entry of entries(root, slug)) {
    const id = ENTRY.exec(entry)![2]!;
    const path = join(slugDir(root, slug), entry);
    if (identityAt(target) !== null) {
      if (idIn(target) !== id) break;
    } else {
      ensurePeerDir(rooDir);
      // The entry goes right after the link, before any fsync: a kill in between is then a matter of microseconds
      // (and found by the id above). Both directories are fsynced after; a journal commits the two in order.
      if (!writeFileIfAbsent(rooDir, rooFileName(slug), readFileSync(path, "utf8"), false)) break;
      written.push({ slug, id });
    }
    rmSync(path, { force: true });
    syncDirectory(rooDir);
    syncDirectory(slugDir(root, slug));
  }
  return { written, waiting: entries(root, slug).length };
}

/** The `id` of the Roo message in a file, or null when it cannot be read as one. */
function idIn(path: string): string | null {
  try {
    const file = readPeerFile(path, 1024 * 1024);
    return file ? parseRoo(file.text).id : null;
  } catch {
    return null;
  }
}

/** How many messages wait in the queue, per slug. */
export function queuedCounts(root: string): Record<string, number> {
  const counts: Record<string, number> = Object.create(null);
  let slugs: string[];
  try {
    slugs = readdirSync(rooQueueDir(root));
  } catch {
    return counts;
  }
  for (const encoded of slugs) {
    const slug = decodeName(encoded);
    const count = slug === null ? 0 : entries(root, slug).length;
    if (slug !== null && count > 0) counts[slug] = count;
  }
  return counts;
}
