// The query engine over a decoded index: filters as bitsets, query words expanded (typos, prefix), the AND of the
// words' doc sets ranked by penalty then BM25F (or sorted by price, discount or newness), facets counted.
import { andInto, andOf, countAnd, listDocs, wordsFor } from "./bitset.ts";
import { BroadTerms } from "./broad-terms.ts";
import { Dictionary } from "./dictionary.ts";
import { FacetCounter } from "./facets.ts";
import type { ActiveFilters } from "./filters.ts";
import { Filters } from "./filters.ts";
import type { SearchIndex, SearchIndexData } from "./index-data.ts";
import { OnSale } from "./on-sale.ts";
import type { WordTerms } from "./ranking.ts";
import { Expander, Ranker } from "./ranking.ts";
import { scorePostings } from "./scoring.ts";
import { SortedTopK } from "./sorted-top-k.ts";
import { TopK } from "./top-k.ts";
import type { FacetName, FacetValues, SearchQuery, SearchResult, SortOrder } from "./types.ts";
import { FACET_NAMES } from "./types.ts";
import { queryWords } from "./words.ts";

/** Terms in at least this many docs (and 1/64 of them) are "broad": see {@link BroadTerms}. */
const BROAD_MIN_DF = 1024;

/** Index data plus the precomputed parts of query answering. */
class Engine implements SearchIndex {
  readonly size: number;
  readonly #ids: Float64Array;
  readonly #offsets: Uint32Array;
  readonly #docs: Uint32Array;
  readonly #prices: Float64Array;
  readonly #discounts: Uint16Array;
  readonly #storeNames: string[];
  readonly #onSale: OnSale;
  readonly #broad: BroadTerms;
  readonly #filters: Filters;
  readonly #expander: Expander;
  readonly #ranker: Ranker;
  readonly #facets: FacetCounter;
  readonly #filter: Uint32Array;
  readonly #word: Uint32Array;
  readonly #matches: Uint32Array;
  readonly #text: Uint32Array;
  readonly #top = new TopK();
  readonly #sorted = new SortedTopK();

