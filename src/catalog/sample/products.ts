// One sample product from its ID and seed: name, brand, copy, categories, images and its SKUs (sizes x colours).
import type { Gender, Product, Store } from "../schema.ts";
import { BRANDS, brandSells } from "./brands.ts";
import type { SampleColor } from "./colors.ts";
import { PALETTES } from "./colors.ts";
import { renderContent } from "./content.ts";
import { productImages } from "./images.ts";
import type { SampleMaterial } from "./materials.ts";
import { ALL_MATERIALS } from "./materials.ts";
import { MAX_PERCENT_OFF } from "./prices.ts";
import type { ProductType } from "./product-types.ts";
import { department, PRODUCT_TYPES, productType } from "./product-types.ts";
import type { Picker, Random } from "./random.ts";
import { createRandom, createWeighted, deriveSeed, itemAt, zipfPick } from "./random.ts";
import { createSkus } from "./skus.ts";
import { SIZE_GROUPS } from "./sizes.ts";
import { slugify } from "./text.ts";

/** What a sale's theme asks of the products in it; every field optional. */
export interface ProductConstraints {
  /** Product type IDs to choose from (by their weights). Default: any of the store's. */
  types?: readonly string[];
  brand?: string;
  /** Material name, used when the type's material kind has it ("Cashmere"). */
  material?: string;
  /** Retailer colour name every product comes in ("Black"). */
  color?: string;
  /** Deepest markdown in percent (30..80). Default 80. */
  maxPercentOff?: number;
}

export interface ProductRequest {
  /** The catalog seed; the product's own random stream is derived from it and the ID. */
  seed: number;
  id: number;
  /** SKU IDs are `firstSkuId`, `firstSkuId + 1`, ...: the caller keeps them unique. */
  firstSkuId: number;
  store: Store;
  constraints: ProductConstraints;
}

export interface SampleProduct {
  product: Product;
  type: ProductType;
  /** The deepest markdown among its SKUs, in whole percent. */
  maxPercentOff: number;
}

const STREAM_PRODUCT = 0x70726f64;
const COLOR_COUNTS = createWeighted([
  [1, 42],
  [2, 33],
  [3, 17],
  [4, 8],
]);
const SIZED_COLOR_COUNTS = createWeighted([
  [1, 48],
  [2, 34],
  [3, 14],
  [4, 4],
]);
const KID_GENDERS = createWeighted<Gender>([
  ["girl", 42],
  ["boy", 38],
  ["unisex", 20],
]);
const PICTURES = createWeighted([
  [2, 3],
  [3, 4],
  [4, 3],
]);

const typePickers = new Map<string, Picker<ProductType>>();

/** Builds one product; the same request always gives the same product. */
export function createSampleProduct(request: ProductRequest): SampleProduct {
  const { id, store, constraints } = request;
  const rng = createRandom(deriveSeed(request.seed, STREAM_PRODUCT, id));
  const type = pickType(rng, store, constraints.types, constraints.brand);
  const brand = constraints.brand ?? pickBrand(rng, store, type);
  const style = rng.chance(0.85) ? zipfPick(rng, type.styles, 0.8) : undefined;
  const material = pickMaterial(rng, type, style, constraints.material);
  const gender = store === "kids" ? pickGender(rng, type) : undefined;
  const colors = pickColors(rng, type, constraints.color);
  const sizes = pickSizes(rng, type);
  const name = renderName(rng, { store, type, style, material, brand, gender });
  const depth = constraints.maxPercentOff ?? MAX_PERCENT_OFF;

  const content = renderContent(rng, { store, type, style, material, brand, colors: colors.map((c) => c.name), sizes });
  const categories = pickCategories(rng, type, gender);
  const images = productImages(id, PICTURES(rng));
  const { skus, maxPercentOff } = createSkus(rng, { firstSkuId: request.firstSkuId, type, colors, sizes, depth });
  const product: Product = {
    id,
    name,
    brand,
    page_path: `/product/${id}-${slugify(name)}`,
    content,
    categories,
    ...(gender !== undefined ? { gender } : {}),
    images,
    skus,
  };
  return { product, type, maxPercentOff };
}

/** A type by weight, among the theme's types (default: the store's) that the theme's brand, if any, sells. */
function pickType(
  rng: Random,
  store: Store,
  typeIds: readonly string[] | undefined,
  brand: string | undefined,
): ProductType {
  const key = `${store}|${typeIds ? typeIds.join(",") : "*"}|${brand ?? "*"}`;
  let picker = typePickers.get(key);
  if (!picker) {
    const types = typeIds ? typeIds.map(productType) : PRODUCT_TYPES[store];
    const sold = brand === undefined ? types : types.filter((t) => brandSells(brand, department(t)));
    picker = createWeighted((sold.length > 0 ? sold : types).map((t) => [t, t.weight] as const));
    typePickers.set(key, picker);
  }
  return picker(rng);
}

