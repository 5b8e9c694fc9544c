// The query engine over a decoded index: filters as bitsets, then BM25F over the AND of the query terms.
import { andInto, hasDoc, orInto, popcount, seek, setDocs, wordsFor } from "./bitset.ts";
import type { PostingTable, SearchIndex, SearchIndexData } from "./index-data.ts";
import { BroadTerms } from "./broad-terms.ts";
import { OnSale } from "./on-sale.ts";
import { scorePostings } from "./scoring.ts";
import { TopK } from "./top-k.ts";
import { tokenizeQuery } from "./tokenize.ts";
import type { SearchQuery, SearchResult } from "./types.ts";

/** A facet (colour, gender, size key): its lists, by key, with a ready bitset for the dense ones. */
interface Facet {
  table: PostingTable;
  byKey: Map<string, number>;
  bits: (Uint32Array | null)[];
}

/** Terms in at least this many docs (and 1/64 of them) are "broad": see {@link BroadTerms}. */
const BROAD_MIN_DF = 1024;

function indexKeys(keys: readonly string[]): Map<string, number> {
  return new Map(keys.map((k, i) => [k, i]));
}

/** Index data plus the precomputed parts of query answering. */
class Engine implements SearchIndex {
  readonly size: number;
  readonly #words: number;
  readonly #ids: Float64Array;
  readonly #terms: Map<string, number>;
  readonly #offsets: Uint32Array;
  readonly #docs: Uint32Array;
  readonly #scores: Float32Array;
  readonly #brand: PostingTable;
  readonly #brandTerms: Map<string, number>;
  readonly #colors: Facet;
  readonly #genders: Facet;
  readonly #sizes: Facet;
  readonly #onSale: OnSale;
  readonly #broad: BroadTerms;
  readonly #filter: Uint32Array;
  readonly #union: Uint32Array;
  readonly #candidates: Uint32Array;
  readonly #top = new TopK();

  constructor(data: SearchIndexData) {
    const n = data.ids.length;
    this.size = n;
    this.#words = wordsFor(n);
    this.#ids = data.ids;
    this.#terms = indexKeys(data.text.keys);
    this.#offsets = data.text.offsets;
    this.#docs = data.text.docs;
    this.#scores = scorePostings(data);
    this.#brand = data.brand;
    this.#brandTerms = indexKeys(data.brand.keys);
    this.#colors = this.#facet(data.colors);
    this.#genders = this.#facet(data.genders);
    this.#sizes = this.#facet(data.sizes);
    this.#onSale = new OnSale(data.windows, this.#words);
    this.#broad = new BroadTerms(this.#offsets, this.#docs, this.#scores, this.#words, Math.max(BROAD_MIN_DF, n >>> 6));
    this.#filter = new Uint32Array(this.#words);
    this.#union = new Uint32Array(this.#words);
    this.#candidates = new Uint32Array(this.#words);
  }

  #facet(table: PostingTable): Facet {
    const dense = Math.max(1, this.size >>> 5);
    const bits = table.keys.map((_, i) => {
      const from = table.offsets[i]!;
      const to = table.offsets[i + 1]!;
      if (to - from < dense) return null;
      const b = new Uint32Array(this.#words);
      setDocs(b, table.docs, from, to);
      return b;
    });
    return { table, byKey: indexKeys(table.keys), bits };
  }

