// `/v1/products?q=...`: the search parameters of contract §5, each validated with a 400 that names it.
import { COLOR_GROUPS, GENDERS, SIZE_KEY_RE, STORES } from "../catalog/schema.ts";
import type { ColorGroup, Gender, Store } from "../catalog/schema.ts";
import { invalidParameter } from "../errors.ts";
import { DEFAULT_ROWS, MAX_ROWS } from "../search/constants.ts";
import type { SearchQuery } from "../search/types.ts";
import { single } from "./request.ts";

/** Largest `start` accepted: past the end is fine (an empty page), past 32-bit integers is a 400. */
export const MAX_START = 2_147_483_647;
/** Most values one repeated filter may have. */
export const MAX_FILTER_VALUES = 32;
/** Longest `q` or `brand` accepted, in characters. */
export const MAX_TEXT_LENGTH = 256;

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

/** A search query but for its instant: what the query string says, checked once per request target. */
export type SearchParams = Omit<SearchQuery, "now">;

/** Turns the query string into search parameters; throws ApiError 400 naming the bad parameter. */
export function parseSearchParams(query: Map<string, string[]>): SearchParams {
  const q = (single(query, "q") ?? "").trim();
  if (!query.has("q")) throw invalidParameter("q", "is required");
  if (q === "") throw invalidParameter("q", "must not be empty");
  if (q.length > MAX_TEXT_LENGTH) throw invalidParameter("q", `must be at most ${MAX_TEXT_LENGTH} characters`);
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
    (v) => (v.trim() !== "" && v.length <= MAX_TEXT_LENGTH ? v.trim() : null),
    `must be non-empty text of at most ${MAX_TEXT_LENGTH} characters`,
  );
  const rows = integer(query, "rows", 1, MAX_ROWS, DEFAULT_ROWS);
  const start = integer(query, "start", 0, MAX_START, 0);
  return { q, brands, stores: [...new Set(stores)], colors, genders, sizes, start, rows };
}
