// Catalog validation: every problem reported at once as file:line: field: message, and the build fails writing nothing.
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildSnapshot } from "../../src/generate/index.ts";
import { loadCatalog } from "../../src/catalog/load.ts";
import { CatalogError, MAX_REPORTED_PROBLEMS } from "../../src/catalog/problems.ts";
import { product, sale, sku, standardCatalog, T0, tempDir, writeCatalog } from "../helpers/fixture.ts";

async function problemsOf(catalog: { sales: unknown[]; products: unknown[] }, raw = {}): Promise<string[]> {
  const dir = await writeCatalog(await tempDir(), catalog, raw);
  try {
    await loadCatalog(dir, { now: T0 * 1000 }); // the fixture's clock: which sales have ended depends on it
  } catch (err) {
    if (err instanceof CatalogError) return err.report().split("\n");
    throw err;
  }
  return [];
}

describe("loadCatalog", () => {
  it("accepts the standard fixture, warning about the product in no sale", async () => {
    const dir = await writeCatalog(await tempDir(), standardCatalog());
    const catalog = await loadCatalog(dir, { now: T0 * 1000 });
    expect(catalog.products.size).toBe(6);
    expect(catalog.sales).toHaveLength(5);
    expect(catalog.digest).toMatch(/^[0-9a-f]{64}$/);
    const warnings = catalog.problems.warnings.map((w) => `${w.file}:${w.line}: ${w.field}: ${w.message}`);
    expect(warnings).toContain("products.ndjson:6: id: product 6 is in no sale; it will not be served");
  });

  it.each([
    ["invalid JSON", { products: '{"id": 1,\n' }, "products.ndjson:1: invalid JSON"],
    ["a wrong type", { products: JSON.stringify({ ...product(1), id: "1" }) + "\n" }, "products.ndjson:1: id: "],
    [
      "an unknown field",
      { products: JSON.stringify({ ...product(1), colour: "x" }) + "\n" },
      "products.ndjson:1: colour: unknown field",
    ],
    [
      "a price that is not money",
      { products: JSON.stringify(product(1, { skus: [sku(1, { sale_price: "12.5" })] })) + "\n" },
      "products.ndjson:1: skus[0].sale_price: must be money",
    ],
    [
      "a price as a number",
      { products: JSON.stringify(product(1, { skus: [sku(1, { msrp_price: 10 as unknown as string })] })) + "\n" },
      "products.ndjson:1: skus[0].msrp_price: ",
    ],
    [
      "a sale price above MSRP",
      { products: JSON.stringify(product(1, { skus: [sku(1, { sale_price: "130.00" })] })) + "\n" },
      "products.ndjson:1: skus[0].sale_price: 130.00 is above msrp_price 120.00",
    ],
    [
      "a size key that does not match its size",
      { products: JSON.stringify(product(1, { skus: [sku(1, { size_key: "WoSh:9" })] })) + "\n" },
      'products.ndjson:1: skus[0].size_key: label of "WoSh:9" must equal size "8.5"',
    ],
    [
      "a product with no SKUs",
      { products: JSON.stringify(product(1, { skus: [] })) + "\n" },
      "products.ndjson:1: skus: must have at least one SKU",
    ],
    [
      "ends before begins",
      { sales: JSON.stringify(sale("x", { begins: "2026-11-22T17:00:00Z", ends: "2026-11-22T17:00:00Z" })) + "\n" },
      "sales.ndjson:1: ends: 2026-11-22T17:00:00Z is not after begins",
    ],
    [
      "an unsafe sale key",
      { sales: JSON.stringify(sale("../etc")) + "\n" },
      "sales.ndjson:1: key: must be a URL-safe slug",
    ],
    [
      "an unknown store",
      { sales: JSON.stringify(sale("x", { store: "pets" as "women" })) + "\n" },
      "sales.ndjson:1: store: ",
    ],
    [
      "a fractional second",
      { sales: JSON.stringify(sale("x", { begins: "2026-11-22T17:00:00.5Z" })) + "\n" },
      "sales.ndjson:1: begins: must be a whole second",
    ],
    [
      "a missing product",
      { sales: JSON.stringify(sale("x", { product_ids: [42] })) + "\n" },
      "sales.ndjson:1: product_ids[0]: product 42 does not exist",
    ],
  ])("reports %s with file:line: field", async (_what, raw, expected) => {
    const lines = await problemsOf({ sales: [], products: [product(1)] }, { sales: "", ...raw });
    expect(
      lines.some((l) => l.startsWith(expected)),
      lines.join("\n"),
    ).toBe(true);
  });

  it("reports duplicates with where the first one was", async () => {
    const lines = await problemsOf({
      products: [product(1), product(2, { skus: [sku(11)] }), product(1)],
      sales: [
        sale("a", { product_ids: [1] }),
        sale("a", { product_ids: [2] }),
        sale("a", { store: "men", product_ids: [2] }),
      ],
    });
    expect(lines).toContain("products.ndjson:2: skus[0].id: duplicate SKU id 11 (first at products.ndjson:1)");
    expect(lines).toContain("products.ndjson:3: id: duplicate product id 1 (first at products.ndjson:1)");
    expect(lines).toContain('sales.ndjson:2: key: duplicate sale key "a" in store women (first at sales.ndjson:1)');
    expect(lines.filter((l) => l.startsWith("sales.ndjson:3"))).toEqual([]); // same key in another store is fine
  });

  it("reports every problem in one pass, capped with a count of the rest", async () => {
    const n = MAX_REPORTED_PROBLEMS + 50;
    const products = Array.from({ length: n }, (_, i) => ({ ...product(i + 1), brand: "" }));
    const lines = await problemsOf({ products, sales: [] });
    expect(lines.filter((l) => l.includes(": brand: must not be blank"))).toHaveLength(MAX_REPORTED_PROBLEMS);
    expect(lines).toContain("... and 50 more errors");
    expect(lines[lines.length - 1]).toBe(`catalog has ${n} errors`);
  });

  it("a catalog with errors fails the build and writes nothing", async () => {
    const root = await tempDir();
    const catalogDir = await writeCatalog(join(root, "catalog"), {
      sales: [sale("x", { product_ids: [9] })],
      products: [product(1)],
    });
    const dataDir = join(root, "data");
    await expect(buildSnapshot({ catalogDir, dataDir, baseUrl: "http://x" })).rejects.toBeInstanceOf(CatalogError);
    expect(await readdir(dataDir)).toEqual([]);
  });
});
