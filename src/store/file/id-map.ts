/**
 * Message ids held compactly, for a rewrite that must remember every id of a mailbox of a million lines: a string
 * per id cost it over a hundred megabytes and seconds of the collector's time; these cost 16 to 32 bytes an id. An id
 * of eight letters and digits, as agentmail makes them, is kept as its number in base 62 (below 2^48, exact in a
 * double) in an open-addressing table; any other id, in a Map.
 */
import { madeIdValue } from "./line-fields.ts";

const MIN_SLOTS = 1 << 12;
const TWO_32 = 0x1_0000_0000;

/** The id's number in base 62, plus one (0 marks an empty slot), or -1 when it is not eight letters and digits. */
function keyOf(id: string): number {
  return madeIdValue(id) || -1;
}

function slotOf(key: number, mask: number): number {
  let hash = Math.imul((key >>> 0) ^ Math.imul((key / TWO_32) >>> 0, 0x9e3779b1), 0x85ebca6b);
  hash ^= hash >>> 13;
  return hash & mask;
}

/**
 * A table of keys (never 0), each with a number beside it in the same array (one cache line holds both, which
 * halved the time of a million lookups), grown to stay at most half full.
 */
class Table {
  /** Key at 2 * slot, its number at 2 * slot + 1. */
  pairs = new Float64Array(2 * MIN_SLOTS);
  count = 0;

  /** Where `key` is, or the empty slot where it goes: an index of `pairs`. */
  at(key: number): number {
    const pairs = this.pairs;
    const mask = pairs.length / 2 - 1;
    let slot = slotOf(key, mask);
    while (pairs[2 * slot] !== key && pairs[2 * slot] !== 0) slot = (slot + 1) & mask;
    return 2 * slot;
  }

  /** Sets the number of `key`; returns its previous one, or undefined. */
  put(key: number, value: number): number | undefined {
    let at = this.at(key);
    if (this.pairs[at] === key) {
      const previous = this.pairs[at + 1];
      this.pairs[at + 1] = value;
      return previous;
    }
    if ((this.count + 1) * 4 > this.pairs.length) {
      this.#grow();
      at = this.at(key);
    }
    this.pairs[at] = key;
    this.pairs[at + 1] = value;
    this.count++;
    return undefined;
  }

  #grow(): void {
    const old = this.pairs;
    this.pairs = new Float64Array(old.length * 2);
    for (let from = 0; from < old.length; from += 2) {
      if (old[from] === 0) continue;
      const at = this.at(old[from]!);
      this.pairs[at] = old[from]!;
      this.pairs[at + 1] = old[from + 1]!;
    }
  }
}

/** A map from message id to a number. */
export class IdMap {
  readonly #table = new Table();
  readonly #others = new Map<string, number>();

  get(id: string): number | undefined {
    const key = keyOf(id);
    if (key === -1) return this.#others.get(id);
    const table = this.#table;
    const at = table.at(key);
    return table.pairs[at] === key ? table.pairs[at + 1] : undefined;
  }

  /** Sets the id's number; returns the one it had, or undefined: one lookup where get and set would take two. */
  put(id: string, value: number): number | undefined {
    const key = keyOf(id);
    if (key !== -1) return this.#table.put(key, value);
    const previous = this.#others.get(id);
    this.#others.set(id, value);
    return previous;
  }
}
