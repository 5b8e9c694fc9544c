// Deterministic sample catalog generator: a realistic flash-sale catalog around a given `now`, streamed to disk.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CATALOG_FORMAT } from "../schema.ts";
import type { CatalogMeta } from "../schema.ts";
import { createSampleProduct } from "./products.ts";
import type { Random } from "./random.ts";
import { createRandom, deriveSeed } from "./random.ts";
import type { PlannedSale } from "./sales.ts";
import { planSales, renderSale } from "./sales.ts";
import { planLiveSales } from "./live-sales.ts";
import { createLineWriter } from "./write.ts";

export { planSales, PRODUCTS_PER_SALE } from "./sales.ts";
export { liveSaleBegins } from "./live-sales.ts";
export { createSampleProduct } from "./products.ts";

/** Products in the default sample: 160 sales, about 40,000 SKUs. */
export const DEFAULT_SAMPLE_PRODUCTS = 6000;
export const DEFAULT_SAMPLE_SEED = 1;
/** Largest catalog the generator agrees to make. */
export const MAX_SAMPLE_PRODUCTS = 5_000_000;
export const SAMPLE_SITE_URL = "https://www.example-retailer.com";

/** Share of products that a second sale of their store also lists (an encore, or a preview in an upcoming sale). */
const SHARED_PRODUCT_SHARE = 0.04;
const FIRST_PRODUCT_ID = 100_001;
const FIRST_SKU_ID = 5_000_001;
const STREAM_IDS = 0x69647321;

export interface SampleCatalogOptions {
  /** Seed of every random choice: the same seed, product count and `now` give byte-identical files. Default 1. */
  seed?: number;
  /** How many products to make (at least 1). Default DEFAULT_SAMPLE_PRODUCTS (6,000). */
  products?: number;
  /** The instant sales are arranged around (active, upcoming, ended). Default: the current time. */
  now?: Date;
  /**
   * Adds two sales to watch change (live-sales.ts): one beginning at the first whole minute at least a minute after
   * `now` (liveSaleBegins), one ending a minute after that. `npm start` asks for them. Default false.
   */
  live?: boolean;
}

export interface SampleCatalogSummary {
  sales: number;
  products: number;
  skus: number;
  /** Sales by status at `now`. */
  active: number;
  upcoming: number;
  ended: number;
  /** Bytes written across the three files. */
  bytes: number;
}

/**
 * Writes `catalog.json`, `products.ndjson` and `sales.ndjson` into `dir` (created if missing), streaming products
 * one line at a time so memory stays bounded at any size. Existing files of those names are replaced.
 */
export async function writeSampleCatalog(
  dir: string,
  options: SampleCatalogOptions = {},
): Promise<SampleCatalogSummary> {
  const seed = options.seed ?? DEFAULT_SAMPLE_SEED;
  const productCount = options.products ?? DEFAULT_SAMPLE_PRODUCTS;
  const now = (options.now ?? new Date()).getTime();
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)
    throw new RangeError(`seed must be an integer 0..4294967295, not ${seed}`);
  if (!Number.isInteger(productCount) || productCount < 1 || productCount > MAX_SAMPLE_PRODUCTS) {
    throw new RangeError(`products must be an integer 1..${MAX_SAMPLE_PRODUCTS}, not ${productCount}`);
  }
  if (Number.isNaN(now)) throw new RangeError("now is not a valid date");

  await mkdir(dir, { recursive: true });
  const plan = planSales(seed, productCount, now);
  const products = createLineWriter(join(dir, "products.ndjson"));
  let skus: number;
  let bytes = 0;
  try {
    skus = await writeProducts(products, plan, seed);
    bytes += await products.close();
  } catch (err) {
    await products.abort();
    throw err;
  }

  // After the products: the live sales list some of theirs.
  const all = options.live ? [...plan, ...planLiveSales(plan, now)] : plan;
  const sales = createLineWriter(join(dir, "sales.ndjson"));
  try {
    for (const sale of all) await sales.write(JSON.stringify(renderSale(sale)));
    bytes += await sales.close();
  } catch (err) {
    await sales.abort();
    throw err;
  }

  const meta: CatalogMeta = { format: CATALOG_FORMAT, site_url: SAMPLE_SITE_URL };
  const metaText = `${JSON.stringify(meta)}\n`;
  await writeFile(join(dir, "catalog.json"), metaText);
  bytes += Buffer.byteLength(metaText);

  const count = (status: PlannedSale["status"]): number => all.filter((s) => s.status === status).length;
  return {
    sales: all.length,
    products: productCount,
    skus,
    active: count("active"),
    upcoming: count("upcoming"),
    ended: count("ended"),
    bytes,
  };
}

/** Streams every product, sale by sale; fills each sale's product IDs. Returns the SKU count. */
async function writeProducts(
  out: ReturnType<typeof createLineWriter>,
  plan: PlannedSale[],
  seed: number,
): Promise<number> {
  const rng = createRandom(deriveSeed(seed, STREAM_IDS));
  const byStore = new Map<string, PlannedSale[]>();
  for (const sale of plan) {
    const list = byStore.get(sale.store);
    if (list) list.push(sale);
    else byStore.set(sale.store, [sale]);
  }
  let id = FIRST_PRODUCT_ID;
  let skuId = FIRST_SKU_ID;
  for (const sale of plan) {
    for (let i = 0; i < sale.size; i++) {
      const { product, type, maxPercentOff } = createSampleProduct({
        seed,
        id,
        firstSkuId: skuId,
        store: sale.store,
        constraints: sale.theme,
      });
      sale.productIds.push(id);
      sale.maxPercentOff = Math.max(sale.maxPercentOff, maxPercentOff);
      if (rng.chance(SHARED_PRODUCT_SHARE)) {
        const other = pickSecondSale(rng, byStore.get(sale.store) ?? [], sale, type.id, product.brand);
        if (other) {
          other.productIds.push(id);
          other.maxPercentOff = Math.max(other.maxPercentOff, maxPercentOff);
        }
      }
      skuId += product.skus.length;
      const pending = out.write(JSON.stringify(product));
      if (pending) await pending;
      // Gaps between IDs, as in a catalog that has had products removed.
      id += rng.chance(0.1) ? rng.int(2, 5) : 1;
    }
  }
  return skuId - FIRST_SKU_ID;
}

/** Another sale of the same store whose theme fits the product, if one turns up in a few tries. */
function pickSecondSale(
  rng: Random,
  sales: readonly PlannedSale[],
  home: PlannedSale,
  typeId: string,
  brand: string,
): PlannedSale | undefined {
  for (let tries = 0; tries < 12 && sales.length > 1; tries++) {
    const other = rng.pick(sales);
    if (other === home) continue;
    const { types, brand: onlyBrand, material, color } = other.theme;
    if (types && !types.includes(typeId)) continue;
    if (onlyBrand !== undefined && onlyBrand !== brand) continue;
    if (material !== undefined || color !== undefined) continue;
    return other;
  }
  return undefined;
}
