// `/v1/products?q=...`: the search parameters of contract §5, each validated with a 400 that names it.
import { PRICE_PARAM_RE } from "../../api/parameter-rules.ts";
import { COLOR_GROUPS, GENDERS, SIZE_KEY_RE, STORES } from "../../catalog/schema.ts";
import type { ColorGroup, Gender, Store } from "../../catalog/schema.ts";
import { invalidParameter } from "../../errors.ts";
import {
  DEFAULT_ROWS,
  MAX_FILTER_VALUES,
  MAX_QUERY_TEXT_LENGTH,
  MAX_ROWS,
  MAX_START,
  queryTextProblem,
} from "../../search/limits.ts";
import { FACET_NAMES, SORT_ORDERS } from "../../search/types.ts";
import type { FacetName, SearchQuery, SortOrder } from "../../search/types.ts";
import { single } from "./request.ts";

const STORE_ALIASES: Record<string, Store> = { children: "kids" };

function integer(query: Map<string, string[]>, name: string, min: number, max: number, fallback: number): number {
  const raw = single(query, name);
  if (raw === undefined) return fallback;
  if (!/^[0-9]{1,10}$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw invalidParameter(name, `must be an integer from ${min} to ${max}`);
  }
  return Number(raw);
}

function list<T extends string>(
  query: Map<string, string[]>,
  name: string,
  check: (v: string) => T | null,
  rule: string,
): T[] {
  const values = query.get(name) ?? [];
  if (values.length > MAX_FILTER_VALUES) throw invalidParameter(name, `at most ${MAX_FILTER_VALUES} values`);
  return values.map((v) => {
    const ok = check(v);
    if (ok === null) throw invalidParameter(name, rule);
    return ok;
  });
}

const oneOf =
  <T extends string>(allowed: readonly T[]) =>
  (v: string): T | null =>
    (allowed as readonly string[]).includes(v) ? (v as T) : null;

/** A `0`/`1` switch; absent = `fallback`. */
function flag(query: Map<string, string[]>, name: string, fallback: boolean): boolean {
  const raw = single(query, name);
  if (raw === undefined) return fallback;
  if (raw !== "0" && raw !== "1") throw invalidParameter(name, "must be 0 or 1");
  return raw === "1";
}

/** A price in cents, or undefined when absent. */
function price(query: Map<string, string[]>, name: string): number | undefined {
  const raw = single(query, name);
  if (raw === undefined) return undefined;
  const m = PRICE_PARAM_RE.exec(raw);
  if (!m) throw invalidParameter(name, "must be a non-negative decimal amount with at most two decimals, like 19.99");
  return Number(m[1]) * 100 + Number((m[2] ?? ".").slice(1).padEnd(2, "0"));
}

/** `facets`: comma-separated (the parameter may also repeat), in {@link FACET_NAMES} order, each once. */
function facetList(query: Map<string, string[]>): FacetName[] {
  const asked = new Set((query.get("facets") ?? []).flatMap((v) => v.split(",")));
  for (const name of asked) {
    if (!(FACET_NAMES as readonly string[]).includes(name)) {
      throw invalidParameter("facets", `must be a comma-separated list of ${FACET_NAMES.join(", ")}`);
    }
  }
  return FACET_NAMES.filter((name) => asked.has(name));
}

/** A search query but for its instant: what the query string says, checked once per request target. */
export type SearchParams = Omit<SearchQuery, "now">;

/** Turns the query string into search parameters; throws ApiError 400 naming the bad parameter. */
export function parseSearchParams(query: Map<string, string[]>): SearchParams {
  const q = (single(query, "q") ?? "").trim();
  if (!query.has("q")) throw invalidParameter("q", "is required");
  const qProblem = queryTextProblem(q, true);
  if (qProblem !== null) throw invalidParameter("q", qProblem);
  const stores = list(
    query,
    "store",
    (v) => STORE_ALIASES[v] ?? oneOf(STORES)(v),
    `must be one of ${STORES.join(", ")} (or children)`,
  );
  const colors = list<ColorGroup>(query, "color", oneOf(COLOR_GROUPS), `must be one of ${COLOR_GROUPS.join(", ")}`);
  const genders = list<Gender>(query, "gender", oneOf(GENDERS), `must be one of ${GENDERS.join(", ")}`);
  const sizes = list(query, "size", (v) => (SIZE_KEY_RE.test(v) ? v : null), "must be a size key like WoSh:8.5");
  const brands = list(
    query,
    "brand",
    (v) => (queryTextProblem(v.trim(), false) === null ? v.trim() : null),
    `must be non-empty text of at most ${MAX_QUERY_TEXT_LENGTH} characters, as sent and once folded`,
  );
  const rows = integer(query, "rows", 1, MAX_ROWS, DEFAULT_ROWS);
  const start = integer(query, "start", 0, MAX_START, 0);
  const params: SearchParams = { q, brands, stores: [...new Set(stores)], colors, genders, sizes, start, rows };
  // The parameters of issue 12, all optional: present in the result only when given, so that a search with only
  // the parameters above is the same object as before.
  const typos = flag(query, "typos", true);
  const prefix = flag(query, "prefix", false);
  const sort = single(query, "sort") ?? "relevance";
  if (!(SORT_ORDERS as readonly string[]).includes(sort)) {
    throw invalidParameter("sort", `must be one of ${SORT_ORDERS.join(", ")}`);
  }
  const minPrice = price(query, "min_price");
  const maxPrice = price(query, "max_price");
  if (minPrice !== undefined && maxPrice !== undefined && minPrice > maxPrice) {
    throw invalidParameter("min_price", "must not be above max_price");
  }
  const facets = query.has("facets") ? facetList(query) : [];
  if (!typos) params.typos = false;
  if (prefix) params.prefix = true;
  if (sort !== "relevance") params.sort = sort as SortOrder;
  if (minPrice !== undefined) params.minPrice = minPrice;
  if (maxPrice !== undefined) params.maxPrice = maxPrice;
  if (facets.length > 0) params.facets = facets;
  return params;
}
