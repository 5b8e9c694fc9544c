// Search relevance, filters and paging of GET /v1/products, asserted through HTTP on the sample catalog against its own files.
// These check contract §5's exact matching, so every search here is sent with typos=0; what typo tolerance and
// prefixes add (after every exact match) is tested in forgiving.test.ts.
import { readFile, rm } from "node:fs/promises";
import { get as httpGet } from "node:http";
import type { IncomingHttpHeaders } from "node:http";
import { gunzipSync } from "node:zlib";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSnapshot } from "../../src/generate/index.ts";
import { writeSampleCatalog } from "../../src/catalog/sample/index.ts";
import { createRandom } from "../../src/catalog/sample/random.ts";
import type { Product, Sale } from "../../src/catalog/schema.ts";
import { COLOR_GROUPS, GENDERS } from "../../src/catalog/schema.ts";
import { createKey } from "../../src/keys/keys-file.ts";
import { tokenize, tokenizeQuery } from "../../src/search/tokenize.ts";
import { createHandler } from "../../src/serve/handler.ts";
import { startServer } from "../../src/serve/http/server.ts";
import type { RunningServer } from "../../src/serve/http/server.ts";
import { BASE, tempDir } from "../helpers/fixture.ts";

/** The instant the sample catalog is arranged around, and the handler's clock (half past: no sale starts or ends then). */
const NOW = new Date("2026-11-22T15:30:00Z");
const NOW_S = NOW.getTime() / 1000;
const PRODUCTS = 6000;

/** A search as the client sends it: each list parameter is repeated once per value. */
interface Query {
  q: string;
  brand?: string[];
  store?: string[];
  color?: string[];
  gender?: string[];
  size?: string[];
}
type Params = Query & { rows?: number; start?: number; affid?: string };

interface Item {
  id: number;
  name: string;
  brand: string;
  url: string;
  product: string;
  skus: { id: number; attributes: { name: string; value: string }[] }[];
  [field: string]: unknown;
}
interface Page {
  products: Item[];
  total_found: number;
}

/** What the oracle knows of one product: its terms (by the shared tokenizer) and where and what it is on sale as. */
interface Doc {
  product: Product;
  name: string[];
  description: string[];
  text: Set<string>;
  brand: Set<string>;
  /** Stores of the sales that list it and are active at NOW; empty = not on sale. */
  stores: Set<string>;
  colors: Set<string>;
  sizes: Set<string>;
}

let root: string;
let server: RunningServer;
let url: string;
let key: string;
let sales: Sale[];
const docs = new Map<number, Doc>();
/** Products on sale at NOW, ascending ID. */
let live: Doc[];

beforeAll(async () => {
  root = await tempDir("fsa-relevance-");
  const catalogDir = join(root, "catalog");
  const dataDir = join(root, "data");
  const keysFile = join(root, "keys.json");
  await writeSampleCatalog(catalogDir, { products: PRODUCTS, now: NOW });
  await buildSnapshot({ catalogDir, dataDir, baseUrl: BASE });
  key = await createKey(keysFile, "t", new Date(), { rate: 1e9, burst: 1e9 });
  server = await startServer(await createHandler({ dataDir, keysFile, clock: () => NOW.getTime() }), "127.0.0.1", 0);
  url = `http://127.0.0.1:${server.port}`;

  const lines = async (file: string) =>
    (await readFile(join(catalogDir, file), "utf8")).split("\n").filter((l) => l !== "");
  sales = (await lines("sales.ndjson")).map((l) => JSON.parse(l) as Sale);
  for (const line of await lines("products.ndjson")) {
    const product = JSON.parse(line) as Product;
    const name = tokenize(product.name);
    const description = tokenize(product.content.description ?? "");
    docs.set(product.id, {
      product,
      name,
      description,
      text: new Set([...name, ...description]),
      brand: new Set(tokenize(product.brand)),
      stores: new Set(),
      colors: new Set(product.skus.flatMap((s) => (s.color_group ? [s.color_group] : []))),
      sizes: new Set(product.skus.flatMap((s) => (s.size_key ? [s.size_key] : []))),
    });
  }
  for (const sale of sales) {
    if (!isActive(sale, NOW_S)) continue;
    for (const id of sale.product_ids) docs.get(id)!.stores.add(sale.store);
  }
  live = [...docs.values()].filter((d) => d.stores.size > 0).sort((a, b) => a.product.id - b.product.id);
}, 120_000);