  constructor(data: SearchIndexData) {
    const n = data.ids.length;
    const words = wordsFor(n);
    this.size = n;
    this.#ids = data.ids;
    this.#offsets = data.text.offsets;
    this.#docs = data.text.docs;
    this.#prices = data.prices;
    this.#discounts = data.discounts;
    this.#storeNames = data.windows.storeNames;
    const scores = scorePostings(data);
    this.#onSale = new OnSale(data.windows, words, n);
    this.#broad = new BroadTerms(this.#offsets, this.#docs, scores, words, Math.max(BROAD_MIN_DF, n >>> 6));
    this.#filters = new Filters(
      n,
      words,
      { colors: data.colors, genders: data.genders, sizes: data.sizes, brand: data.brand },
      data.prices,
      this.#onSale,
    );
    const terms = new Map(data.text.keys.map((k, i) => [k, i]));
    this.#expander = new Expander(terms, new Dictionary(data.dictionary), this.#offsets);
    this.#ranker = new Ranker(this.#offsets, this.#docs, scores, this.#broad, n);
    this.#facets = new FacetCounter(n, words, {
      brand: data.brandNames,
      color: data.colors,
      size: data.sizes,
      gender: data.genders,
      category: data.categories,
    });
    this.#filter = new Uint32Array(words);
    this.#word = new Uint32Array(words);
    this.#matches = new Uint32Array(words);
    this.#text = new Uint32Array(words);
  }

  /** Every filter but the store ANDed onto the store set; the stores' own set when there is nothing else. */
  #baseFilter(f: ActiveFilters): Uint32Array {
    const others = [f.color, f.gender, f.size, f.brand, f.price].filter((b) => b !== null);
    if (others.length === 0) return f.stores;
    andOf(this.#filter, f.stores, others[0]!);
    for (let i = 1; i < others.length; i++) andInto(this.#filter, others[i]!);
    return this.#filter;
  }

  search(query: SearchQuery): SearchResult {
    const interval = this.#onSale.interval(query.now);
    const nextChange = this.#onSale.nextChange(interval);
    const facetNames = query.facets ?? [];
    const withFacets = (result: SearchResult, counts?: Partial<Record<FacetName, FacetValues>>) => {
      if (facetNames.length === 0) return result;
      const facets: Partial<Record<FacetName, FacetValues>> = {};
      for (const name of FACET_NAMES) if (facetNames.includes(name)) facets[name] = counts?.[name] ?? [];
      return { ...result, facets };
    };
    const none = withFacets({ ids: [], total: 0, nextChange });

    const words: WordTerms[] = [];
    for (const word of queryWords(query.q, query.typos ?? true, query.prefix ?? false)) {
      const terms = this.#expander.expand(word);
      if (terms === null) return none;
      words.push(terms);
    }
    if (words.length === 0) return none;
    const f = this.#filters.for(query, interval);
    const base = this.#baseFilter(f);
    const sort: SortOrder = query.sort ?? "relevance";
    const start = Math.max(0, Math.floor(query.start));
    const rows = Math.max(0, Math.floor(query.rows));

    if (words.length === 1 && sort === "relevance") {
      // One word whose exact term is broad: its best postings first, read only as far as the page, when the
      // page is within the exact matches (every other match has a penalty and ranks after them).
      const w = words[0]!;
      const exact = w.costs[0] === 0 ? w.terms[0]! : -1;
      if (exact >= 0 && this.#broad.has(exact)) {
        const exactTotal = this.#broad.total(exact, base);
        if (start + rows <= exactTotal || w.terms.length === 1) {
          const page = start < exactTotal ? this.#broad.page(exact, this.#offsets, this.#docs, base, start, rows) : [];
          const ids = page.map((d) => this.#ids[d]!);
          if (facetNames.length === 0) {
            const total = w.terms.length === 1 ? exactTotal : countAnd(base, this.#ranker.wordSet(w, this.#word));
            return { ids, docs: page, total, nextChange };
          }
          // Facets count every match: listed (into the ranker's list), not ranked, as the page is known.
          const { matches, text } = this.#matchSets(words, base, f, facetNames);
          const total = listDocs(matches, this.#ranker.matches);
          return withFacets(
            { ids, docs: page, total, nextChange },
            this.#countFacets(facetNames, matches, total, text, f, query),
          );
        }
      }
    }

    if (facetNames.length === 0) {
      // A word with one narrow term: its postings in the filters, narrowed by the other words, no bitset made.
      const total = this.#ranker.rankNarrow(words, base);
      if (total >= 0) {
        const docs = this.#page(sort, total, start, rows, query.now, interval);
        return { ids: docs.map((d) => this.#ids[d]!), docs, total, nextChange };
      }
    }

    const { matches, text } = this.#matchSets(words, base, f, facetNames);
    const total = this.#ranker.rank(words, matches);
    const docs = this.#page(sort, total, start, rows, query.now, interval);
    const ids = docs.map((d) => this.#ids[d]!);
    if (facetNames.length === 0) return { ids, docs, total, nextChange };
    return withFacets({ ids, docs, total, nextChange }, this.#countFacets(facetNames, matches, total, text, f, query));
  }

  /**
   * The matches: the filters ANDed with each word's set. With facets that leave out their own filter, also the text
   * matches on sale anywhere within the price range (else null).
   */
  #matchSets(
    words: readonly WordTerms[],
    base: Uint32Array,
    f: ActiveFilters,
    facetNames: readonly FacetName[],
  ): { matches: Uint32Array; text: Uint32Array | null } {
    const ownFiltered = facetNames.some((name) =>
      name === "store" ? f.storeFiltered : name !== "category" && f[name] !== null,
    );
    const matches = this.#matches;
    const text = ownFiltered ? this.#text : null;
    // The first word's set is ANDed as it is copied in: one pass less than a copy and then an AND.
    words.forEach((w, i) => {
      const set = this.#ranker.wordSet(w, this.#word);
      if (i === 0) andOf(matches, base, set);
      else andInto(matches, set);
      if (text && i === 0) {
        andOf(text, f.onSale, set);
        if (f.price) andInto(text, f.price);
      } else if (text) andInto(text, set);
    });
    return { matches, text };
  }

  /** The facets asked for, over `matches` (listed in the ranker's list, `total` of them) and `text`. */
  #countFacets(
    facetNames: readonly FacetName[],
    matches: Uint32Array,
    total: number,
    text: Uint32Array | null,
    f: ActiveFilters,
    query: SearchQuery,
  ): Partial<Record<FacetName, FacetValues>> {
    const interval = this.#onSale.interval(query.now);
    const stores = this.#storeNames.map((s): [string, Uint32Array] => [
      s,
      this.#onSale.docs(interval, query.now, [s], this.#word)!,
    ]);
    return this.#facets.count(facetNames, matches, this.#ranker.matches, total, text, f, stores);
  }

  /** Docs of ranks [start, start + rows) of the ranker's matches in the given order. */
  #page(sort: SortOrder, count: number, start: number, rows: number, now: number, interval: number): number[] {
    const { matches, keys } = this.#ranker;
    const k = rows > 0 ? Math.min(start + rows, count) : 0;
    if (sort === "relevance") {
      const top = this.#top;
      top.reset(k);
      top.offerAll(keys, matches, count);
      return top.page(start);
    }
    const top = this.#sorted;
    top.reset(k);
    const prices = this.#prices;
    if (sort === "price_asc" || sort === "price_desc") {
      const sign = sort === "price_asc" ? -1 : 1;
      for (let i = 0; i < count; i++) {
        const d = matches[i]!;
        const p = prices[d]!;
        top.offer(p >= 0 ? sign * p : -Infinity, keys[i]!, d);
      }
    } else {
      const values = sort === "discount" ? this.#discounts : this.#onSale.begins(interval, now);
      for (let i = 0; i < count; i++) top.offer(values[matches[i]!]!, keys[i]!, matches[i]!);
    }
    return top.page(start);
  }
}

/** Prepares decoded index data for queries: scores every posting, indexes keys, builds dense bitsets. */
export function createSearchEngine(data: SearchIndexData): SearchIndex {
  return new Engine(data);
}
