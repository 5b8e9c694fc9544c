import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCatalog } from "../../src/catalog/load.ts";
import { DEFAULT_SAMPLE_PRODUCTS, writeSampleCatalog } from "../../src/catalog/sample/index.ts";
import type { SampleCatalogSummary } from "../../src/catalog/sample/index.ts";
import { slugify } from "../../src/catalog/sample/text.ts";
import { CatalogMetaSchema, ProductSchema, SaleSchema, SIZE_KEY_RE } from "../../src/catalog/schema.ts";
import type { Product, Sale, Store } from "../../src/catalog/schema.ts";

const NOW = new Date("2026-11-22T15:30:00Z");
const NOW_MS = NOW.getTime();
const HOUR = 3_600_000;
const PRODUCTS = 300;
const SEED = 7;
const FILES = ["catalog.json", "sales.ndjson", "products.ndjson"];
const STORE_SIZE_PREFIX: Record<Store, string> = { women: "Wo", men: "Me", kids: "Ki", home: "Ho" };

let root: string;
let dirA: string;
let summary: SampleCatalogSummary;
let sales: Sale[];
let products: Product[];

const sha256 = async (path: string): Promise<string> =>
  createHash("sha256")
    .update(await readFile(path))
    .digest("hex");
const cents = (price: string): number => Math.round(Number(price) * 100);
const lines = (text: string): string[] => text.split("\n").filter((l) => l !== "");
const status = (s: Sale): "upcoming" | "active" | "ended" => {
  if (NOW_MS < Date.parse(s.begins)) return "upcoming";
  if (s.ends !== undefined && NOW_MS >= Date.parse(s.ends)) return "ended";
  return "active";
};

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "sample-catalog-"));
  dirA = join(root, "a");
  summary = await writeSampleCatalog(dirA, { seed: SEED, products: PRODUCTS, now: NOW });
  sales = lines(await readFile(join(dirA, "sales.ndjson"), "utf8")).map((l) => SaleSchema.parse(JSON.parse(l)));
  products = lines(await readFile(join(dirA, "products.ndjson"), "utf8")).map((l) =>
    ProductSchema.parse(JSON.parse(l)),
  );
});

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe("writeSampleCatalog: files and determinism", () => {
  it("writes exactly the three catalog files, no temporary files left", async () => {
    expect((await readdir(dirA)).sort()).toEqual([...FILES].sort());
  });

  it("is byte-identical for the same seed, products and now", async () => {
    const dirB = join(root, "b");
    const again = await writeSampleCatalog(dirB, { seed: SEED, products: PRODUCTS, now: NOW });
    expect(again).toEqual(summary);
    for (const file of FILES) expect(await sha256(join(dirB, file)), file).toBe(await sha256(join(dirA, file)));
  });

  it("differs for another seed, and its sales move with now", async () => {
    const dirC = join(root, "c");
    await writeSampleCatalog(dirC, { seed: SEED + 1, products: PRODUCTS, now: NOW });
    for (const file of ["sales.ndjson", "products.ndjson"])
      expect(await sha256(join(dirC, file)), file).not.toBe(await sha256(join(dirA, file)));
    const dirD = join(root, "d");
    await writeSampleCatalog(dirD, { seed: SEED, products: PRODUCTS, now: new Date(NOW_MS + 7 * 24 * HOUR) });
    const later = lines(await readFile(join(dirD, "sales.ndjson"), "utf8")).map((l) => SaleSchema.parse(JSON.parse(l)));
    expect(Math.min(...later.map((s) => Date.parse(s.begins)))).toBeGreaterThan(
      Math.min(...sales.map((s) => Date.parse(s.begins))),
    );
  });

  it("reports counts that match the files", () => {
    expect(summary.products).toBe(PRODUCTS);
    expect(products).toHaveLength(PRODUCTS);
    expect(summary.sales).toBe(sales.length);
    expect(summary.skus).toBe(products.reduce((n, p) => n + p.skus.length, 0));
    expect(summary.active + summary.upcoming + summary.ended).toBe(sales.length);
    expect(summary.active).toBe(sales.filter((s) => status(s) === "active").length);
  });

  it("rejects bad options", async () => {
    await expect(writeSampleCatalog(join(root, "x"), { products: 0, now: NOW })).rejects.toThrow(/products/);
    await expect(writeSampleCatalog(join(root, "x"), { seed: -1, now: NOW })).rejects.toThrow(/seed/);
    await expect(writeSampleCatalog(join(root, "x"), { now: new Date("nope") })).rejects.toThrow(/now/);
  });
});

