import { fnv1a } from "./fnv1a.ts";
import { readRange, writeFully } from "../durable/files.ts";

/**
 * The set of ids a mailbox's history has used, kept in the cursor file as a hash table of 8-byte fingerprints
 * (open addressing, linear probing, an all-zero slot is empty), so a receive asks "was this id used before?" with one
 * or two small reads, however long the history. A fingerprint is two independent 32-bit hashes of the id's canonical
 * JSON text; a match is only a "maybe": the caller confirms it against the history itself, so a collision can cost
 * time, never a message.
 */
export const SLOT_BYTES = 8;
const MIN_SLOTS = 1024;
/** Past this share of slots in use, the table is rebuilt twice as large: probes stay short. */
const MAX_LOAD = 0.7;
/** Slots read per probe: 128 bytes. */
const WINDOW_SLOTS = 16;

export interface TableRef {
  fd: number;
  /** File offset of slot 0. */
  at: number;
  /** A power of two. */
  slots: number;
}

function fingerprint(id: Uint8Array): [number, number] {
  fingerprintInto(id, 0, id.length, scratch, 0);
  return [scratch[0]!, scratch[1]!];
}

const scratch = new Uint32Array(2);

/** Writes the fingerprint of the id bytes[start, end) into words[at], words[at + 1]: no array made per id. */
function fingerprintInto(bytes: Uint8Array, start: number, end: number, words: Uint32Array, at: number): void {
  let mix = 0x9e3779b9;
  for (let i = start; i < end; i++) {
    mix = Math.imul(mix ^ bytes[i]!, 0x5bd1e995);
    mix ^= mix >>> 15;
  }
  words[at] = fnv1a(bytes, start, end);
  // The second word is never zero, so a used slot is never all zero.
  words[at + 1] = (mix | 1) >>> 0;
}

/** Where `id` is in the table (found), or the empty slot where it would go; null if a damaged table has none. */
function probe(table: TableRef, id: Uint8Array): { found: boolean; slot: number } | null {
  const [first, second] = fingerprint(id);
  const mask = table.slots - 1;
  let slot = first & mask;
  for (let probed = 0; probed < table.slots; ) {
    const count = Math.min(WINDOW_SLOTS, table.slots - slot);
    const bytes = readRange(table.fd, table.at + slot * SLOT_BYTES, table.at + (slot + count) * SLOT_BYTES);
    if (bytes.length < count * SLOT_BYTES) return null;
    const window = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let k = 0; k < count; k++) {
      const word = window.getUint32(k * SLOT_BYTES + 4, true);
      if (word === 0) return { found: false, slot: slot + k };
      if (word === second && window.getUint32(k * SLOT_BYTES, true) === first) return { found: true, slot: slot + k };
    }
    probed += count;
    slot = (slot + count) & mask;
  }
  return null;
}

export function tableHas(table: TableRef, id: Uint8Array): boolean {
  return probe(table, id)?.found ?? false;
}

/**
 * Adds ids to the table in the file, one slot write each; false when that would fill it past MAX_LOAD (or it is
 * damaged), and then nothing more is added: the caller rebuilds it.
 */
export function tableAdd(table: TableRef, used: number, ids: Uint8Array[]): number | false {
  let count = used;
  for (const id of ids) {
    if ((count + 1) / table.slots > MAX_LOAD) return false;
    const place = probe(table, id);
    if (place === null) return false;
    if (place.found) continue;
    writeFully(table.fd, new Uint8Array(new Uint32Array(fingerprint(id)).buffer), table.at + place.slot * SLOT_BYTES);
    count++;
  }
  return count;
}

/** A new table in memory holding the slots in use of `old` and `ids`: sized for twice their number. */
export function buildTable(old: Uint8Array | null, ids: Uint8Array[]): { bytes: Uint8Array; slots: number; count: number } {
  const fingerprints = new Fingerprints();
  for (const id of ids) fingerprints.add(id);
  return fingerprints.table(old);
}

/**
 * Fingerprints of ids gathered for a new table, two words each and nothing else: a cold scan of a million-line
 * mailbox keeps 8 MB here, where the ids themselves (a view each) would take a hundred.
 */
export class Fingerprints {
  #words = new Uint32Array(2 * 1024);
  count = 0;

  /** Adds the id bytes[start, end) (all of them when not given). */
  add(bytes: Uint8Array, start = 0, end = bytes.length): void {
    if (this.count * 2 === this.#words.length) {
      const grown = new Uint32Array(this.#words.length * 2);
      grown.set(this.#words);
      this.#words = grown;
    }
    fingerprintInto(bytes, start, end, this.#words, this.count * 2);
    this.count++;
  }

  /** The table holding these and the slots in use of `old`: see buildTable. */
  table(old: Uint8Array | null = null): { bytes: Uint8Array; slots: number; count: number } {
    return tableOf(old, this.#words, this.count);
  }
}

function tableOf(old: Uint8Array | null, added: Uint32Array, addedCount: number): { bytes: Uint8Array; slots: number; count: number } {
  const oldWords = old ? new Uint32Array(old.slice().buffer) : new Uint32Array(0);
  let slots = MIN_SLOTS;
  while (slots < oldWords.length + addedCount * 2) slots *= 2;
  // Two little-endian words per slot: the platforms Bun runs on are all little-endian, as the file format is.
  const words = new Uint32Array(slots * 2);
  const mask = slots - 1;
  let count = 0;
  const insert = (first: number, second: number) => {
    for (let slot = first & mask; ; slot = (slot + 1) & mask) {
      if (words[slot * 2 + 1] === 0) {
        words[slot * 2] = first;
        words[slot * 2 + 1] = second;
        count++;
        return;
      }
      if (words[slot * 2 + 1] === second && words[slot * 2] === first) return;
    }
  };
  for (let at = 0; at + 1 < oldWords.length; at += 2) if (oldWords[at + 1] !== 0) insert(oldWords[at]!, oldWords[at + 1]!);
  for (let at = 0; at < addedCount * 2; at += 2) insert(added[at]!, added[at + 1]!);
  return { bytes: new Uint8Array(words.buffer), slots, count };
}

/**
 * The ids of the lines a receive passes, as slices of the mailbox bytes it read (canonical JSON text, UTF-8): a
 * cold scan passes every line of the history, so no string is made per line. Looked up by a 32-bit hash of the
 * bytes, then compared byte for byte: a Set of strings would build one string per id asked about, which on a long
 * inbox cost more than the scan itself.
 */
export class PassedIds {
  readonly ids: Uint8Array[] = [];
  private readonly buckets = new Map<number, Uint8Array[]>();

  private static hash(id: Uint8Array): number {
    return fnv1a(id);
  }

  add(id: Uint8Array | null): void {
    if (id === null) return;
    this.ids.push(id);
    const hash = PassedIds.hash(id);
    const bucket = this.buckets.get(hash);
    if (bucket) bucket.push(id);
    else this.buckets.set(hash, [id]);
  }

  has(id: Uint8Array): boolean {
    const bucket = this.buckets.get(PassedIds.hash(id));
    if (!bucket) return false;
    search: for (let k = 0; k < bucket.length; k++) {
      const seen = bucket[k]!;
      if (seen.length !== id.length) continue;
      for (let i = 0; i < id.length; i++) if (seen[i] !== id[i]) continue search;
      return true;
    }
    return false;
  }
}
