// Which docs are on sale at an instant, per store: bitsets per time interval, built on first use and cached.
import { orInto, setDocs } from "./bitset.ts";
import type { WindowTable } from "./index-data.ts";

/** How many time intervals keep their bitsets; requests cluster around the present, so few are needed. */
const INTERVAL_CACHE_SIZE = 8;

interface IntervalSets {
  byStore: (Uint32Array | null)[];
  any: Uint32Array | null;
  begins: Float64Array | null;
}

/**
 * The window boundaries (every start and end, sorted) cut time into intervals in which the set of docs on
 * sale is constant. A query's instant falls in one, found by binary search; its bitsets are built from the
 * windows active then (one pass over their doc lists) and kept for the next queries of that interval.
 */
export class OnSale {
  readonly #win: WindowTable;
  readonly #words: number;
  readonly #size: number;
  readonly #stores: Map<string, number>;
  readonly #groupsByStore: Uint32Array[];
  readonly #boundaries: Float64Array;
  readonly #cache = new Map<number, IntervalSets>();

  constructor(win: WindowTable, words: number, size: number) {
    this.#win = win;
    this.#size = size;
    this.#words = words;
    this.#stores = new Map(win.storeNames.map((s, i) => [s, i]));
    const groups = Uint32Array.from(win.store.keys());
    this.#groupsByStore = win.storeNames.map((_, s) => groups.filter((g) => win.store[g] === s));
    const times = new Set<number>();
    for (let g = 0; g < win.from.length; g++) {
      times.add(win.from[g]!);
      if (win.to[g] !== Infinity) times.add(win.to[g]!);
    }
    this.#boundaries = Float64Array.from(times).sort();
  }

  /** The interval holding `now`: how many boundaries are <= now. */
  interval(now: number): number {
    const b = this.#boundaries;
    let lo = 0;
    let hi = b.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (b[mid]! <= now) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The end of an interval: the next instant at which any doc's state may change, or null. */
  nextChange(interval: number): number | null {
    return interval < this.#boundaries.length ? this.#boundaries[interval]! : null;
  }

  #sets(interval: number): IntervalSets {
    let sets = this.#cache.get(interval);
    if (sets === undefined) {
      if (this.#cache.size >= INTERVAL_CACHE_SIZE) this.#cache.delete(this.#cache.keys().next().value!);
      sets = { byStore: this.#win.storeNames.map(() => null), any: null, begins: null };
      this.#cache.set(interval, sets);
    }
    return sets;
  }

  #inStore(sets: IntervalSets, now: number, s: number): Uint32Array {
    let bits = sets.byStore[s];
    if (!bits) {
      const { from, to, offsets, docs } = this.#win;
      bits = new Uint32Array(this.#words);
      for (const g of this.#groupsByStore[s]!) {
        if (from[g]! <= now && now < to[g]!) setDocs(bits, docs, offsets[g]!, offsets[g + 1]!);
      }
      sets.byStore[s] = bits;
    }
    return bits;
  }

  /**
   * Per doc, when the latest of the sales it is in at `now` (in `interval`) began, in any store (-Infinity when
   * it is in none): what `sort=newest` orders by. Read-only.
   */
  begins(interval: number, now: number): Float64Array {
    const sets = this.#sets(interval);
    if (!sets.begins) {
      const { from, to, offsets, docs } = this.#win;
      const begins = new Float64Array(this.#size).fill(-Infinity);
      for (let g = 0; g < from.length; g++) {
        if (!(from[g]! <= now && now < to[g]!)) continue;
        for (let p = offsets[g]!; p < offsets[g + 1]!; p++) {
          const d = docs[p]!;
          if (from[g]! > begins[d]!) begins[d] = from[g]!;
        }
      }
      sets.begins = begins;
    }
    return sets.begins;
  }

  /**
   * Docs on sale at `now` (in `interval`) in any of `stores`, or in any store if none are named; null if no
   * named store is in the index. The result is read-only, unless it is `scratch`, which is used (and
   * overwritten) only when several but not all stores are named.
   */
  docs(interval: number, now: number, stores: readonly string[], scratch: Uint32Array): Uint32Array | null {
    const sets = this.#sets(interval);
    const wanted = new Set<number>();
    for (const name of stores.length > 0 ? stores : this.#win.storeNames) {
      const s = this.#stores.get(name);
      if (s !== undefined) wanted.add(s);
    }
    if (wanted.size === 0) return null;
    if (wanted.size === 1) return this.#inStore(sets, now, wanted.values().next().value!);
    const all = wanted.size === this.#stores.size;
    if (all && sets.any) return sets.any;
    const bits = all ? new Uint32Array(this.#words) : scratch;
    if (!all) bits.fill(0);
    for (const s of wanted) orInto(bits, this.#inStore(sets, now, s));
    if (all) sets.any = bits;
    return bits;
  }
}