/** A brand by popularity among those that sell this type; generalists always do. */
function pickBrand(rng: Random, store: Store, type: ProductType): string {
  const brands = BRANDS[store];
  for (let tries = 0; tries < 12; tries++) {
    const brand = zipfPick(rng, brands, 0.9);
    if (brandSells(brand, department(type))) return brand;
  }
  return brands.find((b) => brandSells(b, department(type))) ?? itemAt(brands, 0);
}

/**
 * The theme's material if the type comes in it; else the material the style names ("Flannel Shirt" is flannel);
 * else one of the type's materials by popularity.
 */
function pickMaterial(
  rng: Random,
  type: ProductType,
  style: string | undefined,
  wanted: string | undefined,
): SampleMaterial {
  const materials = materialsOf(type);
  const styleWord = style?.split(" ")[0];
  return (
    (wanted !== undefined ? materials.find((m) => m.name === wanted) : undefined) ??
    (styleWord !== undefined ? materials.find((m) => m.name.split(" ")[0] === styleWord) : undefined) ??
    zipfPick(rng, materials)
  );
}

const materialLists = new Map<string, readonly SampleMaterial[]>();

/** The materials of the type's kind, or just its `materialNames` in that order (most common first). */
function materialsOf(type: ProductType): readonly SampleMaterial[] {
  let list = materialLists.get(type.id);
  if (!list) {
    const all = ALL_MATERIALS[type.material];
    const names = type.materialNames;
    const narrowed = names
      ? all.filter((m) => names.includes(m.name)).sort((a, b) => names.indexOf(a.name) - names.indexOf(b.name))
      : all;
    list = narrowed.length > 0 ? narrowed : all;
    materialLists.set(type.id, list);
  }
  return list;
}

function pickGender(rng: Random, type: ProductType): Gender {
  const genders = type.genders ?? ["unisex"];
  return genders.length === 3 ? KID_GENDERS(rng) : rng.pick(genders);
}

function pickColors(rng: Random, type: ProductType, wanted: string | undefined): SampleColor[] {
  const palette = PALETTES[type.palette ?? "fashion"];
  const count = (type.sizes ? SIZED_COLOR_COUNTS : COLOR_COUNTS)(rng);
  const colors: SampleColor[] = [];
  const first = wanted !== undefined ? palette.find((c) => c.name === wanted) : undefined;
  if (first) colors.push(first);
  for (let tries = 0; colors.length < count && tries < count * 8; tries++) {
    const color = zipfPick(rng, palette);
    if (!colors.includes(color)) colors.push(color);
  }
  return colors;
}

/** A run of consecutive sizes within the type's span, or [] for one-size goods. */
function pickSizes(rng: Random, type: ProductType): string[] {
  if (!type.sizes) return [];
  const labels: readonly string[] = SIZE_GROUPS[type.sizes].labels;
  const [from, to] = type.sizeSpan ?? [0, labels.length - 1];
  const [min, max] = type.sizeCount ?? [1, to - from + 1];
  const count = Math.min(rng.int(min, max), to - from + 1);
  const start = from + rng.int(0, to - from + 1 - count);
  return labels.slice(start, start + count);
}

function pickCategories(rng: Random, type: ProductType, gender: Gender | undefined): string[] {
  const categories = [...type.categories];
  if (gender === "girl" && !type.baby) categories.unshift("Girls");
  if (gender === "boy" && !type.baby) categories.unshift("Boys");
  if (type.extraCategories && categories.length < 3 && rng.chance(0.3)) categories.push(rng.pick(type.extraCategories));
  return categories;
}

interface NameParts {
  store: Store;
  type: ProductType;
  style: string | undefined;
  material: SampleMaterial;
  brand: string;
  gender: Gender | undefined;
}

/** "Slim Fit Merino Wool Crew Neck Sweater", "Girls' Smocked Dress", "Calvin Klein Women's Leather Ankle Boot". */
function renderName(rng: Random, { store, type, style, material, brand, gender }: NameParts): string {
  const parts: string[] = [];
  if (rng.chance(0.1)) parts.push(brand);
  if (store === "women" && rng.chance(0.2)) parts.push("Women's");
  if (store === "men" && rng.chance(0.25)) parts.push("Men's");
  if (store === "kids" && rng.chance(0.85)) {
    const who = gender === "girl" ? "Girls'" : gender === "boy" ? "Boys'" : type.baby ? "" : "Kids'";
    if (type.baby) parts.push(who ? `Baby ${who}` : "Baby");
    else parts.push(who);
  }
  if (type.fits && rng.chance(0.4)) parts.push(zipfPick(rng, type.fits));
  // Leave the material out when it would repeat a word: no "Ribbed Knit Cable Knit Sweater".
  const taken = new Set(`${style ?? ""} ${type.noun}`.toLowerCase().split(/[\s-]+/));
  if (
    rng.chance(0.45) &&
    !material.name
      .toLowerCase()
      .split(/[\s-]+/)
      .some((w) => taken.has(w))
  )
    parts.push(material.name);
  if (style) parts.push(style);
  parts.push(type.noun);
  return parts.join(" ");
}
