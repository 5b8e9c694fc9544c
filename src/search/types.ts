// What the search index is built from and what a query asks and gets back.
import type { ColorGroup, Gender, Store } from "../catalog/schema.ts";

/** One product as the index sees it. */
export interface SearchDoc {
  /** Product ID: a positive integer below 2^53, unique. */
  id: number;
  /** Full text, weighted above the description. */
  name: string;
  /** Full text: the product's `content.description`. */
  description: string;
  /** Its own field, only for the `brand=` filter (full text: `calvin` matches "Calvin Klein"). */
  brand: string;
  /** Colour groups of its SKUs (duplicates are fine). */
  colorGroups: readonly ColorGroup[];
  /** Size keys of its SKUs, e.g. `WoSh:8.5` (duplicates are fine). */
  sizeKeys: readonly string[];
  gender?: Gender | undefined;
  /**
   * When and where it is on sale: half-open [from, to) in epoch seconds, `to` null = open-ended. A product
   * may have several windows, in different stores; with none it is indexed but never found.
   */
  windows: readonly { from: number; to: number | null; store: Store }[];
}

/** A parsed, validated search: the handler has already turned `children` into `kids` and checked ranges. */
export interface SearchQuery {
  /** Full text: every term must match, in the name or the description. Only stop words ("the") finds nothing. */
  q: string;
  /**
   * Each entry is full text over the brand (its terms ANDed; an entry of only stop words matches nothing);
   * entries are ORed. Empty = no brand filter.
   */
  brands: readonly string[];
  /** ORed; empty = any store. */
  stores: readonly Store[];
  /** ORed; a product matches if any SKU has the group. Empty = any. */
  colors: readonly ColorGroup[];
  /** ORed; empty = any (products without a gender are then found too). */
  genders: readonly Gender[];
  /** ORed exact size keys; a product matches if any SKU has one. Empty = any. */
  sizes: readonly string[];
  /** Offset of the first result returned, >= 0. */
  start: number;
  /** How many results to return from `start`, >= 0 (the API allows 1..MAX_ROWS). */
  rows: number;
  /** The request's instant in epoch seconds: only products on sale now (in one of `stores`, if given). */
  now: number;
}

export interface SearchResult {
  /** Product IDs of results [start, start + rows), best first, ties by ID ascending. */
  ids: number[];
  /** Every match, not just this page. */
  total: number;
  /**
   * Epoch seconds of the next instant after `now` at which some product's on-sale state may change
   * (the next window start or end anywhere in the index), or null if none: the answer stays valid until then.
   */
  nextChange: number | null;
}