afterAll(async () => {
  await server?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

const seconds = (t: string) => Date.parse(t) / 1000;
const isActive = (sale: Sale, t: number) =>
  seconds(sale.begins) <= t && (sale.ends === undefined || t < seconds(sale.ends));
const count = (terms: readonly string[], term: string) => terms.filter((t) => t === term).length;
const sorted = (ids: Iterable<number>) => [...ids].sort((a, b) => a - b);

function searchUrl(params: Params, apikey = key): string {
  const sp = new URLSearchParams({ apikey, typos: "0" });
  for (const [name, value] of Object.entries(params)) {
    for (const v of Array.isArray(value) ? value : [value]) sp.append(name, String(v));
  }
  return `${url}/v1/products?${sp.toString()}`;
}

/** A GET whose body is returned as sent (fetch would decode it). */
function rawGet(
  target: string,
  headers: Record<string, string>,
): Promise<{ headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    httpGet(target, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
    }).on("error", reject);
  });
}

/** One page; it must be a 200 search result, and nothing in it may be off sale at NOW. */
async function search(params: Params): Promise<Page> {
  const res = await fetch(searchUrl(params));
  const text = await res.text();
  expect(res.status, `${JSON.stringify(params)}: ${text.slice(0, 300)}`).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
  const page = JSON.parse(text) as Page;
  expect(Object.keys(page).sort()).toEqual(["products", "total_found"]);
  expect(Number.isInteger(page.total_found)).toBe(true);
  for (const item of page.products) {
    const doc = docs.get(item.id);
    if (!doc) throw new Error(`${JSON.stringify(params)} returned product ${item.id}, which the catalog does not have`);
    if (doc.stores.size === 0)
      throw new Error(
        `${JSON.stringify(params)} returned product ${item.id}, which is not on sale at ${NOW.toISOString()}`,
      );
  }
  return page;
}

/** The whole ranking, page by page (100 a page), with total_found the same on every page. */
async function ranking(query: Query): Promise<number[]> {
  const ids: number[] = [];
  let total = -1;
  for (let start = 0; ; start += 100) {
    const page = await search({ ...query, rows: 100, start });
    if (total === -1) total = page.total_found;
    expect(page.total_found, `total_found of ${JSON.stringify(query)} at start=${start}`).toBe(total);
    ids.push(...page.products.map((p) => p.id));
    if (start + 100 >= total) break;
  }
  expect(ids.length).toBe(total);
  expect(new Set(ids).size).toBe(ids.length);
  return ids;
}

/** The oracle: every product the contract says `query` finds at NOW, by brute force over the catalog files. */
function expected(query: Query): Set<number> {
  const terms = [...new Set(tokenizeQuery(query.q))];
  const brands = (query.brand ?? []).map((b) => [...new Set(tokenizeQuery(b))]).filter((t) => t.length > 0);
  const stores = (query.store ?? []).map((s) => (s === "children" ? "kids" : s));
  const anyOf = (wanted: string[] | undefined, has: (v: string) => boolean) => !wanted?.length || wanted.some(has);
  const out = new Set<number>();
  if (terms.length === 0) return out;
  for (const d of live) {
    if (!terms.every((t) => d.text.has(t))) continue;
    if (query.brand?.length && !brands.some((b) => b.every((t) => d.brand.has(t)))) continue;
    if (!anyOf(stores, (s) => d.stores.has(s))) continue;
    if (!anyOf(query.color, (c) => d.colors.has(c))) continue;
    if (!anyOf(query.gender, (g) => d.product.gender === g)) continue;
    if (!anyOf(query.size, (s) => d.sizes.has(s))) continue;
    out.add(d.product.id);
  }
  return out;
}

/** Full ranking equals the oracle's set; returns the ranking. */
async function expectFinds(query: Query): Promise<number[]> {
  const ids = await ranking(query);
  expect(sorted(ids), JSON.stringify(query)).toEqual(sorted(expected(query)));
  return ids;
}

