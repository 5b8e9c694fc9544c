// The sale plan: how many sales of each status and store, their windows, themes and product counts.
import type { Sale, Store } from "../schema.ts";
import { STORES } from "../schema.ts";
import { BRANDS, brandSells } from "./brands.ts";
import { saleImages } from "./images.ts";
import type { Random } from "./random.ts";
import { department, productType } from "./product-types.ts";
import { createRandom, deriveSeed, itemAt, zipfPick } from "./random.ts";
import { MIN_PERCENT_OFF, pickSaleDepth } from "./prices.ts";
import type { SaleLength, SaleStatus } from "./sale-times.ts";
import { formatTimestamp, pickWindow } from "./sale-times.ts";
import { lowerPhrase, slugify } from "./text.ts";
import type { SaleTheme } from "./themes.ts";
import { BRAND_THEMES, EVERGREEN_THEMES, THEMES } from "./themes.ts";

/** Products per sale on average: 6,000 products make 160 sales (100 active, 40 upcoming, 20 ended). */
export const PRODUCTS_PER_SALE = 37.5;

/** Share of sales per store. */
const STORE_WEIGHTS: Readonly<Record<Store, number>> = { women: 40, men: 25, kids: 15, home: 20 };

const STREAM_SALES = 0x73616c65;

export interface PlannedSale {
  key: string;
  store: Store;
  name: string;
  theme: SaleTheme;
  status: SaleStatus;
  /** Epoch ms. */
  begins: number;
  /** Epoch ms, or null when open-ended. */
  ends: number | null;
  /** How many products are made for this sale (its primary products). */
  size: number;
  /** Filled while products are written: primary products, and products it shares with another sale. */
  productIds: number[];
  /** Deepest markdown among its products, for "up to N% off". */
  maxPercentOff: number;
}

/** Plans the sales for a catalog of `productCount` products around `now` (epoch ms), ordered by `begins`. */
export function planSales(seed: number, productCount: number, now: number): PlannedSale[] {
  const rng = createRandom(deriveSeed(seed, STREAM_SALES));
  const total = Math.max(Math.min(8, productCount), Math.round(productCount / PRODUCTS_PER_SALE));
  const ended = total >= 3 ? Math.max(1, Math.round(total / 8)) : 0;
  const upcoming = total >= 2 ? Math.max(1, Math.round(total / 4)) : 0;
  const active = total - ended - upcoming;
  const evergreen = active >= 4 ? Math.min(4, Math.max(1, Math.floor(active / 25))) : 0;

  const drafts: Omit<PlannedSale, "key" | "size" | "productIds" | "maxPercentOff">[] = [];
  for (const [status, count] of [
    ["ended", ended],
    ["active", active],
    ["upcoming", upcoming],
  ] as const) {
    const perStore = apportion(
      count,
      STORES.map((s) => STORE_WEIGHTS[s]),
      status === "active" && count >= 4 ? 1 : 0,
    );
    STORES.forEach((store, s) => {
      for (let i = 0; i < (perStore[s] ?? 0); i++) {
        const open = status === "active" && i === 0 && s < evergreen;
        const length: SaleLength = open ? "open" : status !== "ended" && rng.chance(0.04) ? "long" : "normal";
        const theme = {
          ...(open ? EVERGREEN_THEMES[store] : pickTheme(rng, store)),
          maxPercentOff: pickSaleDepth(rng),
        };
        drafts.push({ store, name: theme.name, theme, status, ...pickWindow(rng, status, length, now) });
      }
    });
  }
  // Plain code-unit comparison, not localeCompare: the order must not depend on the machine's locale.
  drafts.sort((a, b) => a.begins - b.begins || compare(a.store, b.store) || compare(a.name, b.name));

  const sizes = apportion(
    productCount,
    drafts.map(() => rng.float(0.5, 1.5)),
    productCount >= drafts.length ? 1 : 0,
  );
  let number = 1100;
  return drafts.map((draft, i) => {
    number += rng.int(1, 9);
    return {
      ...draft,
      key: `${slugify(draft.name, 50)}-${number}`,
      size: sizes[i] ?? 0,
      productIds: [],
      maxPercentOff: 0,
    };
  });
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** A sale theme: mostly a kind of product, often a brand, now and then an editorial mix. */
function pickTheme(rng: Random, store: Store): SaleTheme {
  if (rng.chance(0.3)) {
    const brand = zipfPick(rng, BRANDS[store], 0.9);
    const patterns = BRAND_THEMES[store];
    const wanted = zipfPick(rng, patterns);
    // "Swarovski Shoes" would be empty of sense: fall back to the plain brand sale.
    const sells = !wanted.types || wanted.types.some((id) => brandSells(brand, department(productType(id))));
    const pattern = sells ? wanted : itemAt(patterns, 0);
    const name = pattern.name.replace("{brand}", brand);
    const what = pattern.types ? lowerPhrase(name.slice(brand.length + 1)) : "styles";
    const blurb = `${brand}${/s$/.test(brand) ? "'" : "'s"} latest ${what}, at a fraction of the price.`;
    return pattern.types ? { name, blurb, brand, types: pattern.types } : { name, blurb, brand };
  }
  return rng.pick(THEMES[store]);
}

/**
 * Splits `total` into integers proportional to `weights` (largest remainder), each at least `min` when there is
 * enough to go round.
 */
function apportion(total: number, weights: readonly number[], min: number): number[] {
  const n = weights.length;
  if (n === 0) return [];
  const floor = total >= min * n ? min : 0;
  const rest = total - floor * n;
  const sum = weights.reduce((a, b) => a + b, 0);
  const exact = weights.map((w) => (sum > 0 ? (rest * w) / sum : rest / n));
  const counts = exact.map((x) => Math.floor(x));
  let left = rest - counts.reduce((a, b) => a + b, 0);
  const order = exact.map((x, i) => [x - Math.floor(x), i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (let k = 0; left > 0; k = (k + 1) % n, left--) {
    const i = order[k]?.[1] ?? 0;
    counts[i] = (counts[i] ?? 0) + 1;
  }
  return counts.map((c) => c + floor);
}

/** The sale as a catalog line. */
export function renderSale(plan: PlannedSale): Sale {
  const off = Math.max(plan.maxPercentOff, MIN_PERCENT_OFF);
  return {
    key: plan.key,
    store: plan.store,
    name: plan.name,
    description: `${plan.theme.blurb} Up to ${off}% off${plan.ends === null ? ", every day" : " for a limited time"}.`,
    begins: formatTimestamp(plan.begins),
    ...(plan.ends !== null ? { ends: formatTimestamp(plan.ends) } : {}),
    images: saleImages(plan.key),
    product_ids: plan.productIds,
  };
}
