// Catalog -> every resource's segments over time, the blobs they are made of, and the search documents.
import { createHash } from "node:crypto";
import { priceCents } from "../catalog/checks.ts";
import type { Catalog, CatalogSale } from "../catalog/load.ts";
import type { ColorGroup, Product } from "../catalog/schema.ts";
import { codeDigest } from "./code-digest.ts";
import { STORES } from "../catalog/schema.ts";
import type { BlobRecord, Body, Routes, Segment } from "../snapshot/format.ts";
import { sha256Hex } from "../snapshot/format.ts";
import type { SearchDoc } from "../search/types.ts";
import type { LinkBase, Rendered } from "./render.ts";
import { endpointPath } from "../api/routing.ts";
import { productPath, renderCategories, renderProduct, renderSale, renderSizes, salePath } from "./render.ts";
import { compareSizeLabels } from "./size-order.ts";
import { intervals, isActive, isUpcoming, mergeWindows, saleBoundaries, segmentsOver } from "./timeline.ts";
import type { Interval } from "./timeline.ts";

/** The build's in-memory result: what to write. */
export interface Plan {
  /** The routes but their blobs and packs (which the pack writer places). */
  routes: Omit<Routes, "format" | "packs" | "blobs">;
  /** Every blob the resources refer to, by index, not yet placed in a pack (pack, offset and compressed sizes 0). */
  blobs: BlobRecord[];
  /**
   * Identity bytes of blob `index`. Product bodies are not kept: each is rendered again when asked (by the pack
   * writer, a batch at a time), and one reused unrendered is rendered only when asked (when the pack it would be
   * copied from turns out damaged). At 1,000,000 sample products the bodies were 2.9 GB held to the build's end.
   */
  body: (index: number) => Buffer;
  /** Lets go of the bodies and of how to render them (the products they hold): `body` may not be asked again. */
  dropBodies: () => void;
  searchDocs: SearchDoc[];
  /** Each product line's digest and the blob its product rendered to ("" when not on sale): the next build's reuse. */
  productLines: Record<string, string>;
  /** Product bodies taken from the previous snapshot without rendering. */
  reused: number;
}

/** What a build may take from the previous snapshot instead of rendering again. */
export interface PlanReuse {
  /** Product line digest -> the blob hash it rendered to, recorded by the previous build under the same render key. */
  rendered: ReadonlyMap<string, string>;
  /** The previous snapshot's blobs: size and links of each, by hash. */
  known: ReadonlyMap<string, { record: BlobRecord }>;
}

/**
 * What a product's rendered body depends on besides its own line: the links' bases, and the code that parses the
 * line and renders it, as the digest of those modules and everything they import (code-digest.ts). Any change to
 * that code, however small or however rarely its branch is taken, re-renders every product on the next build.
 * null when the code's sources cannot be read: nothing is reused then.
 */
export function renderKey(base: LinkBase): string | null {
  const code = codeDigest([new URL("./render.ts", import.meta.url), new URL("../catalog/load.ts", import.meta.url)]);
  return code === null
    ? null
    : createHash("sha256").update(JSON.stringify(base)).update("\0").update(code).digest("hex").slice(0, 32);
}

export function blobHash(bytes: Uint8Array): string {
  return sha256Hex(bytes).slice(0, 32);
}

/** Deduplicating table of rendered bodies: records not yet placed in a pack, and their identity bytes. */
class BlobTable {
  readonly records: BlobRecord[] = [];
  /** Each record's identity bytes, or for one reused unrendered, how to render them. */
  readonly bodies: (Buffer | (() => Buffer))[] = [];
  private readonly byHash = new Map<string, number>();

  /** A blob of the previous snapshot, unrendered (the pack writer keeps it where it is, or copies it from there). */
  addKnown(known: BlobRecord, render: () => Buffer): number {
    return this.#add(known.hash, known.size, known.links, render);
  }

  /** A rendered body, kept as its bytes, or when `again` is given, as how to render it again. */
  add(rendered: Rendered, again?: () => Buffer): number {
    return this.#add(blobHash(rendered.bytes), rendered.bytes.length, rendered.links, again ?? rendered.bytes);
  }

  body(index: number): Buffer {
    const body = this.bodies[index];
    if (body === undefined) throw new Error(`blob ${index}: no body (let go, or no such blob)`);
    return typeof body === "function" ? body() : body;
  }

  #add(hash: string, size: number, links: number[], body: Buffer | (() => Buffer)): number {
    const existing = this.byHash.get(hash);
    if (existing !== undefined) return existing;
    const index = this.records.length;
    this.records.push({ hash, size, gzipSize: 0, brSize: 0, links, pack: 0, offset: 0, gzipPieces: [] });
    this.bodies.push(body);
    this.byHash.set(hash, index);
    return index;
  }
}

