// The SKUs of a sample product: sizes x colours, with MSRP, sale price, inventory status and surcharge.
import type { Sku } from "../schema.ts";
import type { SampleColor } from "./colors.ts";
import { formatPrice, percentOff, pickDiscount, pickMsrp, pickSurcharge, roundMsrp, salePrice } from "./prices.ts";
import type { ProductType } from "./product-types.ts";
import type { Random } from "./random.ts";
import { createWeighted } from "./random.ts";
import type { SizeGroup } from "./sizes.ts";
import { SIZE_GROUPS } from "./sizes.ts";

/** Mostly for sale; sold-out and reserved sizes as a flash sale goes on. */
const STATUSES = createWeighted<Sku["inventory_status"]>([
  ["for sale", 80],
  ["sold out", 14],
  ["reserved", 6],
]);

export interface SkuRequest {
  /** IDs are `firstSkuId`, `firstSkuId + 1`, ... */
  firstSkuId: number;
  type: ProductType;
  colors: readonly SampleColor[];
  /** Size labels; empty for one-size goods. */
  sizes: readonly string[];
  /** The sale's deepest markdown, in percent. */
  depth: number;
}

/** One SKU per colour and size, priced alike except where size (bedding, rugs) or a colour's extra markdown differ. */
export function createSkus(
  rng: Random,
  { firstSkuId, type, colors, sizes, depth }: SkuRequest,
): { skus: Sku[]; maxPercentOff: number } {
  const skus: Sku[] = [];
  const group: SizeGroup | undefined = type.sizes ? SIZE_GROUPS[type.sizes] : undefined;
  const factors = group?.priceFactors;
  const baseMsrp = pickMsrp(rng, type.price);
  const discount = pickDiscount(rng, depth);
  const surcharge = type.surcharge ? formatPrice(pickSurcharge(rng, type.surcharge)) : undefined;
  const inseam = /Jean|Chino|Trouser/.test(type.noun) && rng.chance(0.4) ? `${rng.int(28, 34)}"` : undefined;
  const msrpBySize = new Map<string, number>();
  const saleByMsrp = new Map<string, number>();
  let nextId = firstSkuId;
  let maxOff = 0;
  for (const color of colors) {
    // Now and then one colour is marked down further than the rest.
    const off = rng.chance(0.08) ? Math.min(depth, discount + 10) : discount;
    for (const size of sizes.length > 0 ? sizes : [undefined]) {
      let msrp = msrpBySize.get(size ?? "");
      if (msrp === undefined) {
        const factor = size !== undefined && group && factors ? (factors[group.labels.indexOf(size)] ?? 1) : 1;
        msrp = factor === 1 ? baseMsrp : roundMsrp(rng, (baseMsrp / 100) * factor);
        msrpBySize.set(size ?? "", msrp);
      }
      const priceKey = `${msrp}:${off}`;
      let sale = saleByMsrp.get(priceKey);
      if (sale === undefined) {
        sale = salePrice(rng, msrp, off, depth);
        saleByMsrp.set(priceKey, sale);
      }
      maxOff = Math.max(maxOff, percentOff(msrp, sale));
      const sku: Sku = {
        id: nextId++,
        inventory_status: STATUSES(rng),
        msrp_price: formatPrice(msrp),
        sale_price: formatPrice(sale),
      };
      if (surcharge !== undefined) sku.shipping_surcharge = surcharge;
      sku.color = color.name;
      sku.color_group = color.group;
      if (size !== undefined && group) {
        sku.size = size;
        sku.size_group = group.name;
        sku.size_key = `${group.code}:${size}`;
      }
      if (inseam !== undefined) sku.attributes = [{ name: "inseam", value: inseam }];
      skus.push(sku);
    }
  }
  return { skus, maxPercentOff: maxOff };
}
