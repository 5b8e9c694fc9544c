// The three engines behind one interface: ours, MiniSearch and FlexSearch, configured for the same job.
//
// Fairness: MiniSearch and FlexSearch get our tokenizer (folding, stop words, Porter2), so all three index the
// same terms. MiniSearch indexes name and description as fields (name boosted x3, terms ANDed): BM25+, like
// ours in spirit. FlexSearch has no per-field AND, so it indexes name + description as one text, name first
// (its relevance favours early positions), terms ANDed. Neither library has time windows, nor our filters, so
// both get a side table (doc -> windows, colours, gender, sizes, brand terms), saved beside the index and
// counted in its size, load time and memory, and filter their full result list after the search (the only
// way to also get `total`; FlexSearch is asked for every match), then sort it (price) and count facets over it
// (each facet without its own filter, as ours). Forgiveness is each library's own: MiniSearch with
// `fuzzy: 0.2, prefix: true`, FlexSearch with `tokenize: "forward"` and `suggest: true`. Ours answers from its
// own file alone.
import { readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { COLOR_GROUPS } from "../../src/catalog/schema.ts";
import { buildSearchIndex } from "../../src/search/index-builder.ts";
import { loadSearchIndex } from "../../src/search/index-format.ts";
import { tokenize, tokenizeQuery } from "../../src/search/tokenize.ts";
import type { FacetName, FacetValues, SearchDoc, SearchQuery } from "../../src/search/types.ts";
import { FACET_NAMES } from "../../src/search/types.ts";
import { FACET_VALUES_LIMIT } from "../../src/search/facets.ts";

const require = createRequire(import.meta.url);

export interface Searcher {
  search(q: SearchQuery): { ids: number[]; total: number; facets?: Partial<Record<FacetName, FacetValues>> };
}

export interface Engine {
  name: string;
  /** Builds the index in memory and serialises it: file name -> contents. */
  build(docs: readonly SearchDoc[]): Map<string, Uint8Array | string>;
  /** Reads the files back and makes them queryable. */
  load(dir: string, files: readonly string[]): Promise<Searcher>;
}

// ---- side table of filter data, for the libraries ----
// The libraries index docs under dense numbers 0..n-1 (not product IDs), so that the side table is a set of
// typed arrays indexed directly: the cheapest post-filter we could write. Product IDs are looked up only for
// the page returned.

interface SideTableJson {
  ids: number[];
  windows: [number, number | null, string][][];
  colors: number[];
  genders: number[];
  sizes: string[][];
  brands: string[][];
  brandNames: string[];
  categories: string[][];
  prices: number[];
}
const STORE_LIST = ["women", "men", "kids", "home"];
const COLOR_LIST: readonly string[] = COLOR_GROUPS;
const GENDER_LIST = ["boy", "girl", "unisex"];

function sideTable(docs: readonly SearchDoc[]): string {
  const table: SideTableJson = {
    ids: docs.map((d) => d.id),
    windows: docs.map((d) => d.windows.map((w) => [w.from, w.to, w.store])),
    colors: docs.map((d) => d.colorGroups.reduce((mask, c) => mask | (1 << COLOR_LIST.indexOf(c)), 0)),
    genders: docs.map((d) => (d.gender ? 1 + GENDER_LIST.indexOf(d.gender) : 0)),
    sizes: docs.map((d) => [...d.sizeKeys]),
    brands: docs.map((d) => [...new Set(tokenize(d.brand))]),
    brandNames: docs.map((d) => d.brand),
    categories: docs.map((d) => [...(d.categories ?? [])]),
    prices: docs.map((d) => d.price ?? -1),
  };
  return JSON.stringify(table);
}

interface SideTable {
  ids: Float64Array;
  winStart: Uint32Array;
  from: Float64Array;
  to: Float64Array;
  store: Uint8Array;
  colors: Uint16Array;
  genders: Uint8Array;
  sizes: Set<string>[];
  brands: Set<string>[];
  brandNames: string[];
  categories: string[][];
  prices: Float64Array;
}

function loadSideTable(json: string): SideTable {
  const t = JSON.parse(json) as SideTableJson;
  const n = t.ids.length;
  const winStart = new Uint32Array(n + 1);
  t.windows.forEach((w, i) => (winStart[i + 1] = winStart[i]! + w.length));
  const all = t.windows.flat();
  return {
    ids: Float64Array.from(t.ids),
    winStart,
    from: Float64Array.from(all, (w) => w[0]),
    to: Float64Array.from(all, (w) => w[1] ?? Infinity),
    store: Uint8Array.from(all, (w) => STORE_LIST.indexOf(w[2])),
    colors: Uint16Array.from(t.colors),
    genders: Uint8Array.from(t.genders),
    sizes: t.sizes.map((s) => new Set(s)),
    brands: t.brands.map((b) => new Set(b)),
    brandNames: t.brandNames,
    categories: t.categories,
    prices: Float64Array.from(t.prices),
  };
}

/**
 * Applies the query's time, store and filters to a ranked list of dense doc numbers, sorts it by price if asked
 * (stable: ties keep the library's order), counts the facets asked for, then pages it.
 */
function postFilter(ranked: ArrayLike<number>, q: SearchQuery, t: SideTable): ReturnType<Searcher["search"]> {
  const storeMask = q.stores.reduce((m, s) => m | (1 << STORE_LIST.indexOf(s)), 0) || 0xf;
  const colorMask = q.colors.reduce((m, c) => m | (1 << COLOR_LIST.indexOf(c)), 0);
  const genderMask = q.genders.reduce((m, g) => m | (1 << (1 + GENDER_LIST.indexOf(g))), 0);
  const brands = q.brands.map((b) => [...new Set(tokenizeQuery(b))]);
  const facets = q.facets ?? [];
  const { now } = q;
  const matches: number[] = [];
  const counts = new Map<FacetName, Map<string, number>>(facets.map((f) => [f, new Map()]));
  const add = (f: FacetName, v: string) => counts.get(f)!.set(v, (counts.get(f)!.get(v) ?? 0) + 1);
  for (let i = 0; i < ranked.length; i++) {
    const d = ranked[i]!;
    let stores = 0;
    for (let w = t.winStart[d]!; w < t.winStart[d + 1]!; w++) {
      if (t.from[w]! <= now && now < t.to[w]!) stores |= 1 << t.store[w]!;
    }
    if (stores === 0) continue;
    const price = t.prices[d]!;
    if (
      (q.minPrice !== undefined || q.maxPrice !== undefined) &&
      !(price >= (q.minPrice ?? 0) && price <= (q.maxPrice ?? Infinity))
    )
      continue;
    const ok = {
      store: (storeMask & stores) !== 0,
      color: colorMask === 0 || (t.colors[d]! & colorMask) !== 0,
      gender: genderMask === 0 || (genderMask & (1 << t.genders[d]!) & ~1) !== 0,
      size: q.sizes.length === 0 || q.sizes.some((s) => t.sizes[d]!.has(s)),
      brand: brands.length === 0 || brands.some((b) => b.length > 0 && b.every((term) => t.brands[d]!.has(term))),
      category: true,
    };
    if (ok.store && ok.color && ok.gender && ok.size && ok.brand) matches.push(d);
    for (const f of facets) {
      if (!(Object.keys(ok) as (keyof typeof ok)[]).every((k) => k === f || ok[k])) continue;
      const values =
        f === "brand"
          ? [t.brandNames[d]!]
          : f === "color"
            ? COLOR_LIST.filter((_, c) => (t.colors[d]! & (1 << c)) !== 0)
            : f === "size"
              ? t.sizes[d]!
              : f === "store"
                ? STORE_LIST.filter((_, st) => (stores & (1 << st)) !== 0)
                : f === "gender"
                  ? GENDER_LIST.filter((_, g) => t.genders[d] === g + 1)
                  : t.categories[d]!;
      for (const v of values) add(f, v);
    }
  }
  if (q.sort === "price_asc" || q.sort === "price_desc") {
    const sign = q.sort === "price_asc" ? 1 : -1;
    matches.sort((a, b) => sign * (t.prices[a]! - t.prices[b]!));
  }
  const ids = matches.slice(q.start, q.start + q.rows).map((d) => t.ids[d]!);
  if (facets.length === 0) return { ids, total: matches.length };
  const out: Partial<Record<FacetName, FacetValues>> = {};
  for (const f of FACET_NAMES) {
    if (!facets.includes(f)) continue;
    out[f] = [...counts.get(f)!]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, FACET_VALUES_LIMIT)
      .map(([value, count]) => ({ value, count }));
  }
  return { ids, total: matches.length, facets: out };
}

