// Issue 12 through HTTP on the sample catalog: typos, prefix, sorting, price ranges and facets, each checked against
// the brute-force reference built from the catalog's own files, and every new parameter's bad values.
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gunzipSync } from "node:zlib";
import { httpGet } from "../../bench/search-http/check.ts";
import { readCatalogDocs } from "../../bench/search/corpus.ts";
import { misspellings } from "../../bench/search/misspell.ts";
import { comparePage, createReference } from "../../bench/search/reference.ts";
import { buildSnapshot } from "../../src/generate/index.ts";
import { writeSampleCatalog } from "../../src/catalog/sample/index.ts";
import { createKey } from "../../src/keys/keys-file.ts";
import { tokenize } from "../../src/search/tokenize.ts";
import type { FacetName, FacetValues, SearchDoc, SearchQuery } from "../../src/search/types.ts";
import { searchQuery } from "../../src/search/types.ts";
import { createHandler } from "../../src/serve/handler.ts";
import { startServer } from "../../src/serve/http/server.ts";
import type { RunningServer } from "../../src/serve/http/server.ts";
import { BASE, tempDir } from "../helpers/fixture.ts";

const NOW = new Date("2026-11-22T15:30:00Z");
const NOW_S = NOW.getTime() / 1000;

interface Page {
  products: { id: number; name: string }[];
  total_found: number;
  facets?: Partial<Record<FacetName, FacetValues>>;
}
type Params = Record<string, string | number | string[]>;

let root: string;
let server: RunningServer;
let url: string;
let key: string;
let docs: SearchDoc[];
let byId: Map<number, SearchDoc>;
let reference: ReturnType<typeof createReference>;

beforeAll(async () => {
  root = await tempDir("fsa-forgiving-");
  const catalogDir = join(root, "catalog");
  const dataDir = join(root, "data");
  const keysFile = join(root, "keys.json");
  await writeSampleCatalog(catalogDir, { products: 6000, now: NOW });
  await buildSnapshot({ catalogDir, dataDir, baseUrl: BASE });
  key = await createKey(keysFile, "t", new Date(), { rate: 1e9, burst: 1e9 });
  server = await startServer(await createHandler({ dataDir, keysFile, clock: () => NOW.getTime() }), "127.0.0.1", 0);
  url = `http://127.0.0.1:${server.port}`;
  docs = await readCatalogDocs(catalogDir);
  byId = new Map(docs.map((d) => [d.id, d]));
  reference = createReference(docs);
}, 120_000);

