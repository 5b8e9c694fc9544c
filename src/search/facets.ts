// Facet counts over a search's matches: brand, colour, size, store, gender and category, each counted with every
// filter but its own (disjunctive, as Algolia and Typesense count), top 20 values by count.
import { andInto, countAnd } from "./bitset.ts";
import type { ActiveFilters } from "./filters.ts";
import type { PostingTable } from "./index-data.ts";
import type { FacetName, FacetValues } from "./types.ts";
import { FACET_NAMES } from "./types.ts";

/** Most values listed per facet. */
export const FACET_VALUES_LIMIT = 20;

/** A facet's values per doc (the posting table inverted) and a count per value. */
interface DocValues {
  keys: string[];
  offsets: Uint32Array;
  values: Uint32Array;
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
  return { keys: table.keys, offsets, values, counts: new Uint32Array(table.keys.length) };
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

/** Counts facets; holds the per-doc values and one scratch bitset. */
export class FacetCounter {
  readonly #values: Record<Exclude<FacetName, "store">, DocValues>;
  readonly #scratch: Uint32Array;

  constructor(n: number, words: number, tables: Record<Exclude<FacetName, "store">, PostingTable>) {
    this.#values = {
      brand: invert(tables.brand, n),
      color: invert(tables.color, n),
      size: invert(tables.size, n),
      gender: invert(tables.gender, n),
      category: invert(tables.category, n),
    };
    this.#scratch = new Uint32Array(words);
  }

  /**
   * Counts each facet asked for (in {@link FACET_NAMES} order): over `matches` (every filter applied) when the
   * query does not filter on that facet, else over `text` (the text matches on sale in any store, within the
   * price range) narrowed by every other filter. `stores` holds each store's on-sale set, by store name.
   */
  count(
    names: readonly FacetName[],
    matches: Uint32Array,
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
      const { offsets, values, counts } = dv;
      counts.fill(0);
      for (let w = 0; w < set.length; w++) {
        let x = set[w]!;
        while (x !== 0) {
          const low = x & -x;
          x ^= low;
          const d = (w << 5) | (31 - Math.clz32(low));
          for (let p = offsets[d]!; p < offsets[d + 1]!; p++) counts[values[p]!]!++;
        }
      }
      out[name] = top(dv.keys, counts);
    }
    return out;
  }
}
