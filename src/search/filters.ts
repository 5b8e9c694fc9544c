// A query's filters as bitsets, one per parameter, so that facets can leave their own out: colour, gender, size,
// brand (full text), price range, and the store/on-sale set.
import { andInto, orInto, seek, setDocs } from "./bitset.ts";
import type { PostingTable } from "./index-data.ts";
import type { OnSale } from "./on-sale.ts";
import { tokenizeQuery } from "./tokenize.ts";
import type { SearchQuery } from "./types.ts";

/** The filters that narrow a query, each null when the query does not use it. Read-only. */
export interface ActiveFilters {
  /** On sale now in the query's stores (in any store when it names none). */
  stores: Uint32Array;
  /** On sale now in any store: what the store facet counts within. */
  onSale: Uint32Array;
  /** Whether the query names stores (the store facet then leaves `stores` out). */
  storeFiltered: boolean;
  color: Uint32Array | null;
  gender: Uint32Array | null;
  size: Uint32Array | null;
  brand: Uint32Array | null;
  price: Uint32Array | null;
}

/** A filterable value table: its lists by key, with a ready bitset for the dense ones. */
interface ValueTable {
  table: PostingTable;
  byKey: Map<string, number>;
  bits: (Uint32Array | null)[];
}

/** How many brand queries keep their terms (a few numbers each); all are forgotten when it is reached. */
const BRAND_QUERY_CACHE_SIZE = 4096;
/** How many price ranges keep their bitsets (clients offer a few fixed ranges). */
const PRICE_CACHE_SIZE = 16;
/**
 * Price steps with a ready bitset of the docs below them: a range is two of those (one ANDed with the other's
 * complement) plus at most two steps' worth of docs set or cleared at its ends, instead of every doc in it set
 * one by one (a wide range at 100,000 products: about 60 us). 64 steps hold 64 bitsets (800 KB at 100,000 docs).
 */
const PRICE_STEPS = 64;

/** Builds each filter's bitset for a query, in buffers of its own. */
export class Filters {
  readonly #words: number;
  readonly #colors: ValueTable;
  readonly #genders: ValueTable;
  readonly #sizes: ValueTable;
  readonly #brand: PostingTable;
  readonly #brandTerms: Map<string, number>;
  /** Brand terms with a ready bitset (the dense ones, as for values), by term. */
  readonly #brandBits: (Uint32Array | null)[];
  /** A brand query's terms (null: one is in no brand), for the next queries with the same text. */
  readonly #brandQueries = new Map<string, number[] | null>();
  readonly #brandScratch: Uint32Array;
  readonly #onSale: OnSale;
  /** Docs with a price, by ascending price, and those prices. */
  readonly #byPrice: Uint32Array;
  readonly #sortedPrices: Float64Array;
  readonly #priceCache = new Map<string, Uint32Array>();
  /** Positions in #byPrice where the steps start (ascending, first 0, last its length), and the docs before each. */
  readonly #stepAt: Uint32Array;
  readonly #below: Uint32Array[];
  readonly #scratch: Record<"stores" | "onSale" | "color" | "gender" | "size" | "brand", Uint32Array>;

  constructor(
    n: number,
    words: number,
    tables: { colors: PostingTable; genders: PostingTable; sizes: PostingTable; brand: PostingTable },
    prices: Float64Array,
    onSale: OnSale,
  ) {
    this.#words = words;
    const valueTable = (table: PostingTable): ValueTable => {
      const dense = Math.max(1, n >>> 5);
      const bits = table.keys.map((_, i) => {
        const from = table.offsets[i]!;
        const to = table.offsets[i + 1]!;
        if (to - from < dense) return null;
        const b = new Uint32Array(words);
        setDocs(b, table.docs, from, to);
        return b;
      });
      return { table, byKey: new Map(table.keys.map((k, i) => [k, i])), bits };
    };
    this.#colors = valueTable(tables.colors);
    this.#genders = valueTable(tables.genders);
    this.#sizes = valueTable(tables.sizes);
    this.#brand = tables.brand;
    this.#brandTerms = new Map(tables.brand.keys.map((k, i) => [k, i]));
    this.#brandBits = valueTable(tables.brand).bits;
    this.#brandScratch = new Uint32Array(words);
    this.#onSale = onSale;
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
    const buf = () => new Uint32Array(words);
    this.#scratch = { stores: buf(), onSale: buf(), color: buf(), gender: buf(), size: buf(), brand: buf() };
  }