// ---- ours ----

const ours: Engine = {
  name: "ours",
  build(docs) {
    return new Map([["search.idx", buildSearchIndex(docs)]]);
  },
  async load(dir) {
    const index = loadSearchIndex(await readFile(join(dir, "search.idx")));
    return { search: (q) => index.search(q) };
  },
};

// ---- MiniSearch ----

interface MiniSearchLike {
  addAll(docs: object[]): void;
  search(q: string, options?: object): { id: number }[];
}
interface MiniSearchClass {
  new (options: object): MiniSearchLike;
  loadJSON(json: string, options: object): MiniSearchLike;
}

const miniSearchOptions = {
  fields: ["name", "description"],
  tokenize: (text: string) => tokenize(text),
  processTerm: (term: string) => term,
  searchOptions: {
    boost: { name: 3 },
    combineWith: "AND",
    prefix: true,
    fuzzy: 0.2,
    tokenize: (text: string) => tokenizeQuery(text),
    processTerm: (term: string) => term,
  },
};

const miniSearch: Engine = {
  name: "MiniSearch",
  build(docs) {
    const MiniSearch = require("minisearch") as MiniSearchClass;
    const ms = new MiniSearch(miniSearchOptions);
    ms.addAll(docs.map((d, i) => ({ id: i, name: d.name, description: d.description })));
    return new Map([
      ["minisearch.json", JSON.stringify(ms)],
      ["filters.json", sideTable(docs)],
    ]);
  },
  async load(dir) {
    const MiniSearch = require("minisearch") as MiniSearchClass;
    const ms = MiniSearch.loadJSON(await readFile(join(dir, "minisearch.json"), "utf8"), miniSearchOptions);
    const table = loadSideTable(await readFile(join(dir, "filters.json"), "utf8"));
    return {
      search: (q) =>
        postFilter(
          ms.search(q.q, q.typos === false ? { fuzzy: false, prefix: q.prefix === true } : {}).map((r) => r.id),
          q,
          table,
        ),
    };
  },
};

