// What a kind of product ("Ankle Boot", "Sheet Set") is made of in the sample catalog, and the lists per store.
import type { Gender, Store } from "../schema.ts";
import type { PaletteName } from "./colors.ts";
import type { MaterialKind } from "./materials.ts";
import type { SizeCode } from "./sizes.ts";
import { HOME_TYPES } from "./types-home.ts";
import { KIDS_TYPES } from "./types-kids.ts";
import { MEN_TYPES } from "./types-men.ts";
import { WOMEN_TYPES } from "./types-women.ts";

/** How the fit notes of a product read: sizing advice for clothes, heel height for shoes, measurements for goods. */
type FitKind = "top" | "bottom" | "dress" | "shoe" | "heel" | "boot" | "bag" | "jewelry" | "watch" | "dims" | "none";

export interface ProductType {
  /** Unique across stores; sale themes refer to types by it: "w-ankle-boot". */
  id: string;
  /** Title-case noun that ends the product name: "Ankle Boot". */
  noun: string;
  /** The noun is plural ("Earrings", "Leggings"): sentences say "these" and "a pair of". */
  plural?: boolean;
  /** How common this type is within its store. */
  weight: number;
  /** One or two categories every product of the type has ("Shoes", "Boots"). */
  categories: readonly string[];
  /** Categories a product of the type may also have, one at most ("Workwear"). */
  extraCategories?: readonly string[];
  /** Name modifiers, most common first: "Chelsea", "Block Heel". */
  styles: readonly string[];
  /** Fit modifiers ("Slim Fit"), used now and then before the style. */
  fits?: readonly string[];
  material: MaterialKind;
  /** Only these materials of the kind, most common first ("Stainless Steel" knives, not cast iron). */
  materialNames?: readonly string[];
  /** Default "fashion". */
  palette?: PaletteName;
  /** Size group; absent for one-size goods (their SKUs have no size fields). */
  sizes?: SizeCode;
  /** Index range [first, last] into the group's labels this type can come in; default the whole group. */
  sizeSpan?: readonly [number, number];
  /** How many consecutive sizes one product comes in: [min, max]. */
  sizeCount?: readonly [number, number];
  /** MSRP range in dollars (for the group's factor-1 size). */
  price: readonly [number, number];
  /** Details the description may mention, most telling first: "a cushioned footbed". */
  features: readonly string[];
  fit: FitKind;
  /** Measurements for fit notes of `dims`, `bag` goods: one is picked. */
  dims?: readonly string[];
  /** Kids only: the genders it is made for. */
  genders?: readonly Gender[];
  /** Kids only: a baby item, named "Baby ...". */
  baby?: boolean;
  /** Shipping surcharge range in dollars for heavy or bulky goods. */
  surcharge?: readonly [number, number];
  /** Home only: the room it belongs in, for descriptions ("bedroom"). */
  room?: string;
}

export const PRODUCT_TYPES: Readonly<Record<Store, readonly ProductType[]>> = {
  women: WOMEN_TYPES,
  men: MEN_TYPES,
  kids: KIDS_TYPES,
  home: HOME_TYPES,
};

const BY_ID = new Map<string, ProductType>();
for (const types of Object.values(PRODUCT_TYPES)) {
  for (const type of types) {
    if (BY_ID.has(type.id)) throw new Error(`duplicate sample product type ${type.id}`);
    BY_ID.set(type.id, type);
  }
}

/** A type's department: its first category ("Shoes", "Kitchen"). */
export function department(type: ProductType): string {
  return type.categories[0] ?? "";
}

/** The product type with this ID; throws on an unknown one (a typo in a sale theme). */
export function productType(id: string): ProductType {
  const type = BY_ID.get(id);
  if (!type) throw new Error(`unknown sample product type ${id}`);
  return type;
}