  /** Every filter of `query` at `now` (in `interval`). */
  for(query: SearchQuery, interval: number): ActiveFilters {
    const zero = (out: Uint32Array) => out.fill(0);
    const none = this.#scratch.stores;
    const stores = this.#onSale.docs(interval, query.now, query.stores, none) ?? zero(none);
    const onSale =
      query.stores.length === 0 ? stores : this.#onSale.docs(interval, query.now, [], this.#scratch.onSale)!;
    const union = (t: ValueTable, values: readonly string[], out: Uint32Array) =>
      values.length === 0 ? null : this.#union(t, values, out);
    return {
      stores,
      onSale,
      storeFiltered: query.stores.length > 0,
      color: union(this.#colors, query.colors, this.#scratch.color),
      gender: union(this.#genders, query.genders, this.#scratch.gender),
      size: union(this.#sizes, query.sizes, this.#scratch.size),
      brand: query.brands.length === 0 ? null : this.#brandUnion(query.brands, this.#scratch.brand),
      price:
        query.minPrice === undefined && query.maxPrice === undefined
          ? null
          : this.#priceRange(query.minPrice ?? 0, query.maxPrice ?? Infinity),
    };
  }

  /** Union of a table's values' docs (a shared dense bitset when there is one value with one). */
  #union(t: ValueTable, values: readonly string[], out: Uint32Array): Uint32Array {
    if (values.length === 1) {
      const i = t.byKey.get(values[0]!);
      const dense = i === undefined ? null : t.bits[i];
      if (dense) return dense;
    }
    out.fill(0);
    for (const v of values) {
      const i = t.byKey.get(v);
      if (i === undefined) continue;
      const dense = t.bits[i];
      if (dense) orInto(out, dense);
      else setDocs(out, t.table.docs, t.table.offsets[i]!, t.table.offsets[i + 1]!);
    }
    return out;
  }

  /** A brand query's distinct terms, fewest docs first, or null when one is in no brand; kept for the next queries. */
  #brandQuery(brand: string): number[] | null {
    let lists = this.#brandQueries.get(brand);
    if (lists === undefined) {
      lists = [];
      for (const term of new Set(tokenizeQuery(brand))) {
        const t = this.#brandTerms.get(term);
        if (t === undefined) {
          lists = null;
          break;
        }
        lists.push(t);
      }
      const { offsets } = this.#brand;
      lists?.sort((a, b) => offsets[a + 1]! - offsets[a]! - (offsets[b + 1]! - offsets[b]!));
      if (this.#brandQueries.size >= BRAND_QUERY_CACHE_SIZE) this.#brandQueries.clear();
      this.#brandQueries.set(brand, lists);
    }
    return lists;
  }

  /** Docs whose brand holds every term of at least one of the brand queries. */
  #brandUnion(brands: readonly string[], out: Uint32Array): Uint32Array {
    out.fill(0);
    const { offsets, docs } = this.#brand;
    const dense = this.#brandBits;
    for (const brand of brands) {
      const lists = this.#brandQuery(brand);
      if (lists === null || lists.length === 0) continue;
      const first = lists[0]!;
      const firstBits = dense[first];
      if (firstBits) {
        // Every term is dense (the first has the fewest docs): the AND of their bitsets.
        if (lists.length === 1) orInto(out, firstBits);
        else {
          const both = this.#brandScratch;
          both.set(firstBits);
          for (let j = 1; j < lists.length; j++) andInto(both, dense[lists[j]!]!);
          orInto(out, both);
        }
        continue;
      }
      const cursor = lists.map((t) => offsets[t]!);
      outer: for (let p = offsets[first]!; p < offsets[first + 1]!; p++) {
        const d = docs[p]!;
        for (let j = 1; j < lists.length; j++) {
          const t = lists[j]!;
          const bits = dense[t];
          if (bits) {
            if ((bits[d >>> 5]! & (1 << (d & 31))) === 0) continue outer;
            continue;
          }
          const end = offsets[t + 1]!;
          const at = (cursor[j] = seek(docs, cursor[j]!, end, d));
          if (at >= end) break outer;
          if (docs[at] !== d) continue outer;
        }
        out[d >>> 5]! |= 1 << (d & 31);
      }
    }
    return out;
  }

  /** Docs priced within [min, max] cents, kept for the next queries with the same range. */
  #priceRange(min: number, max: number): Uint32Array {
    const key = `${min}-${max}`;
    let bits = this.#priceCache.get(key);
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
      if (this.#priceCache.size >= PRICE_CACHE_SIZE) {
        const oldest = this.#priceCache.keys().next().value!;
        reuse = this.#priceCache.get(oldest);
        this.#priceCache.delete(oldest);
      }
      bits = this.#positions(lowerBound(min, false), lowerBound(max, true), reuse ?? new Uint32Array(this.#words));
      this.#priceCache.set(key, bits);
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