// ---- FlexSearch ----

interface FlexIndex {
  add(id: number, text: string): void;
  search(q: string, options: { limit: number; suggest?: boolean }): number[];
  export(handler: (key: string, data: string) => void): void;
  import(key: string, data: string): void;
}
type FlexIndexClass = new (options: object) => FlexIndex;
const flexOptions = { encode: (text: string) => tokenize(text), tokenize: "forward" };

const flexSearch: Engine = {
  name: "FlexSearch",
  build(docs) {
    const { Index } = require("flexsearch") as { Index: FlexIndexClass };
    const index = new Index(flexOptions);
    docs.forEach((d, i) => index.add(i, `${d.name}. ${d.description}`));
    const parts: Record<string, string> = {};
    index.export((key, data) => {
      parts[key] = data;
    });
    return new Map([
      ["flexsearch.json", JSON.stringify({ size: docs.length, parts })],
      ["filters.json", sideTable(docs)],
    ]);
  },
  async load(dir) {
    const { Index } = require("flexsearch") as { Index: FlexIndexClass };
    const { size, parts } = JSON.parse(await readFile(join(dir, "flexsearch.json"), "utf8")) as {
      size: number;
      parts: Record<string, string>;
    };
    const index = new Index(flexOptions);
    for (const [key, data] of Object.entries(parts)) index.import(key, data);
    const table = loadSideTable(await readFile(join(dir, "filters.json"), "utf8"));
    return {
      search: (q) => postFilter(index.search(q.q, { limit: size, suggest: q.typos !== false }), q, table),
    };
  },
};

export const ENGINES: readonly Engine[] = [ours, miniSearch, flexSearch];

export async function writeFiles(dir: string, files: Map<string, Uint8Array | string>): Promise<number> {
  let bytes = 0;
  for (const [name, data] of files) {
    await writeFile(join(dir, name), data);
    bytes += typeof data === "string" ? Buffer.byteLength(data) : data.length;
  }
  return bytes;
}
