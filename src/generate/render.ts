// Pure render functions: catalog objects -> the contract's JSON bytes, with the offsets of their page links.
import { endpointPath } from "../api/routing.ts";
import type { CatalogSale } from "../catalog/load.ts";
import type { Image, Product, Sku } from "../catalog/schema.ts";

/** Where rendered links point. */
export interface LinkBase {
  /** API base, no trailing slash: `https://api.example.com`. API links are `${baseUrl}/v1/...`. */
  baseUrl: string;
  /** Retailer site, no trailing slash. Page links are `${siteUrl}${path}?utm_...`. */
  siteUrl: string;
}

/** A rendered body: bytes, plus where `&affid=...` goes in each page link (byte offset of its closing quote). */
export interface Rendered {
  bytes: Buffer;
  links: number[];
}

const UTM = "utm_medium=api&utm_source=salesapi&utm_campaign=";

/** A product's path (the getProduct endpoint's). */
export function productPath(id: number): string {
  return endpointPath("getProduct", { product_id: id });
}

/** A sale's path (the getSale endpoint's). */
export function salePath(store: string, key: string): string {
  return endpointPath("getSale", { store, sale_key: key });
}

/** RFC 3339 UTC with seconds and Z, no fraction: 2026-11-22T17:00:00Z */
export function formatTimestamp(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** Groups images into the contract's image map: `{"300x400": [{url, width, height}, ...]}`, keys in first-seen order. */
export function imageMap(images: readonly Image[]): Record<string, Image[]> {
  const map: Record<string, Image[]> = {};
  for (const { url, width, height } of images) {
    const key = `${width}x${height}`;
    (map[key] ??= []).push({ url, width, height });
  }
  return map;
}

/** Serialises `value` and finds the closing quote of `"field":"link"` for each page link. */
function renderWithLinks(value: unknown, links: readonly { field: string; link: string }[]): Rendered {
  const bytes = Buffer.from(JSON.stringify(value));
  // `"field":"` cannot occur inside a JSON string (its quotes would be escaped), so this finds the real field.
  const offsets = links.map(({ field, link }) => {
    const needle = JSON.stringify(field) + ":" + JSON.stringify(link);
    const at = bytes.indexOf(needle);
    if (at < 0) throw new Error(`render: page link ${field} not found`);
    return at + Buffer.byteLength(needle) - 1;
  });
  return { bytes, links: offsets };
}

/** A sale in a list and as sale detail (same shape); `products` only when active and non-empty. */
export function renderSale(sale: CatalogSale, active: boolean, base: LinkBase): Rendered {
  const saleUrl = `${base.siteUrl}/sale/${sale.store}/${sale.key}?${UTM}sale`;
  const withProducts = active && sale.product_ids.length > 0;
  const value = {
    name: sale.name,
    sale: base.baseUrl + salePath(sale.store, sale.key),
    sale_key: sale.key,
    store: sale.store,
    sale_url: saleUrl,
    description: sale.description,
    begins: formatTimestamp(sale.beginsAt),
    ends: sale.endsAt === null ? undefined : formatTimestamp(sale.endsAt),
    image_urls: imageMap(sale.images),
    products: withProducts ? sale.product_ids.map((id) => base.baseUrl + productPath(id)) : undefined,
    product_ids: withProducts ? sale.product_ids : undefined,
  };
  return renderWithLinks(value, [{ field: "sale_url", link: saleUrl }]);
}

function skuAttributes(sku: Sku): { name: string; value: string }[] {
  const attributes: { name: string; value: string }[] = [];
  if (sku.color !== undefined) attributes.push({ name: "color", value: sku.color });
  if (sku.size !== undefined) attributes.push({ name: "size", value: sku.size });
  for (const a of sku.attributes ?? []) attributes.push({ name: a.name, value: a.value });
  return attributes;
}

/** Product detail. */
export function renderProduct(product: Product, base: LinkBase): Rendered {
  const url = `${base.siteUrl}${product.page_path}?${UTM}product`;
  const { content } = product;
  const value = {
    id: product.id,
    name: product.name,
    product: base.baseUrl + productPath(product.id),
    url,
    brand: product.brand,
    content: {
      description: content.description,
      fit_notes: content.fit_notes,
      material: content.material,
      care_instructions: content.care_instructions,
      origin: content.origin,
    },
    image_urls: imageMap(product.images),
    skus: product.skus.map((sku) => ({
      id: sku.id,
      inventory_status: sku.inventory_status,
      msrp_price: sku.msrp_price,
      sale_price: sku.sale_price,
      shipping_surcharge: sku.shipping_surcharge,
      attributes: skuAttributes(sku),
    })),
    categories: product.categories,
  };
  return renderWithLinks(value, [{ field: "url", link: url }]);
}

/** `{"categories":[...]}` */
export function renderCategories(categories: readonly string[]): Rendered {
  return { bytes: Buffer.from(JSON.stringify({ categories })), links: [] };
}

/**
 * The size-key map, `{"<group name>": {"<label>": "<key>"}}`, in the given order. Written by hand because a
 * JS object would move integer-like labels ("8") in front of the others ("7.5").
 */
export function renderSizes(
  groups: readonly { name: string; sizes: readonly { label: string; key: string }[] }[],
): Rendered {
  const body = groups
    .map(
      (g) =>
        `${JSON.stringify(g.name)}:{${g.sizes.map((s) => `${JSON.stringify(s.label)}:${JSON.stringify(s.key)}`).join(",")}}`,
    )
    .join(",");
  return { bytes: Buffer.from(`{${body}}`), links: [] };
}