  /** Union of a facet's values' docs; null when no value is known (matches nothing). */
  #facetUnion(facet: Facet, values: readonly string[]): Uint32Array | null {
    if (values.length === 1) {
      const i = facet.byKey.get(values[0]!);
      if (i === undefined) return null;
      const dense = facet.bits[i];
      if (dense) return dense;
    }
    const out = this.#union;
    out.fill(0);
    let known = false;
    for (const v of values) {
      const i = facet.byKey.get(v);
      if (i === undefined) continue;
      known = true;
      const dense = facet.bits[i];
      if (dense) orInto(out, dense);
      else setDocs(out, facet.table.docs, facet.table.offsets[i]!, facet.table.offsets[i + 1]!);
    }
    return known ? out : null;
  }

  /** Docs whose brand holds every term of at least one of the brand queries; null if none can. */
  #brandUnion(brands: readonly string[]): Uint32Array | null {
    const out = this.#union;
    out.fill(0);
    const { offsets, docs } = this.#brand;
    let any = false;
    for (const brand of brands) {
      const lists: number[] = [];
      for (const term of new Set(tokenizeQuery(brand))) {
        const t = this.#brandTerms.get(term);
        if (t === undefined) {
          lists.length = 0;
          break;
        }
        lists.push(t);
      }
      if (lists.length === 0) continue;
      any = true;
      lists.sort((a, b) => offsets[a + 1]! - offsets[a]! - (offsets[b + 1]! - offsets[b]!));
      const cursor = lists.map((t) => offsets[t]!);
      const first = lists[0]!;
      outer: for (let p = offsets[first]!; p < offsets[first + 1]!; p++) {
        const d = docs[p]!;
        for (let j = 1; j < lists.length; j++) {
          const end = offsets[lists[j]! + 1]!;
          const at = (cursor[j] = seek(docs, cursor[j]!, end, d));
          if (at >= end) break outer;
          if (docs[at] !== d) continue outer;
        }
        out[d >>> 5]! |= 1 << (d & 31);
      }
    }
    return any ? out : null;
  }

  /** The filter bitset for a query, or null when nothing can match. */
  #filterFor(query: SearchQuery, interval: number): Uint32Array | null {
    // Several stores are ORed into #filter, which the other filters then narrow in place.
    let bits = this.#onSale.docs(interval, query.now, query.stores, this.#filter);
    if (bits === null) return null;
    const narrow = (other: Uint32Array | null): boolean => {
      if (other === null) return false;
      if (bits !== this.#filter) {
        this.#filter.set(bits!);
        bits = this.#filter;
      }
      andInto(bits, other);
      return true;
    };
    if (query.colors.length > 0 && !narrow(this.#facetUnion(this.#colors, query.colors))) return null;
    if (query.genders.length > 0 && !narrow(this.#facetUnion(this.#genders, query.genders))) return null;
    if (query.sizes.length > 0 && !narrow(this.#facetUnion(this.#sizes, query.sizes))) return null;
    if (query.brands.length > 0 && !narrow(this.#brandUnion(query.brands))) return null;
    return bits;
  }

  search(query: SearchQuery): SearchResult {
    const interval = this.#onSale.interval(query.now);
    const nextChange = this.#onSale.nextChange(interval);
    const none: SearchResult = { ids: [], total: 0, nextChange };

    const terms: number[] = [];
    for (const word of new Set(tokenizeQuery(query.q))) {
      const t = this.#terms.get(word);
      if (t === undefined) return none;
      terms.push(t);
    }
    if (terms.length === 0) return none;
    const filter = this.#filterFor(query, interval);
    if (filter === null) return none;

    const offsets = this.#offsets;
    const docs = this.#docs;
    terms.sort((x, y) => offsets[x + 1]! - offsets[x]! - (offsets[y + 1]! - offsets[y]!));
    const start = Math.max(0, Math.floor(query.start));
    const rows = Math.max(0, Math.floor(query.rows));
    if (terms.length === 1 && this.#broad.has(terms[0]!)) {
      // Best first: reads about (start + rows) * df / total postings, never more than a scan would (measured
      // faster than the scan even with filters that keep 1% of the term's docs).
      const t = terms[0]!;
      const total = this.#broad.total(t, filter);
      const page = start < total ? this.#broad.page(t, offsets, docs, filter, start, rows) : [];
      return { ids: page.map((d) => this.#ids[d]!), total, nextChange };
    }
    const top = this.#top;
    top.reset(rows > 0 ? Math.min(start + rows, this.size) : 0);
    const total = this.#score(terms, filter, top);
    const ids = top.page(start).map((d) => this.#ids[d]!);
    return { ids, total, nextChange };
  }

  /**
   * Offers every doc in `filter` that has all the terms (sorted rarest first) to `top`, with its score;
   * returns how many there were. The broad terms' doc sets are ANDed into the filter first, so most
   * candidates are rejected by one bit test; when every term is broad, the candidates are that set itself.
   */
  #score(terms: number[], filter: Uint32Array, top: TopK): number {
    const offsets = this.#offsets;
    const docs = this.#docs;
    const scores = this.#scores;
    const m = terms.length;
    let candidates = filter;
    let allBroad = true;
    for (const t of terms) {
      if (!this.#broad.has(t)) {
        allBroad = false;
        continue;
      }
      if (candidates !== this.#candidates) {
        this.#candidates.set(candidates);
        candidates = this.#candidates;
      }
      andInto(candidates, this.#broad.bits(t));
    }
    const cursor = new Uint32Array(m);
    const ends = new Uint32Array(m);
    for (let j = 0; j < m; j++) {
      cursor[j] = offsets[terms[j]!]!;
      ends[j] = offsets[terms[j]! + 1]!;
    }
    let total = 0;

    if (allBroad) {
      // Every candidate has every term: walk its bits in doc order; each term's posting is found by rank.
      const sets = terms.map((t) => this.#broad.bits(t));
      const ranks = terms.map((t) => this.#broad.ranks(t));
      for (let w = 0; w < candidates.length; w++) {
        let x = candidates[w]!;
        while (x !== 0) {
          const low = x & -x;
          x ^= low;
          const d = (w << 5) | (31 - Math.clz32(low));
          let score = 0;
          for (let j = 0; j < m; j++) {
            score += scores[cursor[j]! + ranks[j]![w]! + popcount(sets[j]![w]! & (low - 1))]!;
          }
          total++;
          top.offer(score, d);
        }
      }
      return total;
    }

    const firstEnd = ends[0]!;
    outer: for (let p = cursor[0]!; p < firstEnd; p++) {
      const d = docs[p]!;
      if (!hasDoc(candidates, d)) continue;
      let score = scores[p]!;
      for (let j = 1; j < m; j++) {
        const end = ends[j]!;
        let at = cursor[j]!;
        if (docs[at]! < d) at = seek(docs, at, end, d);
        cursor[j] = at;
        if (at >= end) break outer;
        if (docs[at] !== d) continue outer;
        score += scores[at]!;
      }
      total++;
      top.offer(score, d);
    }
    return total;
  }
}

/** Prepares decoded index data for queries: scores every posting, indexes keys, builds dense bitsets. */
export function createSearchEngine(data: SearchIndexData): SearchIndex {
  return new Engine(data);
}
