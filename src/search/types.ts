// What the search index is built from and what a query asks and gets back.
import { DEFAULT_ROWS } from "./limits.ts";
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
  /** Its categories, for the `category` facet (none if absent). */
  categories?: readonly string[] | undefined;
  /**
   * Its price in cents: the lowest sale price among its SKUs for sale (among all its SKUs if none is), for
   * `sort=price_*` and `min_price`/`max_price`. Absent: never in a price range, last in a price sort.
   */
  price?: number | undefined;
  /** Its largest percentage off among the same SKUs, in basis points (0..10000), for `sort=discount`. */
  discount?: number | undefined;
}

/** The orders a search can be sorted in; every one breaks ties by relevance, then by product ID. */
export const SORT_ORDERS = ["relevance", "price_asc", "price_desc", "discount", "newest"] as const;
export type SortOrder = (typeof SORT_ORDERS)[number];

/** The facets a search can count, in the order a result lists them. */
export const FACET_NAMES = ["brand", "color", "size", "store", "gender", "category"] as const;
export type FacetName = (typeof FACET_NAMES)[number];

/** One facet's values with their counts, most frequent first, ties by value. */
export type FacetValues = { value: string; count: number }[];

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
  /** Typo tolerance (see `src/search/words.ts`); default true. */
  typos?: boolean | undefined;
  /** The last query word also matches the words it begins (3 letters or more); default false. */
  prefix?: boolean | undefined;
  /** Default `relevance`. */
  sort?: SortOrder | undefined;
  /** Inclusive price range in cents; absent = unbounded. */
  minPrice?: number | undefined;
  maxPrice?: number | undefined;
  /** Facets to count over every match (each without its own filter); absent or empty = none. */
  facets?: readonly FacetName[] | undefined;
}

/** A query for `q` at `now` (epoch seconds): no filters, the first DEFAULT_ROWS results; `over` sets any field. */
export function searchQuery(q: string, now: number, over: Partial<SearchQuery> = {}): SearchQuery {
  return { q, brands: [], stores: [], colors: [], genders: [], sizes: [], start: 0, rows: DEFAULT_ROWS, now, ...over };
}

export interface SearchResult {
  /** Product IDs of results [start, start + rows), best first, ties by ID ascending. */
  ids: number[];
  /**
   * The same results' doc numbers in the index (0 to its size - 1, in ascending ID order), when the index gives them:
   * per-product data of a caller can then be an array indexed by them rather than a map by ID.
   */
  docs?: number[];
  /** Every match, not just this page. */
  total: number;
  /**
   * Epoch seconds of the next instant after `now` at which some product's on-sale state may change
   * (the next window start or end anywhere in the index), or null if none: the answer stays valid until then.
   */
  nextChange: number | null;
  /** Only when the query asked for facets: each one asked for, in {@link FACET_NAMES} order, up to 20 values. */
  facets?: Partial<Record<FacetName, FacetValues>>;
}