afterAll(async () => {
  await server?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

function target(params: Params): string {
  const sp = new URLSearchParams({ apikey: key });
  for (const [name, value] of Object.entries(params))
    for (const v of Array.isArray(value) ? value : [value]) sp.append(name, String(v));
  return `${url}/v1/products?${sp.toString()}`;
}

async function search(params: Params): Promise<Page> {
  const res = await fetch(target(params));
  const text = await res.text();
  expect(res.status, `${JSON.stringify(params)}: ${text.slice(0, 300)}`).toBe(200);
  return JSON.parse(text) as Page;
}

/** Every match, page by page. */
async function ranking(params: Params): Promise<number[]> {
  const ids: number[] = [];
  for (let start = 0; ; start += 100) {
    const page = await search({ ...params, rows: 100, start });
    ids.push(...page.products.map((p) => p.id));
    if (start + 100 >= page.total_found) break;
  }
  expect(new Set(ids).size, "pages never overlap").toBe(ids.length);
  return ids;
}

const has = (id: number, term: string) => tokenize(`${byId.get(id)!.name} ${byId.get(id)!.description}`).includes(term);

/** The engine's query for the same request, for the reference. */
function query(over: Partial<SearchQuery>): SearchQuery {
  return searchQuery("", NOW_S, over);
}

describe("typos", () => {
  it("q=bots finds boots, after every exact match of bots (stem bot)", async () => {
    const ids = await ranking({ q: "bots" });
    expect(ids.filter((id) => has(id, "boot")).length).toBeGreaterThan(100);
    const exact = ids.filter((id) => has(id, "bot"));
    expect(ids.slice(0, exact.length)).toEqual(exact);
    expect((await search({ q: "bots", typos: 0 })).total_found).toBe(exact.length);
  });

  it("q=leathr finds leather; typos=0 finds nothing", async () => {
    const page = await search({ q: "leathr", rows: 20 });
    expect(page.total_found).toBeGreaterThan(100);
    for (const p of page.products) expect(has(p.id, "leather"), p.name).toBe(true);
    expect((await search({ q: "leathr", typos: 0 })).total_found).toBe(0);
  });

  it("exact matches rank above every typo match: the typos=0 ranking is the start of the default one", async () => {
    // A few chosen queries, and the first two words of 30 product names spread over the catalog.
    const names = Array.from({ length: 30 }, (_, i) =>
      docs[(i * 997) % docs.length]!.name.split(" ").slice(0, 2).join(" "),
    );
    for (const q of ["dress", "boot", "coat", "black dress", ...names]) {
      const exact = await ranking({ q, typos: 0 });
      const all = await ranking({ q });
      expect(all.length).toBeGreaterThanOrEqual(exact.length);
      expect(all.slice(0, exact.length), q).toEqual(exact);
    }
  });

  it("numbers are matched exactly", async () => {
    expect((await search({ q: "5011" })).total_found).toBe((await search({ q: "5011", typos: 0 })).total_found);
  });

  it("at least 95% of 200 misspelt product names find the product (or one of its name) in the top 10", async () => {
    const live = docs.filter((d) => d.windows.some((w) => w.from <= NOW_S && (w.to === null || NOW_S < w.to)));
    const set = misspellings(live, 200, 3);
    let hits = 0;
    for (const m of set) {
      const page = await search({ q: m.q });
      if (page.products.some((p) => p.id === m.id || p.name === m.name)) hits++;
    }
    expect(hits / set.length).toBeGreaterThanOrEqual(0.95);
  });
});

describe("prefix", () => {
  it("prefix=1&q=boo finds boots, whole-word matches of boo first; without prefix boo finds nothing", async () => {
    expect((await search({ q: "boo" })).total_found).toBe(0);
    const page = await search({ q: "boo", prefix: 1, rows: 50 });
    expect(page.products.filter((p) => has(p.id, "boot")).length).toBeGreaterThan(10);
    const ids = await ranking({ q: "ankle boo", prefix: 1 });
    const whole = await ranking({ q: "ankle boo", prefix: 0 });
    expect(ids.slice(0, whole.length)).toEqual(whole);
    expect(ids.length).toBeGreaterThan(0);
  });
});

describe("agreement with the brute-force reference through HTTP", () => {
  const cases: [string, Params, Partial<SearchQuery>][] = [
    ["sort=price_asc", { q: "dress", sort: "price_asc" }, { q: "dress", sort: "price_asc" }],
    ["sort=price_desc", { q: "leathr boot", sort: "price_desc" }, { q: "leathr boot", sort: "price_desc" }],
    ["sort=discount", { q: "sweater", sort: "discount" }, { q: "sweater", sort: "discount" }],
    ["sort=newest", { q: "coat", sort: "newest" }, { q: "coat", sort: "newest" }],
    ["price range", { q: "boot", min_price: "50", max_price: "99.99" }, { q: "boot", minPrice: 5000, maxPrice: 9999 }],
    ["min_price only", { q: "dress", min_price: "150.5" }, { q: "dress", minPrice: 15050 }],
    [
      "every facet, disjunctive under colour and store filters",
      { q: "cotton", color: ["black", "blue"], store: "women", facets: "brand,color,size,store,gender,category" },
      {
        q: "cotton",
        colors: ["black", "blue"],
        stores: ["women"],
        facets: ["brand", "color", "size", "store", "gender", "category"],
      },
    ],
    [
      "facets with brand, size and price filters, asked in another order",
      { q: "boot", brand: "calvin", size: "WoSh:8", max_price: "200", facets: ["size,brand", "category"] },
      { q: "boot", brands: ["calvin"], sizes: ["WoSh:8"], maxPrice: 20000, facets: ["brand", "size", "category"] },
    ],
    [
      "everything at once",
      { q: "blak dres", prefix: 1, sort: "price_asc", gender: "girl", facets: "color,gender", rows: 30, start: 5 },
      {
        q: "blak dres",
        prefix: true,
        sort: "price_asc",
        genders: ["girl"],
        facets: ["color", "gender"],
        rows: 30,
        start: 5,
      },
    ],
  ];

  it.each(cases)("%s: page and facets agree with the reference", async (_, params, over) => {
    const q = query({ rows: 100, ...over });
    const page = await search({ rows: q.rows, ...params });
    const want = reference.search(q);
    expect(page.total_found).toBeGreaterThan(0);
    const ids = page.products.map((p) => p.id);
    expect(comparePage(ids, page.total_found, want, q.start, q.rows, page.facets)).toBeNull();
  });

  it("sorted pages tile the whole ranking (ties by relevance, then ID): no overlap, nothing skipped", async () => {
    for (const sort of ["price_asc", "price_desc", "discount", "newest"]) {
      const ids = await ranking({ q: "dress", sort });
      expect(ids).toEqual(
        reference.search(query({ q: "dress", sort: sort as SearchQuery["sort"] })).ranked.map((r) => r.id),
      );
    }
  });

  it("facets are absent unless asked for, and the other fields are the same bytes", async () => {
    const plain = await fetch(target({ q: "dress" }));
    const faceted = await fetch(target({ q: "dress", facets: "color" }));
    const a = await plain.text();
    const b = await faceted.text();
    expect(Object.keys(JSON.parse(a) as object)).toEqual(["products", "total_found"]);
    expect(b.startsWith(a.slice(0, -1) + ',"facets":{"color":[')).toBe(true);
    expect(plain.headers.get("etag")).not.toBe(faceted.headers.get("etag"));
  });
});

describe("gzip", () => {
  it.each<[string, Params]>([
    ["a full page", { q: "dress", rows: 100 }],
    [
      "a later page, sorted, with facets",
      { q: "leathr boot", sort: "price_desc", rows: 37, start: 3, facets: "brand,size" },
    ],
    ["a page of one", { q: "cotton", rows: 1 }],
  ])("%s sent gzipped inflates to the page sent as it is", async (_, params) => {
    const plain = await httpGet(target(params), { "accept-encoding": "identity" });
    const gz = await httpGet(target(params), { "accept-encoding": "gzip" });
    expect(plain.status).toBe(200);
    expect(gz.headers["content-encoding"]).toBe(plain.body.length >= 1024 ? "gzip" : undefined);
    expect((gz.headers["content-encoding"] ? gunzipSync(gz.body) : gz.body).toString()).toBe(plain.body.toString());
  });
});

describe("bad values of the new parameters", () => {
  it.each<[string, string, string, RegExp]>([
    ["typos=2", "typos=2", "typos", /0 or 1/],
    ["typos=yes", "typos=yes", "typos", /0 or 1/],
    ["prefix=true", "prefix=true", "prefix", /0 or 1/],
    ["prefix twice", "prefix=1&prefix=1", "prefix", /once/],
    ["sort=price", "sort=price", "sort", /relevance, price_asc, price_desc, discount, newest/],
    ["sort empty", "sort=", "sort", /relevance/],
    ["facets=colour", "facets=colour", "facets", /brand, color, size, store, gender, category/],
    ["facets with an empty item", "facets=color,", "facets", /brand, color/],
    ["min_price=-1", "min_price=-1", "min_price", /non-negative/],
    ["min_price=abc", "min_price=abc", "min_price", /19\.99/],
    ["max_price=1.999", "max_price=1.999", "max_price", /two decimals/],
    ["max_price=1e3", "max_price=1e3", "max_price", /decimal/],
    ["min_price above max_price", "min_price=20&max_price=19.99", "min_price", /max_price/],
  ])("%s is a 400 invalid_parameter naming %s and what it allows", async (_, params, name, allowed) => {
    const res = await fetch(`${url}/v1/products?apikey=${key}&q=dress&${params}`);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; detail: string };
    expect(body.code).toBe("invalid_parameter");
    expect(body.detail).toMatch(new RegExp(`^${name}\\b`));
    expect(body.detail).toMatch(allowed);
  });

  it("the good values answer 200", async () => {
    for (const p of ["typos=0", "typos=1", "prefix=0", "prefix=1", "sort=relevance", "min_price=0&max_price=0.5"]) {
      expect((await fetch(`${url}/v1/products?apikey=${key}&q=dress&${p}`)).status, p).toBe(200);
    }
  });
});
