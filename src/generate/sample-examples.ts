// The document's examples: bodies of the sample snapshot (`npm run sample`'s generator, a small fixed catalog, built
// by the generator's own planner and renderer) at a fixed instant, so they are what the API really sends.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { USAGE_EXAMPLE } from "../api/examples.ts";
import type { Examples } from "../api/examples.ts";
import { loadCatalog } from "../catalog/load.ts";
import { writeSampleCatalog, SAMPLE_SITE_URL } from "../catalog/sample/index.ts";
import { planSnapshot } from "./plan.ts";
import type { Plan } from "./plan.ts";

/** The instant the examples show, and the sample they come from. */
const EXAMPLE_NOW = Date.parse("2026-11-22T17:00:00Z");
const SAMPLE = { seed: 1, products: 60, now: new Date(EXAMPLE_NOW) };

/** Lists are cut to this many items, so the document stays small. */
const LIST_ITEMS = 2;

/** The examples, with links under `baseUrl`. */
export async function sampleExamples(baseUrl: string): Promise<Examples> {
  const dir = await mkdtemp(join(tmpdir(), "fsa-examples-"));
  try {
    await writeSampleCatalog(dir, SAMPLE);
    const catalog = await loadCatalog(dir, { now: EXAMPLE_NOW });
    const plan = planSnapshot(catalog, { baseUrl, siteUrl: SAMPLE_SITE_URL });
    const at = bodyAt(plan, Math.floor(EXAMPLE_NOW / 1000));
    const active = at("/v1/sales/active.json") as { sales: { store: string; sale_key: string; products?: string[] }[] };
    const upcoming = at("/v1/sales/upcoming.json") as { sales: { store: string; sale_key: string }[] };
    const sale = active.sales.find((s) => s.products !== undefined)!;
    const next = upcoming.sales.find((s) => s.store === sale.store) ?? upcoming.sales[0]!;
    const productId = Number(/\/products\/(\d+)\//.exec(sale.products![0]!)![1]);
    const product = at(`/v1/products/${productId}/detail.json`);
    const sizes = at("/v1/products/sizes.json") as Record<string, Record<string, string>>;
    const categories = at("/v1/products/categories.json") as { categories: string[] };
    return {
      activeSales: { sales: active.sales.slice(0, LIST_ITEMS).map(cutProducts) },
      upcomingSales: { sales: upcoming.sales.slice(0, LIST_ITEMS) },
      activeSale: cutProducts(at(`/v1/sales/${sale.store}/${sale.sale_key}/detail.json`) as typeof sale),
      upcomingSale: at(`/v1/sales/${next.store}/${next.sale_key}/detail.json`),
      product,
      categories: { categories: categories.categories.slice(0, 6) },
      sizes: Object.fromEntries(Object.entries(sizes).slice(0, 2)),
      searchResult: { products: [product], total_found: 1 },
      usage: USAGE_EXAMPLE,
      store: sale.store,
      activeSaleKey: sale.sale_key,
      upcomingSaleKey: next.sale_key,
      productId,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The JSON value of a path's body at `t` (epoch seconds), a sale list joined from its sales. */
function bodyAt(plan: Plan, t: number) {
  const parse = (i: number): unknown => JSON.parse(plan.body(i).toString("utf8"));
  return (path: string): unknown => {
    const segment = plan.routes.resources[path]?.find(([from, to]) => (from ?? -Infinity) <= t && t < (to ?? Infinity));
    if (!segment) throw new Error(`examples: the sample has no ${path} at ${t}`);
    const body = segment[2];
    return typeof body === "number" ? parse(body) : { sales: body.sales.map(parse) };
  };
}

/** A sale with at most LIST_ITEMS of its products. */
function cutProducts<T extends { products?: unknown[]; product_ids?: unknown[] }>(sale: T): T {
  if (!sale.products) return sale;
  return { ...sale, products: sale.products.slice(0, LIST_ITEMS), product_ids: sale.product_ids?.slice(0, LIST_ITEMS) };
}