/** Active sales newest first, upcoming soonest first; ties by sale key, then store. */
function listOrder(active: boolean) {
  return (a: CatalogSale, b: CatalogSale) =>
    (active ? b.beginsAt - a.beginsAt : a.beginsAt - b.beginsAt) || cmp(a.key, b.key) || cmp(a.store, b.store);
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Plans every resource of the contract for every instant, from a validated catalog. */
export function planSnapshot(catalog: Catalog, base: LinkBase, reuse?: PlanReuse): Plan {
  const blobs = new BlobTable();
  const resources: Record<string, Segment[]> = {};
  const boundaries = saleBoundaries(catalog.sales);
  const saleBlobs = planSales(catalog.sales, base, blobs, resources);
  planSaleLists(catalog.sales, saleBlobs, resources);
  const products = planProducts(catalog, base, reuse, blobs, resources);
  planFacets(catalog, intervals(boundaries), blobs, resources);
  return {
    routes: { resources, products: products.blobs, boundaries },
    blobs: blobs.records,
    body: (i) => blobs.body(i),
    dropBodies: () => (blobs.bodies.length = 0),
    searchDocs: products.searchDocs,
    productLines: products.lines,
    reused: products.reused,
  };
}

/** Each sale's blobs, upcoming and active. */
type SaleBlobs = Map<CatalogSale, { upcoming: number; active: number }>;

/** Sale detail: upcoming (no products) until begins, active until ends, then gone. */
function planSales(
  sales: readonly CatalogSale[],
  base: LinkBase,
  blobs: BlobTable,
  resources: Record<string, Segment[]>,
): SaleBlobs {
  const saleBlobs: SaleBlobs = new Map();
  for (const sale of sales) {
    const upcoming = blobs.add(renderSale(sale, false, base));
    const active = blobs.add(renderSale(sale, true, base));
    saleBlobs.set(sale, { upcoming, active });
    resources[salePath(sale.store, sale.key)] = segmentsOver(intervals(saleBoundaries([sale])), (t) =>
      isUpcoming(sale, t) ? upcoming : isActive(sale, t) ? active : null,
    );
  }
  return saleBlobs;
}

/** Sale lists, for all stores and each store: lists of the sales' blobs, composed when served. */
function planSaleLists(sales: readonly CatalogSale[], saleBlobs: SaleBlobs, resources: Record<string, Segment[]>) {
  for (const scope of [null, ...STORES]) {
    const inScope = sales.filter((s) => scope === null || s.store === scope);
    const scoped = intervals(saleBoundaries(inScope));
    for (const active of [true, false]) {
      const ordered = [...inScope].sort(listOrder(active));
      // isActive and isUpcoming over plain arrays, in a loop: this runs for every interval over every sale in scope,
      // and with a filter and a map of closures the ten lists took 110-340 ms at 100,000 sample products (145
      // intervals, 2,667 sales), 20-30 ms this way.
      const begins = ordered.map((s) => s.beginsAt);
      const ends = ordered.map((s) => s.endsAt ?? Infinity);
      const listed = ordered.map((s) => (active ? saleBlobs.get(s)!.active : saleBlobs.get(s)!.upcoming));
      const id = `list${scope === null ? "" : "Store"}${active ? "Active" : "Upcoming"}Sales`;
      resources[endpointPath(id, scope === null ? {} : { store: scope })] = segmentsOver(scoped, (t): Body => {
        const list: number[] = [];
        for (let i = 0; i < listed.length; i++) {
          if (active ? begins[i]! <= t && t < ends[i]! : t < begins[i]!) list.push(listed[i]!);
        }
        return { sales: list };
      });
    }
  }
}

/**
 * Products: served while any sale listing them is active. Returns each product's blob, its search document, each
 * line's blob hash, and how many bodies were reused unrendered.
 */
function planProducts(
  catalog: Catalog,
  base: LinkBase,
  reuse: PlanReuse | undefined,
  blobs: BlobTable,
  resources: Record<string, Segment[]>,
) {
  const { sales, products } = catalog;
  const windows = new Map<number, { from: number; to: number | null; store: (typeof STORES)[number] }[]>();
  for (const sale of sales) {
    for (const id of sale.product_ids) {
      let list = windows.get(id);
      if (!list) windows.set(id, (list = []));
      list.push({ from: sale.beginsAt, to: sale.endsAt, store: sale.store });
    }
  }
  const productBlobs: Record<string, number> = {};
  const searchDocs: SearchDoc[] = [];
  const productLines: Record<string, string> = {};
  for (const line of catalog.productLines.values()) productLines[line] = "";
  let reused = 0;
  for (const [id, productWindows] of windows) {
    const product = products.get(id)!;
    const line = catalog.productLines.get(id);
    const hash = line === undefined ? undefined : reuse?.rendered.get(line);
    const known = hash ? reuse?.known.get(hash) : undefined;
    if (known) reused++;
    const render = () => renderProduct(product, base).bytes;
    const blob = known ? blobs.addKnown(known.record, render) : blobs.add(renderProduct(product, base), render);
    if (line !== undefined) productLines[line] = blobs.records[blob]!.hash;
    productBlobs[id] = blob;
    // Most products are in one sale: nothing to merge.
    const only = productWindows.length === 1 ? productWindows[0]! : null;
    resources[productPath(id)] = only
      ? [[only.from, only.to, blob]]
      : mergeWindows(productWindows).map((w): Segment => [w.from, w.to, blob]);
    searchDocs.push(searchDoc(product, productWindows));
  }
  return { blobs: productBlobs, searchDocs, lines: productLines, reused };
}

/** Categories and size keys of the products on sale at each instant (`all`: the catalog's intervals). */
function planFacets(
  catalog: Catalog,
  all: readonly Interval[],
  blobs: BlobTable,
  resources: Record<string, Segment[]>,
) {
  const { sales, products } = catalog;
  const saleFacets = new Map(sales.map((s) => [s, facetsOf(s.product_ids.map((id) => products.get(id)!))]));
  const facetsAt = (t: number) => {
    const categories = new Set<string>();
    const sizes = new Map<string, Map<string, string>>();
    for (const sale of sales) {
      if (!isActive(sale, t)) continue;
      const f = saleFacets.get(sale)!;
      for (const c of f.categories) categories.add(c);
      for (const [group, labels] of f.sizes) {
        let target = sizes.get(group);
        if (!target) sizes.set(group, (target = new Map<string, string>()));
        for (const [label, key] of labels) target.set(label, key);
      }
    }
    return { categories, sizes };
  };
  const facetCache = new Map<number, ReturnType<typeof facetsAt>>();
  const cachedFacets = (t: number) => facetCache.get(t) ?? facetCache.set(t, facetsAt(t)).get(t)!;
  resources[endpointPath("listCategories")] = segmentsOver(all, (t) =>
    blobs.add(renderCategories([...cachedFacets(t).categories].sort(cmp))),
  );
  resources[endpointPath("listSizes")] = segmentsOver(all, (t) =>
    blobs.add(
      renderSizes(
        [...cachedFacets(t).sizes]
          .sort(([a], [b]) => cmp(a, b))
          .map(([name, labels]) => ({
            name,
            sizes: [...labels].sort(([a], [b]) => compareSizeLabels(a, b)).map(([label, key]) => ({ label, key })),
          })),
      ),
    ),
  );
}

/** The categories and the size map (group name -> label -> key) of a set of products. */
function facetsOf(list: readonly Product[]) {
  const categories = new Set<string>();
  const sizes = new Map<string, Map<string, string>>();
  for (const p of list) {
    for (const c of p.categories) categories.add(c);
    for (const sku of p.skus) {
      if (sku.size_group === undefined || sku.size === undefined || sku.size_key === undefined) continue;
      let labels = sizes.get(sku.size_group);
      if (!labels) sizes.set(sku.size_group, (labels = new Map<string, string>()));
      labels.set(sku.size, sku.size_key);
    }
  }
  return { categories, sizes };
}

/** A product as the search index sees it: its text, brand, filter values and the windows it is on sale in. */
export function searchDoc(product: Product, windows: SearchDoc["windows"]): SearchDoc {
  // Loops over the SKUs, without closures, sets or strings made: this runs for every product.
  const { skus } = product;
  let anyForSale = false;
  for (let i = 0; i < skus.length && !anyForSale; i++) anyForSale = skus[i]!.inventory_status === "for sale";
  const colorGroups: ColorGroup[] = [];
  const sizeKeys: string[] = [];
  // Price and discount over the SKUs for sale (over every SKU when none is): lowest price, largest % off.
  let price = Infinity;
  let discount = 0;
  for (let i = 0; i < skus.length; i++) {
    const sku = skus[i]!;
    if (!anyForSale || sku.inventory_status === "for sale") {
      const sale = priceCents(sku.sale_price);
      const msrp = priceCents(sku.msrp_price);
      price = Math.min(price, sale);
      if (msrp > 0) discount = Math.max(discount, Math.round((10_000 * (msrp - sale)) / msrp));
    }
    if (sku.color_group && !colorGroups.includes(sku.color_group)) colorGroups.push(sku.color_group);
    if (sku.size_key && !sizeKeys.includes(sku.size_key)) sizeKeys.push(sku.size_key);
  }
  return {
    id: product.id,
    name: product.name,
    description: product.content.description ?? "",
    brand: product.brand,
    colorGroups,
    sizeKeys,
    ...(product.gender ? { gender: product.gender } : {}),
    windows,
    categories: product.categories,
    price,
    discount,
  };
}