/** A deterministic index in [0, n) for the sampled queries (the sample catalog's mulberry32). */
function randomIndex(seed: number): (n: number) => number {
  const rng = createRandom(seed);
  return (n) => Math.floor(rng.next() * n);
}
const words = (text: string) => text.match(/[\p{L}\p{N}]+(?:['-][\p{L}\p{N}]+)*/gu) ?? [];

describe("the oracle and the catalog", () => {
  it("has products on sale, upcoming and ended, so the tests below mean something", () => {
    expect(live.length).toBeGreaterThan(PRODUCTS / 2);
    expect(sales.some((s) => seconds(s.begins) > NOW_S)).toBe(true);
    expect(sales.some((s) => s.ends !== undefined && seconds(s.ends) <= NOW_S)).toBe(true);
  });
});

describe("full text: what is found", () => {
  it.each([
    "dress",
    "boot",
    "black dress",
    "leather ankle boot",
    "cotton sweater",
    "low-top",
    "lowtop",
    "low top sneaker",
    "cafe",
    "matelasse",
    "duvet cover",
    "running",
    "levi's",
    "16-piece",
    "10-inch skillet",
    "SWEATER",
    "the dress",
  ])("%j finds exactly the on-sale products with every term", async (q) => {
    const ids = await expectFinds({ q });
    expect(ids.length, `${q} should find something in the sample catalog`).toBeGreaterThan(0);
  });

  it("a sample of 60 queries of 1-3 words from the catalog's own text: total_found and first page agree with the oracle", async () => {
    const random = randomIndex(7);
    for (let i = 0; i < 60; i++) {
      const doc = live[random(live.length)]!;
      const all = words(`${doc.product.name} ${doc.product.content.description ?? ""}`);
      const pool = all.filter((w) => tokenizeQuery(w).length > 0);
      const q = Array.from({ length: 1 + random(3) }, () => pool[random(pool.length)]!).join(" ");
      const want = expected({ q });
      const page = await search({ q, rows: 100 });
      expect(page.total_found, q).toBe(want.size);
      for (const p of page.products) expect(want.has(p.id), `${q}: ${p.id}`).toBe(true);
      if (want.size <= 100) expect(sorted(page.products.map((p) => p.id)), q).toEqual(sorted(want));
      expect(want.has(doc.product.id), `${q} must find the product its words came from`).toBe(true);
    }
  });

  it.each([
    ["dresses", "dress"],
    ["Dresses", "dress"],
    ["boots", "boot"],
    ["sneakers", "sneaker"],
    ["jackets", "jacket"],
    ["pillows", "pillow"],
    ["running", "run"],
    ["candles", "candle"],
  ])("a stemmed form finds the same products: %j = %j", async (a, b) => {
    const [pa, pb] = [await search({ q: a, rows: 20 }), await search({ q: b, rows: 20 })];
    expect(pa.total_found).toBeGreaterThan(0);
    expect(pa.total_found).toBe(pb.total_found);
    expect(pa.products.map((p) => p.id)).toEqual(pb.products.map((p) => p.id));
  });

  it.each(["dresss", "qwxz", "dress qwxz", "bootz", "leathr boot", "the", "of and the"])(
    "with typos=0, a misspelling, unknown word or only stop words finds nothing rather than everything: %j",
    async (q) => {
      const page = await search({ q });
      expect(page).toEqual({ products: [], total_found: 0 });
    },
  );

  it("accents fold: cafe, café and CAFÉ find the same products, those whose name or description says café", async () => {
    const raw = new Set(
      live
        .filter((d) =>
          /(?<![\p{L}\p{N}])caf[eé](?![\p{L}\p{N}])/iu.test(`${d.product.name} ${d.product.content.description ?? ""}`),
        )
        .map((d) => d.product.id),
    );
    expect(raw.size, "the sample catalog mentions café").toBeGreaterThan(0);
    expect(
      [...raw].some((id) => /café/i.test(docs.get(id)!.product.content.description ?? "")),
      "some of them with the accent",
    ).toBe(true);
    for (const q of ["cafe", "café", "CAFÉ", "Cafe\u0301"])
      expect(sorted(await ranking({ q })), q).toEqual(sorted(raw));
    expect((await search({ q: "matelasse" })).total_found).toBe((await search({ q: "Matelassé" })).total_found);
  });

  it.each([
    ["black", "dress"],
    ["leather", "boot"],
    ["cotton", "sweater"],
    ["linen", "shirt"],
    ["stainless", "steel"],
  ])("every term must match: %j AND %j", async (a, b) => {
    const [ta, tb] = [(await search({ q: a })).total_found, (await search({ q: b })).total_found];
    const ids = await ranking({ q: `${a} ${b}` });
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.length).toBeLessThanOrEqual(Math.min(ta, tb));
    expect(ids.length).toBeLessThan(Math.max(ta, tb));
    const [sa, sb] = [tokenizeQuery(a)[0]!, tokenizeQuery(b)[0]!];
    for (const id of ids) {
      const text = docs.get(id)!.text;
      expect(text.has(sa) && text.has(sb), `${id} must contain both ${sa} and ${sb}`).toBe(true);
    }
    expect((await search({ q: `${b} ${a}` })).total_found).toBe(ids.length);
  });
});

describe("full text: ranking", () => {
  /**
   * Words in the name of exactly one product on sale and only in the description of some others: that
   * product must come first, above every product that mentions the word once, in its description only.
   */
  function distinctive(): { word: string; id: number; below: number[] }[] {
    const nameHolders = new Map<string, number[]>();
    for (const d of live)
      for (const t of new Set(d.name)) nameHolders.set(t, [...(nameHolders.get(t) ?? []), d.product.id]);
    const out: { word: string; id: number; below: number[] }[] = [];
    for (const [term, holders] of nameHolders) {
      if (holders.length !== 1) continue;
      const doc = docs.get(holders[0]!)!;
      const word = words(doc.product.name).find((w) => tokenizeQuery(w).join(" ") === term);
      const below = live
        .filter((d) => count(d.name, term) === 0 && count(d.description, term) === 1)
        .map((d) => d.product.id);
      if (word && below.length >= 1 && count(doc.name, term) === 1) out.push({ word, id: doc.product.id, below });
    }
    return out;
  }

  it("a word in one product's name ranks it above the products that mention it only in their description", async () => {
    const cases = distinctive();
    expect(cases.length, "the sample catalog has such words").toBeGreaterThanOrEqual(20);
    for (const { word, id, below } of cases) {
      const ids = await ranking({ q: word });
      const at = ids.indexOf(id);
      expect(at, `${word}: ${id} (${docs.get(id)!.product.name}) must be found`).toBeGreaterThanOrEqual(0);
      for (const other of below) {
        expect(at, `${word}: name match ${id} must rank above description-only ${other}`).toBeLessThan(
          ids.indexOf(other),
        );
      }
    }
  });

  // A table: the query, and a word of the one name that must come first (the catalog is deterministic for seed 1).
  it.each([
    ["overcoat", "Overcoat"],
    ["mohair", "Mohair"],
    ["timberland", "Timberland"],
    ["cobalt", "Cobalt"],
    ["Overcoats", "Overcoat"],
  ])("%j: the product named with %j is first, description mentions after it", async (q, nameWord) => {
    const named = live.filter((d) => d.product.name.includes(nameWord));
    expect(named.length, `exactly one product on sale is named with ${nameWord}`).toBe(1);
    const ids = await ranking({ q });
    expect(ids[0]).toBe(named[0]!.product.id);
    expect(ids.length, "others mention it in their description").toBeGreaterThan(1);
    for (const id of ids.slice(1)) expect(docs.get(id)!.product.name.includes(nameWord)).toBe(false);
  });

  it("ties (same name terms, same description mentions) come out by product ID ascending", async () => {
    let groups = 0;
    const queries: Query[] = [
      ...["dress", "boot", "ankle boot", "sweater", "tote", "sneaker", "duvet cover", "set"].map((q) => ({ q })),
      { q: "dress", store: ["women"] },
      { q: "dress", color: ["black", "blue"] },
      { q: "ankle boot", brand: ["calvin"] },
      { q: "set", store: ["home", "kids"] },
    ];
    for (const query of queries) {
      const q = JSON.stringify(query);
      const terms = [...new Set(tokenizeQuery(query.q))];
      const ids = await ranking(query);
      // Same name terms, same query-term counts in the description and (when there are any) the same description
      // length in terms: the same BM25F score, so the ranking must order them by ID.
      const keyOf = (d: Doc) => {
        const inDescription = terms.map((t) => count(d.description, t));
        return JSON.stringify([
          [...d.name].sort(),
          inDescription,
          inDescription.some((n) => n > 0) ? d.description.length : null,
        ]);
      };
      const lastOf = new Map<string, number>();
      const sizes = new Map<string, number>();
      for (const id of ids) {
        const k = keyOf(docs.get(id)!);
        const last = lastOf.get(k);
        if (last !== undefined)
          expect(id, `${q}: tie between ${last} and ${id} must be by ID ascending`).toBeGreaterThan(last);
        lastOf.set(k, id);
        sizes.set(k, (sizes.get(k) ?? 0) + 1);
      }
      groups += [...sizes.values()].filter((n) => n > 1).length;
    }
    expect(groups, "the sample catalog has tied products for these queries").toBeGreaterThan(5);
  });

  it("the ranking does not depend on the page size", async () => {
    for (const q of ["leather", "ankle boot"]) {
      const full = await ranking({ q });
      const small: number[] = [];
      for (let start = 0; start < 60; start += 7)
        small.push(...(await search({ q, rows: 7, start })).products.map((p) => p.id));
      expect(small).toEqual(full.slice(0, small.length));
    }
  });
});

describe("filters", () => {
  it("brand narrows, as full text over the brand: calvin matches Calvin Klein", async () => {
    const all = await search({ q: "boot" });
    const ids = await expectFinds({ q: "boot", brand: ["calvin"] });
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.length).toBeLessThan(all.total_found);
    const brands = new Set(ids.map((id) => docs.get(id)!.product.brand));
    expect(brands.has("Calvin Klein")).toBe(true);
    for (const b of brands) expect(b).toMatch(/\bcalvin\b/i);
    expect(sorted(await ranking({ q: "boot", brand: ["Calvin Klein"] }))).toEqual(sorted(ids));
    expect(sorted(await ranking({ q: "boot", brand: ["CALVIN"] }))).toEqual(sorted(ids));
    expect((await search({ q: "boot", brand: ["calvinn"] })).total_found).toBe(0);
    expect((await search({ q: "boot", brand: ["calvin klein zzz"] })).total_found).toBe(0);
  });

  it("repeated brand widens (OR)", async () => {
    const a = await expectFinds({ q: "dress", brand: ["calvin"] });
    const b = await expectFinds({ q: "dress", brand: ["kate spade"] });
    const both = await expectFinds({ q: "dress", brand: ["calvin", "kate spade"] });
    expect(a.length).toBeGreaterThan(0);
    expect(b.length).toBeGreaterThan(0);
    expect(sorted(both)).toEqual(sorted(new Set([...a, ...b])));
  });

  /** Each filter alone, then two of its values (OR: at least each alone), then across parameters (AND). */
  const filterCases: [string, keyof Query, string, string][] = [
    ["store", "store", "women", "men"],
    ["color", "color", "black", "red"],
    ["gender", "gender", "girl", "boy"],
    ["size", "size", "WoAp:S", "WoSh:8.5"],
  ];
  it.each(filterCases)(
    "%s: one value narrows, each result satisfies it; repeated values widen (OR)",
    async (_, name, v1, v2) => {
      for (const q of ["cotton", "leather"]) {
        const base = (await search({ q })).total_found;
        const one = await expectFinds({ q, [name]: [v1] });
        const two = await expectFinds({ q, [name]: [v2] });
        const either = await expectFinds({ q, [name]: [v1, v2] });
        const satisfies = (id: number, v: string) => {
          const d = docs.get(id)!;
          return name === "store"
            ? d.stores.has(v)
            : name === "color"
              ? d.colors.has(v)
              : name === "gender"
                ? d.product.gender === v
                : d.sizes.has(v);
        };
        for (const id of one) expect(satisfies(id, v1), `${id} ${name}=${v1}`).toBe(true);
        for (const id of either) expect(satisfies(id, v1) || satisfies(id, v2), `${id} ${name}=${v1}|${v2}`).toBe(true);
        expect(one.length + two.length, `${q} ${name}: the catalog has matches`).toBeGreaterThan(0);
        expect(one.length, `${q} ${name}=${v1} narrows`).toBeLessThan(base);
        expect(either.length).toBeGreaterThanOrEqual(Math.max(one.length, two.length));
        expect(sorted(either)).toEqual(sorted(new Set([...one, ...two])));
      }
    },
  );

  it("different parameters narrow (AND): the answer is the intersection of each parameter's own answer", async () => {
    const q = "cotton";
    const filters: Query = {
      q,
      store: ["women", "men"],
      color: ["black", "blue"],
      size: ["WoAp:S", "WoAp:M", "MeAp:M"],
    };
    const ids = await expectFinds(filters);
    expect(ids.length).toBeGreaterThan(0);
    const alone = await Promise.all((["store", "color", "size"] as const).map((k) => ranking({ q, [k]: filters[k] })));
    for (const one of alone) expect(ids.length).toBeLessThan(one.length);
    const intersection = alone.reduce((acc, one) => acc.filter((id) => one.includes(id)));
    expect(sorted(ids)).toEqual(sorted(intersection));
    for (const id of ids) {
      const d = docs.get(id)!;
      expect(d.stores.has("women") || d.stores.has("men")).toBe(true);
      expect(d.colors.has("black") || d.colors.has("blue")).toBe(true);
      expect(["WoAp:S", "WoAp:M", "MeAp:M"].some((z) => d.sizes.has(z))).toBe(true);
    }
    expect(
      (await expectFinds({ q: "dress", store: ["kids"], gender: ["girl"], color: ["pink", "purple"] })).length,
    ).toBeGreaterThan(0);
    expect(
      (await expectFinds({ q: "boot", brand: ["calvin"], store: ["women"], size: ["WoSh:8.5"] })).length,
    ).toBeGreaterThan(0);
  });

  it("children is kids", async () => {
    for (const q of ["cotton", "boot"]) {
      const kids = await ranking({ q, store: ["kids"] });
      expect(kids.length).toBeGreaterThan(0);
      expect(await ranking({ q, store: ["children"] })).toEqual(kids);
      expect(await ranking({ q, store: ["kids", "children"] })).toEqual(kids);
    }
  });

  it("a sample of 40 random filter combinations agrees with the oracle", async () => {
    const random = randomIndex(11);
    const sizes = [...new Set(live.flatMap((d) => [...d.sizes]))].sort();
    const pick = <T>(list: readonly T[], n: number) => Array.from({ length: n }, () => list[random(list.length)]!);
    const qs = ["cotton", "leather", "dress", "boot", "black", "set", "soft", "wool blend", "shirt"];
    for (let i = 0; i < 40; i++) {
      const query: Query = { q: pick(qs, 1)[0]! };
      if (random(2)) query.store = pick(["women", "men", "kids", "home", "children"], 1 + random(2));
      if (random(2)) query.color = pick(COLOR_GROUPS, 1 + random(3));
      if (random(3) === 0) query.gender = pick(GENDERS, 1 + random(2));
      if (random(3) === 0) query.size = pick(sizes, 1 + random(4));
      const want = expected(query);
      const page = await search({ ...query, rows: 100 });
      expect(page.total_found, JSON.stringify(query)).toBe(want.size);
      for (const p of page.products) expect(want.has(p.id), `${JSON.stringify(query)}: ${p.id}`).toBe(true);
    }
  });
});

describe("only products on sale now", () => {
  const offSale = (pred: (s: Sale) => boolean) => {
    const listed = new Set(sales.filter(pred).flatMap((s) => s.product_ids));
    return [...listed].filter((id) => docs.get(id)!.stores.size === 0).slice(0, 15);
  };

  it.each([
    ["upcoming", (s: Sale) => seconds(s.begins) > NOW_S],
    ["ended", (s: Sale) => s.ends !== undefined && seconds(s.ends) <= NOW_S],
  ] as const)("a product only in %s sales is never found, not even by its own name", async (_, pred) => {
    const ids = offSale(pred);
    expect(ids.length).toBeGreaterThan(5);
    for (const id of ids) {
      const { name, brand } = docs.get(id)!.product;
      const found = await ranking({ q: name, brand: [brand] });
      expect(found).not.toContain(id);
      expect(sorted(found)).toEqual(sorted(expected({ q: name, brand: [brand] })));
    }
  });

  it("an upcoming product is found from the second its sale begins (the handler's clock), not a second before", async () => {
    const sale = sales
      .filter((s) => seconds(s.begins) > NOW_S)
      .sort((a, b) => seconds(a.begins) - seconds(b.begins))[0]!;
    const id = sale.product_ids.find((p) => docs.get(p)!.stores.size === 0)!;
    const { name, brand } = docs.get(id)!.product;
    const at = async (t: number) => {
      const dataDir = join(root, "data");
      const s = await startServer(
        await createHandler({ dataDir, keysFile: join(root, "keys.json"), clock: () => t * 1000 }),
        "127.0.0.1",
        0,
      );
      try {
        const sp = new URLSearchParams({ apikey: key, q: name, brand, rows: "100" });
        const body = (await (await fetch(`http://127.0.0.1:${s.port}/v1/products?${sp.toString()}`)).json()) as Page;
        return body.products.map((p) => p.id);
      } finally {
        await s.close();
      }
    };
    expect(await at(seconds(sale.begins) - 1)).not.toContain(id);
    expect(await at(seconds(sale.begins))).toContain(id);
  });
});

describe("paging", () => {
  it.each(["dress", "leather boot"])(
    "%j: rows/start pages are consecutive slices of one ranking, total constant",
    async (q) => {
      const full = await ranking({ q });
      expect(full.length).toBeGreaterThan(100);
      const total = full.length;
      for (const [start, rows] of [
        [0, 10],
        [10, 10],
        [5, 33],
        [97, 6],
        [total - 3, 10],
        [total - 1, 1],
      ] as const) {
        const page = await search({ q, start, rows });
        expect(page.total_found).toBe(total);
        expect(
          page.products.map((p) => p.id),
          `start=${start} rows=${rows}`,
        ).toEqual(full.slice(start, start + rows));
      }
      for (const start of [total, total + 1, total + 5000, 2_147_483_647]) {
        expect(await search({ q, start })).toEqual({ products: [], total_found: total });
      }
    },
  );

  it("rows defaults to 10 and may be 100", async () => {
    const full = await ranking({ q: "dress" });
    expect((await search({ q: "dress" })).products.map((p) => p.id)).toEqual(full.slice(0, 10));
    expect((await search({ q: "dress", start: 20 })).products.map((p) => p.id)).toEqual(full.slice(20, 30));
    expect((await search({ q: "dress", rows: 100 })).products.map((p) => p.id)).toEqual(full.slice(0, 100));
    expect((await search({ q: "dress", rows: 1 })).products.map((p) => p.id)).toEqual(full.slice(0, 1));
  });
});

describe("bad parameters", () => {
  it.each<[string, string, string]>([
    ["missing q", "", "q"],
    ["empty q", "q=", "q"],
    ["blank q", "q=%20%20", "q"],
    ["rows=0", "q=dress&rows=0", "rows"],
    ["rows=101", "q=dress&rows=101", "rows"],
    ["rows=abc", "q=dress&rows=abc", "rows"],
    ["rows=1.5", "q=dress&rows=1.5", "rows"],
    ["start=-1", "q=dress&start=-1", "start"],
    ["start=x", "q=dress&start=x", "start"],
    ["store=pets", "q=dress&store=pets", "store"],
    ["store=women&store=pets", "q=dress&store=women&store=pets", "store"],
    ["color=teal", "q=dress&color=teal", "color"],
    ["gender=x", "q=dress&gender=x", "gender"],
    ["size=bad", "q=dress&size=bad", "size"],
    ["q twice", "q=dress&q=boot", "q"],
    ["q too long", `q=${"dress%20".repeat(60)}`, "q"],
    ["rows twice", "q=dress&rows=5&rows=6", "rows"],
    ["empty brand", "q=dress&brand=", "brand"],
    ["affid with a space", "q=dress&affid=a%20b", "affid"],
  ])("%s is a 400 invalid_parameter naming the parameter", async (_, params, name) => {
    const res = await fetch(`${url}/v1/products?apikey=${key}${params ? `&${params}` : ""}`);
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    const body = (await res.json()) as { status: number; code: string; detail: string };
    expect(body.status).toBe(400);
    expect(body.code).toBe("invalid_parameter");
    expect(body.detail).toMatch(new RegExp(`\\b${name}\\b`));
  });

  it("unknown parameters are ignored", async () => {
    const plain = await search({ q: "dress" });
    const res = await fetch(`${searchUrl({ q: "dress" })}&order=price&fq=x`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(plain);
  });
});

describe("response", () => {
  it("has an ETag that answers If-None-Match with 304, a max-age within the default 300 s, and the same JSON gzipped", async () => {
    const target = searchUrl({ q: "leather boot", rows: 50 });
    const res = await fetch(target, { headers: { "accept-encoding": "identity" } });
    expect(res.status).toBe(200);
    const body = await res.json();
    const etag = res.headers.get("etag");
    expect(etag).toBeTruthy();
    expect(res.headers.get("cache-control")).toMatch(/^public, max-age=(\d+)$/);
    expect(Number(/max-age=(\d+)/.exec(res.headers.get("cache-control")!)![1])).toBeLessThanOrEqual(300);
    expect((await fetch(target, { headers: { "if-none-match": etag! } })).status).toBe(304);
    const gz = await fetch(target, { headers: { "accept-encoding": "gzip" } });
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    expect(gz.headers.get("vary")).toMatch(/accept-encoding/i);
    expect(await gz.json()).toEqual(body);
    const plain = await fetch(target, { headers: { "accept-encoding": "identity" } });
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(Number(plain.headers.get("content-length"))).toBe(Buffer.byteLength(JSON.stringify(body)));
  });

  it("a gzipped page (assembled from per-product deflate fragments) decodes, CRC and length checked, to the identity bytes", async () => {
    const pages: Params[] = [
      { q: "dress", rows: 100 },
      { q: "leather", rows: 7, start: 3 },
      { q: "zzzznothing" },
      { q: "cotton", color: ["black"], rows: 1 },
    ];
    for (const params of pages) {
      const target = searchUrl(params);
      const plain = Buffer.from(
        await (await fetch(target, { headers: { "accept-encoding": "identity" } })).arrayBuffer(),
      );
      const raw = await rawGet(target, { "accept-encoding": "gzip" });
      if (plain.length < 1024) {
        expect(raw.headers["content-encoding"]).toBeUndefined();
        continue;
      }
      expect(raw.headers["content-encoding"]).toBe("gzip");
      expect(Number(raw.headers["content-length"])).toBe(raw.body.length);
      expect(gunzipSync(raw.body).equals(plain)).toBe(true);
      expect(raw.body.length).toBeLessThan(plain.length / 2);
    }
  });

  it("gzips a page with affid or JSONP on demand too, with the affid in every page link", async () => {
    const target = `${searchUrl({ q: "dress", rows: 20 })}&affid=partner_7`;
    const gz = await fetch(target, { headers: { "accept-encoding": "gzip" } });
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    const body = (await gz.json()) as { products: { url: string }[] };
    expect(body.products.length).toBeGreaterThan(1);
    for (const p of body.products) expect(p.url).toMatch(/[?&]affid=partner_7(&|$)/);
    const etag = gz.headers.get("etag")!;
    const again = await fetch(target, { headers: { "accept-encoding": "gzip", "if-none-match": etag } });
    expect(again.status).toBe(304);
    const jsonp = await fetch(`${target}&callback=cb`, { headers: { "accept-encoding": "identity" } });
    expect(jsonp.headers.get("content-encoding")).toBeNull();
    expect(await jsonp.text()).toMatch(/^\/\*\*\/cb\(\{"products":/);
  });
});

describe("response freshness and JSONP", () => {
  it("max-age never reaches past the next sale start or end (the instant the answer may change)", async () => {
    const boundaries = sales
      .flatMap((s) => [seconds(s.begins), ...(s.ends ? [seconds(s.ends)] : [])])
      .filter((t) => t > NOW_S)
      .sort((a, b) => a - b);
    const next = boundaries[0]!;
    const t = next - 100;
    const s = await startServer(
      await createHandler({ dataDir: join(root, "data"), keysFile: join(root, "keys.json"), clock: () => t * 1000 }),
      "127.0.0.1",
      0,
    );
    try {
      const res = await fetch(
        `http://127.0.0.1:${s.port}/v1/products?${new URLSearchParams({ apikey: key, q: "dress" }).toString()}`,
      );
      expect(res.status).toBe(200);
      const maxAge = Number(/max-age=(\d+)/.exec(res.headers.get("cache-control") ?? "")?.[1]);
      expect(maxAge).toBeGreaterThanOrEqual(0);
      expect(maxAge).toBeLessThanOrEqual(100);
    } finally {
      await s.close();
    }
  });

  it("callback wraps the same search result as JSONP", async () => {
    const plain = await search({ q: "leather boot", rows: 5 });
    const res = await fetch(`${searchUrl({ q: "leather boot", rows: 5 })}&callback=cb.x`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/javascript; charset=utf-8");
    const text = await res.text();
    expect(text.startsWith("/**/cb.x(") && text.endsWith(");")).toBe(true);
    expect(JSON.parse(text.slice("/**/cb.x(".length, -2))).toEqual(plain);
  });
});

describe("items", () => {
  const detail = async (id: number, affid?: string) => {
    const res = await fetch(`${url}/v1/products/${id}/detail.json?apikey=${key}${affid ? `&affid=${affid}` : ""}`);
    expect(res.status).toBe(200);
    return (await res.json()) as Item;
  };

  it("are the full product detail objects, equal to GET /v1/products/<id>/detail.json", async () => {
    for (const q of ["leather boot", "duvet cover", "cafe"]) {
      const page = await search({ q, rows: 15 });
      expect(page.products.length).toBeGreaterThan(0);
      for (const item of page.products) expect(item).toEqual(await detail(item.id));
    }
  });

  it("carry affid in each item's url, like the product detail, and nowhere else", async () => {
    const plain = await search({ q: "sweater", rows: 12 });
    const tagged = await search({ q: "sweater", rows: 12, affid: "partner_7.x" });
    expect(tagged.total_found).toBe(plain.total_found);
    expect(tagged.products.length).toBe(12);
    tagged.products.forEach((item, i) => {
      const before = plain.products[i]!;
      expect(item.id).toBe(before.id);
      expect(item.product).toBe(before.product);
      expect(new URL(item.url).searchParams.get("affid")).toBe("partner_7.x");
      expect(new URL(before.url).searchParams.has("affid")).toBe(false);
      expect({ ...item, url: before.url }).toEqual(before);
    });
    for (const item of tagged.products.slice(0, 4)) expect(item).toEqual(await detail(item.id, "partner_7.x"));
  });
});
