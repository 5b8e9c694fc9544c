// Facet counts over a search's matches: brand, colour, size, store, gender and category, each counted with every
// filter but its own (disjunctive, as Algolia and Typesense count), top 20 values by count.
import { andInto, countAnd } from "./bitset.ts";
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

/** The docs of a set, ascending, into `out`; returns how many. */
function listDocs(set: Uint32Array, out: Uint32Array): number {
  let count = 0;
  for (let w = 0; w < set.length; w++) {
    let x = set[w]!;
    while (x !== 0) {
      const low = x & -x;
      x ^= low;
      out[count++] = (w << 5) | (31 - Math.clz32(low));
    }
  }
  return count;
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

/** Counts facets; holds the per-doc values, one scratch bitset and one scratch doc list. */
export class FacetCounter {
  readonly #values: Record<Exclude<FacetName, "store">, DocValues>;
  readonly #scratch: Uint32Array;
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
    this.#list = new Uint32Array(n);
  }

  /**
   * Counts each facet asked for (in {@link FACET_NAMES} order): over `matches` (every filter applied) when the
   * query does not filter on that facet, else over `text` (the text matches on sale in any store, within the
   * price range) narrowed by every other filter. `stores` holds each store's on-sale set, by store name.
   * `matchList` holds the docs of `matches`, ascending, in [0, matchCount).
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
    const out: Partial<Record<FacetName, FacetValues>> = {};
    for (const name of FACET_NAMES) {
      if (!names.includes(name)) continue;
      let set = matches;
      if (ownFilter(name, f) !== null && text !== null) {
        set = this.#scratch;
        set.set(text);
        for (const other of FACET_NAMES) {
          const filter = other === name ? null : ownFilter(other, f);
          if (filter) andInto(set, filter);
        }
      }
      if (name === "store") {
        const counts = stores.map(([, bits]) => countAnd(set, bits));
        out.store = top(
          stores.map(([s]) => s),
          counts,
        );
        continue;
      }
      const dv = this.#values[name];
      dv.counts.fill(0);
      if (set === matches) tally(dv, matchList, matchCount);
      else tally(dv, this.#list, listDocs(set, this.#list));
      out[name] = top(dv.keys, dv.counts);
    }
    return out;
  }
}
