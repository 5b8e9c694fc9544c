// Facet counts over a search's matches: brand, colour, size, store, gender and category, each counted with every
// filter but its own (disjunctive, as Algolia and Typesense count), top 20 values by count.
import { andInto, countAnd, listDocs } from "./bitset.ts";
import type { ActiveFilters } from "./filters.ts";
import type { PostingTable } from "./index-data.ts";
import type { FacetName, FacetValues } from "./types.ts";
import { FACET_NAMES } from "./types.ts";

/** Most values listed per facet. */
export const FACET_VALUES_LIMIT = 20;

/**
 * A facet's values per doc (the posting table inverted) and a count per value; for a facet with at most one value a
 * doc (brand, gender), that value per doc directly (-1 for none), which a count reads with one load instead of three.
 */
interface DocValues {
  keys: string[];
  offsets: Uint32Array;
  values: Uint32Array;
  single: Int32Array | null;
  counts: Uint32Array;
}

function invert(table: PostingTable, n: number): DocValues {
  const offsets = new Uint32Array(n + 1);
  for (const d of table.docs) offsets[d + 1]!++;
  for (let d = 0; d < n; d++) offsets[d + 1]! += offsets[d]!;
  const fill = offsets.slice(0, n);
  const values = new Uint32Array(table.docs.length);
  for (let v = 0; v < table.keys.length; v++) {
    for (let p = table.offsets[v]!; p < table.offsets[v + 1]!; p++) values[fill[table.docs[p]!]!++] = v;
  }
  let single: Int32Array | null = new Int32Array(n).fill(-1);
  for (let d = 0; d < n && single; d++) {
    const count = offsets[d + 1]! - offsets[d]!;
    if (count > 1) single = null;
    else if (count === 1) single[d] = values[offsets[d]!]!;
  }
  return { keys: table.keys, offsets, values, single, counts: new Uint32Array(table.keys.length) };
}

/** Adds docs[0, count)'s values to the facet's counts. */
function tally(dv: DocValues, docs: Uint32Array, count: number): void {
  const { single, counts } = dv;
  if (single) {
    for (let i = 0; i < count; i++) {
      const v = single[docs[i]!]!;
      if (v >= 0) counts[v]!++;
    }
    return;
  }
  const { offsets, values } = dv;
  for (let i = 0; i < count; i++) {
    const d = docs[i]!;
    for (let p = offsets[d]!, end = offsets[d + 1]!; p < end; p++) counts[values[p]!]!++;
  }
}

/** The filter of `filters` that facet `name` leaves out, if the query uses it. */
function ownFilter(name: FacetName, f: ActiveFilters): Uint32Array | null {
  switch (name) {
    case "store":
      return f.storeFiltered ? f.stores : null;
    case "category":
      return null;
    default:
      return f[name];
  }
}

/** The most frequent values (ties by value, as the keys are sorted), at most {@link FACET_VALUES_LIMIT}. */
function top(keys: readonly string[], counts: ArrayLike<number>): FacetValues {
  const best: number[] = [];
  for (let v = 0; v < counts.length; v++) {
    const c = counts[v]!;
    if (c === 0) continue;
    if (best.length === FACET_VALUES_LIMIT && c <= counts[best[best.length - 1]!]!) continue;
    let i = best.length;
    while (i > 0 && counts[best[i - 1]!]! < c) i--;
    best.splice(i, 0, v);
    if (best.length > FACET_VALUES_LIMIT) best.pop();
  }
  return best.map((v) => ({ value: keys[v]!, count: counts[v]! }));
}

/** Counts facets; holds the per-doc values, a scratch bitset and scratch doc lists. */
export class FacetCounter {
  readonly #values: Record<Exclude<FacetName, "store">, DocValues>;
  readonly #scratch: Uint32Array;
  /** The text matches, ascending; per doc, a bit for each filter (by FACET_NAMES index) it fails; one facet's docs. */
  readonly #text: Uint32Array;
  readonly #fails: Uint8Array;
  readonly #list: Uint32Array;

  constructor(n: number, words: number, tables: Record<Exclude<FacetName, "store">, PostingTable>) {
    this.#values = {
      brand: invert(tables.brand, n),
      color: invert(tables.color, n),
      size: invert(tables.size, n),
      gender: invert(tables.gender, n),
      category: invert(tables.category, n),
    };
    this.#scratch = new Uint32Array(words);
    this.#text = new Uint32Array(n);
    this.#fails = new Uint8Array(n);
    this.#list = new Uint32Array(n);
  }

  /**
   * Counts each facet asked for (in {@link FACET_NAMES} order): over `matches` (every filter applied) when the
   * query does not filter on that facet, else over `text` (the text matches on sale in any store, within the
   * price range) narrowed by every other filter. `matchList` holds the docs of `matches`, ascending, in
   * [0, matchCount); `stores` holds each store's on-sale set, by store name.
   */
  count(
    names: readonly FacetName[],
    matches: Uint32Array,
    matchList: Uint32Array,
    matchCount: number,
    text: Uint32Array | null,
    f: ActiveFilters,
    stores: readonly [string, Uint32Array][],
  ): Partial<Record<FacetName, FacetValues>> {
    const words = matches.length;
    const filters = FACET_NAMES.map((name) => (text === null ? null : ownFilter(name, f)));
    // A facet that leaves its own filter out counts the text matches that pass every other filter. Up to one
    // doc per bitset word, the text matches are listed once with the filters each fails (a bit test a filter);
    // above, each such facet's set is made by bitset passes, which then cost less.
    const textCount = text === null ? 0 : listDocs(text, this.#text);
    const sparse = textCount <= words;
    if (sparse) {
      const docs = this.#text;
      const fails = this.#fails;
      fails.fill(0, 0, textCount);
      filters.forEach((bits, k) => {
        if (bits === null) return;
        for (let i = 0; i < textCount; i++) {
          const d = docs[i]!;
          if ((bits[d >>> 5]! & (1 << (d & 31))) === 0) fails[i]! |= 1 << k;
        }
      });
    }
    const out: Partial<Record<FacetName, FacetValues>> = {};
    FACET_NAMES.forEach((name, k) => {
      if (!names.includes(name)) return;
      let set: Uint32Array | null = matches;
      let list = matchList;
      let count = matchCount;
      if (filters[k] !== null) {
        list = this.#list;
        count = 0;
        if (sparse) {
          set = null;
          const others = ~(1 << k);
          const docs = this.#text;
          const fails = this.#fails;
          for (let i = 0; i < textCount; i++) if ((fails[i]! & others) === 0) list[count++] = docs[i]!;
        } else {
          set = this.#scratch;
          set.set(text!);
          filters.forEach((bits, j) => {
            if (bits !== null && j !== k) andInto(set!, bits);
          });
          count = listDocs(set, list);
        }
      }
      if (name === "store") {
        out.store = top(
          stores.map(([s]) => s),
          stores.map(([, bits]) => (set !== null && count > words ? countAnd(set, bits) : countIn(list, count, bits))),
        );
        return;
      }
      const dv = this.#values[name];
      dv.counts.fill(0);
      tally(dv, list, count);
      out[name] = top(dv.keys, dv.counts);
    });
    return out;
  }
}

/** How many of docs[0, count) are in `bits`. */
function countIn(docs: Uint32Array, count: number, bits: Uint32Array): number {
  let c = 0;
  for (let i = 0; i < count; i++) {
    const d = docs[i]!;
    if ((bits[d >>> 5]! & (1 << (d & 31))) !== 0) c++;
  }
  return c;
}
