// A query's filters as bitsets, one per parameter, so that facets can leave their own out: colour, gender, size,
// brand (full text), price range, and the store/on-sale set.
import { andInto, orInto, seek, setDocs } from "./bitset.ts";
import type { PostingTable } from "./index-data.ts";
import type { OnSale } from "./on-sale.ts";
import { PriceRanges } from "./price-range.ts";
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

/** Builds each filter's bitset for a query, in buffers of its own. */
export class Filters {
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
  readonly #prices: PriceRanges;
  readonly #scratch: Record<"stores" | "onSale" | "color" | "gender" | "size" | "brand", Uint32Array>;

  constructor(
    n: number,
    words: number,
    tables: { colors: PostingTable; genders: PostingTable; sizes: PostingTable; brand: PostingTable },
    prices: Float64Array,
    onSale: OnSale,
  ) {
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
    this.#prices = new PriceRanges(n, words, prices);
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
          : this.#prices.range(query.minPrice ?? 0, query.maxPrice ?? Infinity),
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
}
