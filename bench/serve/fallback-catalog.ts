// A default-scale catalog made from the test fixture's helpers, for when the sample generator is not available.
import { STORES } from "../../src/catalog/schema.ts";
import type { Product, Sale } from "../../src/catalog/schema.ts";
import { iso, product, sale, sku, writeCatalog } from "../../test/helpers/fixture.ts";

const HOUR = 3600;
const COLORS = [
  ["Navy", "blue"],
  ["Black", "black"],
  ["Ivory", "white"],
  ["Camel", "brown"],
  ["Olive", "green"],
  ["Burgundy", "red"],
] as const;
const SIZES = ["6", "6.5", "7", "7.5", "8", "8.5", "9", "9.5", "10", "11"];
const SENTENCES = [
  "Cut from supple full-grain leather with a cushioned footbed for all-day comfort.",
  "A stacked heel and a rounded toe give it an easy, versatile shape.",
  "Pairs as well with tailored trousers as with denim and a knit.",
  "Finished with tonal stitching and a side zip so it slips on and off.",
  "The rubber outsole grips on wet pavements without adding weight.",
];

function benchProduct(id: number, kids: boolean): Product {
  const skus = SIZES.slice(0, 6 + (id % 5)).map((size, i) => {
    const [color, group] = COLORS[(id + i) % COLORS.length]!;
    return sku(id * 100 + i, {
      size,
      size_key: `WoSh:${size}`,
      color,
      color_group: group,
      inventory_status: i % 4 === 3 ? "sold out" : "for sale",
    });
  });
  return product(id, {
    name: `Leather Ankle Boot ${id}`,
    content: {
      description: SENTENCES.slice(0, 3 + (id % 3)).join(" "),
      material: "Leather upper, rubber sole",
      care_instructions: "Wipe clean with a damp cloth.",
      origin: "Imported",
    },
    skus,
    ...(kids ? { gender: "unisex" as const } : {}),
  });
}

/**
 * Writes about the default scale: 100 active and 40 upcoming sales (beginning on the hour around `now`), and
 * `products` products spread over them. Returns the catalog directory.
 */
export async function writeFallbackCatalog(dir: string, now: Date, products = 6000): Promise<string> {
  const hour = Math.floor(now.getTime() / 1000 / HOUR) * HOUR;
  const saleCount = 140;
  const perSale = Math.max(1, Math.floor(products / saleCount));
  const sales: Sale[] = [];
  for (let i = 0; i < saleCount; i++) {
    const active = i < 100;
    const begins = active ? hour - (1 + (i % 48)) * HOUR : hour + (1 + (i - 100)) * HOUR;
    const ids = Array.from({ length: perSale }, (_, j) => 1 + i * perSale + j);
    sales.push(
      sale(`bench-sale-${i}`, {
        store: STORES[i % STORES.length]!,
        begins: iso(begins),
        ends: iso(begins + (3 * 24 + (i % 24)) * HOUR),
        product_ids: ids,
      }),
    );
  }
  const all = Array.from({ length: perSale * saleCount }, (_, i) =>
    benchProduct(i + 1, sales[Math.floor(i / perSale)]!.store === "kids"),
  );
  return writeCatalog(dir, { sales, products: all });
}
