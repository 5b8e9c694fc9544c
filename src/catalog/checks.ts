// What a schema alone cannot check: cross-field rules, duplicates and references across the catalog.
import type { ProblemList } from "./problems.ts";
import type { Product, Sale } from "./schema.ts";
import { SIZE_KEY_RE } from "./schema.ts";

/** State shared by the per-line checks of one catalog. */
export interface CheckContext {
  problems: ProblemList;
  /** SKU ID -> where it was first seen. */
  skuSource: Map<number, string>;
  /** Size group code -> its display name and where that was first seen: one code, one name. */
  sizeGroups: Map<string, { name: string; where: string }>;
}

export function createCheckContext(problems: ProblemList): CheckContext {
  return { problems, skuSource: new Map(), sizeGroups: new Map() };
}

/** Prices are validated strings with two decimals (PRICE_RE), so cents compare exactly as integers. */
export function priceCents(price: string): number {
  let cents = 0;
  for (let i = 0; i < price.length; i++) {
    const digit = price.charCodeAt(i) - 48;
    if (digit >= 0 && digit <= 9) cents = cents * 10 + digit;
  }
  return cents;
}

/** A size key's group code and label (SIZE_KEY_RE), remembered: a catalog has few distinct keys and many SKUs. */
const sizeKeyParts = new Map<string, { code: string; label: string | undefined }>();
function parseSizeKey(key: string): { code: string; label: string | undefined } {
  let parts = sizeKeyParts.get(key);
  if (parts === undefined) {
    const match = SIZE_KEY_RE.exec(key);
    parts = { code: match?.[1] ?? "", label: match?.[2] };
    if (sizeKeyParts.size >= 10_000) sizeKeyParts.clear();
    sizeKeyParts.set(key, parts);
  }
  return parts;
}

/** Checks one schema-valid product: SKU IDs unique across the catalog, prices, and size and colour fields that come together. */
export function checkProduct(product: Product, file: string, line: number, ctx: CheckContext): void {
  const { problems } = ctx;
  const where = `${file}:${line}`;
  // A loop without closures: this runs for every SKU of the catalog (700,000 at 100,000 products).
  for (let i = 0; i < product.skus.length; i++) {
    const sku = product.skus[i]!;
    const first = ctx.skuSource.get(sku.id);
    if (first) problems.error(file, line, `skus[${i}].id`, `duplicate SKU id ${sku.id} (first at ${first})`);
    else ctx.skuSource.set(sku.id, where);
    if (priceCents(sku.sale_price) > priceCents(sku.msrp_price)) {
      problems.error(file, line, `skus[${i}].sale_price`, `${sku.sale_price} is above msrp_price ${sku.msrp_price}`);
    }
    if ((sku.color === undefined) !== (sku.color_group === undefined)) {
      problems.error(
        file,
        line,
        `skus[${i}].${sku.color === undefined ? "color" : "color_group"}`,
        "color and color_group must be given together",
      );
    }
    const sizeFields = +(sku.size !== undefined) + +(sku.size_group !== undefined) + +(sku.size_key !== undefined);
    if (sizeFields !== 0 && sizeFields !== 3) {
      problems.error(file, line, `skus[${i}].size`, "size, size_group and size_key must be given together");
    } else if (sku.size_key !== undefined && sku.size_group !== undefined) {
      const { code, label } = parseSizeKey(sku.size_key);
      if (label !== sku.size) {
        problems.error(file, line, `skus[${i}].size_key`, `label of "${sku.size_key}" must equal size "${sku.size}"`);
      }
      const group = ctx.sizeGroups.get(code);
      if (!group) ctx.sizeGroups.set(code, { name: sku.size_group, where });
      else if (group.name !== sku.size_group) {
        problems.error(
          file,
          line,
          `skus[${i}].size_group`,
          `size group code ${code} is "${group.name}" at ${group.where}, not "${sku.size_group}"`,
        );
      }
    }
  }
}

/** Checks one schema-valid sale: its window and that every product it lists exists, once. */
export function checkSale(
  sale: Sale,
  beginsAt: number,
  endsAt: number | null,
  file: string,
  line: number,
  problems: ProblemList,
  products: ReadonlyMap<number, Product>,
  invalidProductIds: ReadonlySet<number>,
): void {
  if (endsAt !== null && endsAt <= beginsAt)
    problems.error(file, line, "ends", `${sale.ends} is not after begins ${sale.begins}`);
  const seen = new Set<number>();
  sale.product_ids.forEach((id, i) => {
    if (seen.has(id)) problems.error(file, line, `product_ids[${i}]`, `product ${id} is listed twice`);
    seen.add(id);
    // A product whose own line was invalid is already reported there; don't report it again as missing.
    if (!products.has(id) && !invalidProductIds.has(id))
      problems.error(file, line, `product_ids[${i}]`, `product ${id} does not exist`);
  });
}

/** Whole-catalog warnings: odd but harmless things. */
export function checkCatalog(
  sales: readonly (Sale & { beginsAt: number; endsAt: number | null; source: string })[],
  products: ReadonlyMap<number, Product>,
  productSource: ReadonlyMap<number, string>,
  problems: ProblemList,
  nowMs: number,
): void {
  const listed = new Set<number>();
  const kidsProducts = new Set<number>();
  for (const sale of sales) {
    const [file = "", line = "0"] = sale.source.split(":");
    for (const id of sale.product_ids) {
      listed.add(id);
      if (sale.store === "kids") kidsProducts.add(id);
    }
    if (sale.product_ids.length === 0) problems.warn(file, Number(line), "product_ids", "sale lists no products");
    if (sale.endsAt !== null && sale.endsAt * 1000 <= nowMs)
      problems.warn(file, Number(line), "ends", "sale has already ended; it will not be served");
  }
  for (const [id, product] of products) {
    const [file = "", line = "0"] = (productSource.get(id) ?? "").split(":");
    if (!listed.has(id)) problems.warn(file, Number(line), "id", `product ${id} is in no sale; it will not be served`);
    if (kidsProducts.has(id) && product.gender === undefined)
      problems.warn(file, Number(line), "gender", "kids product has no gender; gender= search will not find it");
  }
}