describe("writeSampleCatalog: content follows the catalog schema and rules", () => {
  it("every line parses with the zod schemas", async () => {
    expect(CatalogMetaSchema.safeParse(JSON.parse(await readFile(join(dirA, "catalog.json"), "utf8"))).success).toBe(
      true,
    );
    // beforeAll already parsed every line strictly; check nothing was silently dropped by counting raw lines.
    expect(lines(await readFile(join(dirA, "products.ndjson"), "utf8"))).toHaveLength(products.length);
  });

  it("has unique product IDs, SKU IDs and sale keys", () => {
    const ids = products.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const skuIds = products.flatMap((p) => p.skus.map((s) => s.id));
    expect(new Set(skuIds).size).toBe(skuIds.length);
    const keys = sales.map((s) => s.key);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("lists every product in a sale of one store, a few in two, and only existing products", () => {
    const byId = new Map(products.map((p) => [p.id, p]));
    const storesOf = new Map<number, Set<Store>>();
    const listings = new Map<number, number>();
    for (const sale of sales) {
      expect(new Set(sale.product_ids).size, sale.key).toBe(sale.product_ids.length);
      for (const id of sale.product_ids) {
        expect(byId.has(id), `${sale.key} lists missing product ${id}`).toBe(true);
        storesOf.set(id, (storesOf.get(id) ?? new Set()).add(sale.store));
        listings.set(id, (listings.get(id) ?? 0) + 1);
      }
    }
    for (const product of products) {
      const stores = [...(storesOf.get(product.id) ?? [])];
      expect(stores, `product ${product.id}`).toHaveLength(1);
      const store = stores[0] as Store;
      for (const sku of product.skus) {
        if (sku.size_key !== undefined)
          expect(sku.size_key.startsWith(STORE_SIZE_PREFIX[store]), `${product.id} ${sku.size_key} in ${store}`).toBe(
            true,
          );
      }
      if (store === "kids") expect(product.gender, `kids product ${product.id}`).toBeDefined();
      else expect(product.gender, `${store} product ${product.id}`).toBeUndefined();
    }
    const shared = [...listings.values()].filter((n) => n === 2).length;
    expect(shared).toBeGreaterThan(0);
    expect(shared).toBeLessThan(PRODUCTS * 0.1);
    expect([...listings.values()].every((n) => n <= 2)).toBe(true);
  });

  it("prices: sale price at or below MSRP, 30-80% off, surcharges only on home goods", () => {
    const storeOf = new Map(sales.flatMap((s) => s.product_ids.map((id) => [id, s.store] as const)));
    for (const product of products) {
      const surcharged = product.skus.some((s) => s.shipping_surcharge !== undefined);
      if (surcharged) expect(storeOf.get(product.id), product.name).toBe("home");
      for (const sku of product.skus) {
        const msrp = cents(sku.msrp_price);
        const sale = cents(sku.sale_price);
        expect(sale, `sku ${sku.id}`).toBeLessThanOrEqual(msrp);
        const off = Math.floor(((msrp - sale) * 100) / msrp);
        expect(off, `sku ${sku.id} ${sku.msrp_price} -> ${sku.sale_price}`).toBeGreaterThanOrEqual(30);
        expect(off, `sku ${sku.id} ${sku.msrp_price} -> ${sku.sale_price}`).toBeLessThanOrEqual(80);
      }
    }
  });

  it("sizes: label equals size, one name per group code; colours map to one group each", () => {
    const groupNames = new Map<string, string>();
    const colorGroups = new Map<string, string>();
    for (const sku of products.flatMap((p) => p.skus)) {
      expect(sku.color === undefined).toBe(sku.color_group === undefined);
      if (sku.color !== undefined) {
        expect(colorGroups.get(sku.color) ?? sku.color_group, sku.color).toBe(sku.color_group);
        colorGroups.set(sku.color, sku.color_group ?? "");
      }
      if (sku.size_key === undefined) {
        expect(sku.size).toBeUndefined();
        continue;
      }
      const match = SIZE_KEY_RE.exec(sku.size_key);
      expect(match?.[2], sku.size_key).toBe(sku.size);
      const code = match?.[1] ?? "";
      expect(groupNames.get(code) ?? sku.size_group, code).toBe(sku.size_group);
      groupNames.set(code, sku.size_group ?? "");
    }
    expect(groupNames.size).toBeGreaterThanOrEqual(6);
  });

  it("images: 2-4 pictures per product, each size's width and height in its URL", () => {
    for (const product of products) {
      const pictures = new Set(product.images.map((i) => i.url.replace(/\/\d+x\d+\.jpg$/, "")));
      expect(pictures.size).toBeGreaterThanOrEqual(2);
      expect(pictures.size).toBeLessThanOrEqual(4);
      for (const image of [...product.images, ...sales.flatMap((s) => s.images)]) {
        expect(image.url).toContain(`${image.width}x${image.height}.jpg`);
      }
    }
  });

  it("images: every sale in the sizes clients of the original API read, every product picture in the three product sizes", () => {
    const sizes = (images: readonly { width: number; height: number }[]) =>
      [...new Set(images.map((i) => `${i.width}x${i.height}`))].sort();
    const saleSizes = ["744x281", "636x400", "455x172", "370x345", "300x280", "300x184", "140x130", "100x93"].sort();
    expect(sales.length).toBeGreaterThan(0);
    for (const sale of sales) {
      expect(sizes(sale.images), sale.key).toEqual(saleSizes);
      expect(sale.images, sale.key).toHaveLength(saleSizes.length);
    }
    for (const product of products) {
      expect(sizes(product.images), `product ${product.id}`).toEqual(["300x400", "420x560", "91x121"]);
      expect(product.images.length % 3, `product ${product.id}`).toBe(0);
    }
  });

  it("text is clean: no control characters, page paths carry the ID and a slug", () => {
    for (const product of products) {
      const text = [product.name, product.brand, ...Object.values(product.content), ...product.categories].join(" ");
      expect(text).not.toMatch(/[\u0000-\u001f\u007f-\u009f\ufffd]/);
      expect(product.page_path).toBe(`/product/${product.id}-${slugify(product.name)}`);
    }
    expect(slugify("Crêpe Café Bouclé & Co.")).toBe("crepe-cafe-boucle-and-co");
  });
});

describe("writeSampleCatalog: sale windows around now", () => {
  it("has ended, active and upcoming sales, and one that never ends", () => {
    const counts = { ended: 0, active: 0, upcoming: 0 };
    for (const sale of sales) counts[status(sale)]++;
    expect(counts.ended).toBeGreaterThan(0);
    expect(counts.active).toBeGreaterThan(counts.upcoming);
    expect(counts.upcoming).toBeGreaterThan(0);
    expect(sales.some((s) => s.ends === undefined && status(s) === "active")).toBe(true);
  });

  it("starts and ends sales on the hour; upcoming ones within three days; ends after begins", () => {
    for (const sale of sales) {
      const begins = Date.parse(sale.begins);
      expect(begins % HOUR, sale.begins).toBe(0);
      if (sale.ends !== undefined) {
        const ends = Date.parse(sale.ends);
        expect(ends % HOUR, sale.ends).toBe(0);
        expect(ends - begins).toBeGreaterThanOrEqual(36 * HOUR);
      }
      if (status(sale) === "upcoming") expect(begins - NOW_MS).toBeLessThanOrEqual(72 * HOUR);
    }
  });

  it("is accepted by the catalog loader with no errors", async () => {
    const catalog = await loadCatalog(dirA, { now: NOW_MS });
    expect(catalog.products.size).toBe(PRODUCTS);
    expect(catalog.sales).toHaveLength(sales.length);
  });
});

describe("writeSampleCatalog at the default scale", () => {
  it("makes about 100 active, 40 upcoming and 20 ended sales, ~6.5 SKUs a product, and skewed vocabulary", async () => {
    const dir = join(root, "default");
    const result = await writeSampleCatalog(dir, { now: NOW });
    expect(result.products).toBe(DEFAULT_SAMPLE_PRODUCTS);
    expect([result.active, result.upcoming, result.ended]).toEqual([100, 40, 20]);
    expect(result.skus / result.products).toBeGreaterThan(5.5);
    expect(result.skus / result.products).toBeLessThan(8);

    const words = { dress: 0, black: 0, cotton: 0, insouciant: 0 };
    const brands = new Set<string>();
    const input = createReadStream(join(dir, "products.ndjson"));
    for await (const line of createInterface({ input, crlfDelay: Infinity })) {
      const product = JSON.parse(line) as Product;
      brands.add(product.brand);
      const tokens = new Set(`${product.name} ${product.content.description ?? ""}`.toLowerCase().split(/[^a-z]+/));
      for (const word of Object.keys(words) as (keyof typeof words)[])
        if (tokens.has(word) || tokens.has(`${word}es`)) words[word]++;
    }
    expect(brands.size).toBeGreaterThanOrEqual(150);
    for (const broad of ["dress", "black", "cotton"] as const)
      expect(words[broad] / result.products, broad).toBeGreaterThan(0.12);
    expect(words.insouciant / result.products).toBeLessThan(0.01);
  });
});

describe("sample CLI", () => {
  const cli = (args: string[]) =>
    spawnSync(process.execPath, ["--import", "tsx", "src/cli/sample.ts", ...args], {
      encoding: "utf8",
      cwd: join(import.meta.dirname, "../.."),
    });

  it.each([
    [["--products", "abc", "--out", "x"], /--products/],
    [["--out", "x", "--seed", "-3"], /--seed|-3/],
    [["--out", "x", "--now", "yesterday"], /--now/],
    [["--products", "10"], /--out/],
    [["--out", "x", "--bogus"], /bogus/],
  ])("exits 2 with a message for %j", (args, message) => {
    const run = cli(args);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stdout).toBe("");
  });

  it("writes a catalog and prints one summary line", async () => {
    const out = join(root, "cli");
    const run = cli(["--out", out, "--products", "40", "--seed", "3", "--now", "2026-11-22T15:30:00Z"]);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(lines(run.stdout)).toHaveLength(1);
    expect(run.stdout).toMatch(/40 products/);
    expect((await readdir(out)).sort()).toEqual([...FILES].sort());
  });
});

describe("writeSampleCatalog with live sales (npm start's sample)", () => {
  it("adds a sale beginning on the first whole minute a minute after now and one ending a minute later, the rest as it was", async () => {
    const now = new Date(NOW_MS + 20_500); // 15:30:20.5: the live sale begins at 15:32:00
    const liveDir = join(root, "live");
    const plainDir = join(root, "live-plain");
    const live = await writeSampleCatalog(liveDir, { seed: SEED, products: PRODUCTS, now, live: true });
    const plain = await writeSampleCatalog(plainDir, { seed: SEED, products: PRODUCTS, now });
    // The products and the planned sales are the same; two sales come after them.
    expect(await sha256(join(liveDir, "products.ndjson"))).toBe(await sha256(join(plainDir, "products.ndjson")));
    const liveLines = lines(await readFile(join(liveDir, "sales.ndjson"), "utf8"));
    const plainLines = lines(await readFile(join(plainDir, "sales.ndjson"), "utf8"));
    expect(liveLines.slice(0, plainLines.length)).toEqual(plainLines);
    const [begins, ends] = liveLines.slice(plainLines.length).map((l) => SaleSchema.parse(JSON.parse(l)));
    expect(liveLines).toHaveLength(plainLines.length + 2);
    expect([live.sales, live.upcoming, live.active, live.ended]).toEqual([
      plain.sales + 2,
      plain.upcoming + 1,
      plain.active + 1,
      plain.ended,
    ]);
    expect([begins!.store, begins!.begins, begins!.ends]).toEqual([
      "women",
      "2026-11-22T15:32:00Z",
      "2026-11-24T15:32:00Z",
    ]);
    expect([ends!.store, ends!.ends]).toEqual(["men", "2026-11-22T15:33:00Z"]);
    expect(Date.parse(ends!.begins)).toBeLessThanOrEqual(now.getTime());
    // Each lists products of its store that one other sale lists: a product is in two sales at most.
    const all = [...plainLines, ...liveLines.slice(plainLines.length)].map((l) => SaleSchema.parse(JSON.parse(l)));
    for (const sale of [begins!, ends!]) {
      expect(sale.product_ids.length, sale.key).toBeGreaterThan(0);
      for (const id of sale.product_ids) {
        const listedIn = all.filter((s) => s.product_ids.includes(id));
        expect(listedIn.map((s) => s.store)).toEqual([sale.store, sale.store]);
      }
    }
    // The same now gives the same files; the loader takes them.
    const again = join(root, "live-again");
    await writeSampleCatalog(again, { seed: SEED, products: PRODUCTS, now, live: true });
    expect(await sha256(join(again, "sales.ndjson"))).toBe(await sha256(join(liveDir, "sales.ndjson")));
    const catalog = await loadCatalog(liveDir, { now: now.getTime() });
    expect(catalog.sales).toHaveLength(liveLines.length);
  });
});
