// The search index in memory: the decoded file's tables, and the queryable index (shared by the format and the engine).
import type { DictionaryData } from "./dictionary.ts";
import type { SearchQuery, SearchResult } from "./types.ts";

/** A loaded index, ready for queries. */
export interface SearchIndex {
  /** Runs one query; synchronous, allocation-light, safe to call for every request. */
  search(query: SearchQuery): SearchResult;
  /** Number of products in the index (on sale or not). */
  readonly size: number;
}

/** Parameters of the relevance formula, stored in the file so that a loader scores as the builder meant. */
export interface Bm25Params {
  k1: number;
  nameWeight: number;
  nameB: number;
  descriptionWeight: number;
  descriptionB: number;
}

/** Keys with a sorted list of doc numbers each: the docs of key i are docs[offsets[i] .. offsets[i + 1]). */
export interface PostingTable {
  keys: string[];
  offsets: Uint32Array;
  docs: Uint32Array;
}

/** The text postings also carry per-field term frequencies. */
export interface TextPostingTable extends PostingTable {
  nameTf: Uint16Array;
  descriptionTf: Uint16Array;
}

/** Sale windows, grouped: group g is on sale in [from[g], to[g]) (to = Infinity: open) in stores[store[g]]. */
export interface WindowTable {
  storeNames: string[];
  from: Float64Array;
  to: Float64Array;
  store: Uint8Array;
  offsets: Uint32Array;
  docs: Uint32Array;
}

/**
 * Everything the file holds, decoded. Doc numbers are dense, 0..n-1, in ascending product ID order, so
 * ordering by doc number is ordering by ID.
 */
export interface SearchIndexData {
  params: Bm25Params;
  ids: Float64Array;
  nameLengths: Uint32Array;
  descriptionLengths: Uint32Array;
  text: TextPostingTable;
  brand: PostingTable;
  colors: PostingTable;
  genders: PostingTable;
  sizes: PostingTable;
  windows: WindowTable;
  /** Whole brand names (`Calvin Klein`), for the brand facet: each doc is in exactly one list. */
  brandNames: PostingTable;
  categories: PostingTable;
  /** Per doc: price in cents, -1 for none; largest discount in basis points. */
  prices: Float64Array;
  discounts: Uint16Array;
  dictionary: DictionaryData;
}
