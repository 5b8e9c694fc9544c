// Price ranges (min_price, max_price) as bitsets: docs sorted by price, step bitsets made at load, a few ranges kept.
import { setDocs } from "./bitset.ts";

/** How many price ranges keep their bitsets (clients offer a few fixed ranges). */
const PRICE_CACHE_SIZE = 16;
/**
 * Price steps with a ready bitset of the docs below them: a range is two of those (one ANDed with the other's
 * complement) plus at most two steps' worth of docs set or cleared at its ends, instead of every doc in it set
 * one by one (a wide range at 100,000 products: about 60 us). 64 steps hold 64 bitsets (800 KB at 100,000 docs).
 */
const PRICE_STEPS = 64;

/** The docs within a price range, as a bitset. */
export class PriceRanges {
  readonly #words: number;
  /** Docs with a price, by ascending price, and those prices. */
  readonly #byPrice: Uint32Array;
  readonly #sortedPrices: Float64Array;
  readonly #cache = new Map<string, Uint32Array>();
  /** Positions in #byPrice where the steps start (ascending, first 0, last its length), and the docs before each. */
  readonly #stepAt: Uint32Array;
  readonly #below: Uint32Array[];

  /** `prices`: per doc, in cents, -1 for none (never in a range). */
  constructor(n: number, words: number, prices: Float64Array) {
    this.#words = words;
    const priced = Array.from({ length: n }, (_, d) => d).filter((d) => prices[d]! >= 0);
    priced.sort((a, b) => prices[a]! - prices[b]! || a - b);
    this.#byPrice = Uint32Array.from(priced);
    this.#sortedPrices = Float64Array.from(priced, (d) => prices[d]!);
    const steps = Math.min(PRICE_STEPS, priced.length);
    this.#stepAt = Uint32Array.from({ length: steps + 1 }, (_, i) =>
      Math.floor((i * priced.length) / Math.max(1, steps)),
    );
    this.#below = [];
    for (let i = 0; i <= steps; i++) {
      const b = i === 0 ? new Uint32Array(words) : this.#below[i - 1]!.slice();
      if (i > 0) setDocs(b, this.#byPrice, this.#stepAt[i - 1]!, this.#stepAt[i]!);
      this.#below.push(b);
    }
  }

  /** Docs priced within [min, max] cents, kept for the next queries with the same range. */
  range(min: number, max: number): Uint32Array {
    const key = `${min}-${max}`;
    let bits = this.#cache.get(key);
    if (bits === undefined) {
      const prices = this.#sortedPrices;
      const lowerBound = (x: number, strict: boolean) => {
        let lo = 0;
        let hi = prices.length;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (prices[mid]! < x || (strict && prices[mid] === x)) lo = mid + 1;
          else hi = mid;
        }
        return lo;
      };
      // The oldest range's bitset is overwritten for the new one: a query's filters are used only while it runs, and a
      // fresh 12 KB each (zeroed pages) cost more than the range itself.
      let reuse: Uint32Array | undefined;
      if (this.#cache.size >= PRICE_CACHE_SIZE) {
        const oldest = this.#cache.keys().next().value!;
        reuse = this.#cache.get(oldest);
        this.#cache.delete(oldest);
      }
      bits = this.#positions(lowerBound(min, false), lowerBound(max, true), reuse ?? new Uint32Array(this.#words));
      this.#cache.set(key, bits);
    }
    return bits;
  }

  /** The docs at positions [from, to) of #byPrice, written over `bits`, from the step bitsets nearest its ends. */
  #positions(from: number, to: number, bits: Uint32Array): Uint32Array {
    if (from >= to) return bits.fill(0);
    const at = this.#stepAt;
    const byPrice = this.#byPrice;
    // Steps a <= from and b >= to, the nearest ones: docs before step b but not before step a, then the ends trimmed.
    let a = 0;
    while (a + 1 < at.length && at[a + 1]! <= from) a++;
    let b = at.length - 1;
    while (b > 0 && at[b - 1]! >= to) b--;
    const hi = this.#below[b]!;
    const lo = this.#below[a]!;
    for (let w = 0; w < bits.length; w++) bits[w] = hi[w]! & ~lo[w]!;
    for (let p = at[a]!; p < from; p++) {
      const d = byPrice[p]!;
      bits[d >>> 5]! &= ~(1 << (d & 31));
    }
    for (let p = to; p < at[b]!; p++) {
      const d = byPrice[p]!;
      bits[d >>> 5]! &= ~(1 << (d & 31));
    }
    return bits;
  }
}
