// Retailer colour names and the colour group each belongs to, most common first.
import type { ColorGroup } from "../schema.ts";

export interface SampleColor {
  /** As the retailer names it on the SKU: "Navy". */
  name: string;
  group: ColorGroup;
}

const c = (name: string, group: ColorGroup): SampleColor => ({ name, group });

/** Apparel, shoes, bags and soft home goods. Black leads by far, as it does in any real catalog. */
const COLORS: readonly SampleColor[] = [
  c("Black", "black"),
  c("Navy", "blue"),
  c("White", "white"),
  c("Grey", "grey"),
  c("Ivory", "white"),
  c("Charcoal", "grey"),
  c("Blue", "blue"),
  c("Camel", "brown"),
  c("Beige", "beige"),
  c("Brown", "brown"),
  c("Red", "red"),
  c("Olive", "green"),
  c("Heather Grey", "grey"),
  c("Pink", "pink"),
  c("Multi", "miscellaneous"),
  c("Cognac", "brown"),
  c("Khaki", "beige"),
  c("Light Blue", "blue"),
  c("Burgundy", "red"),
  c("Green", "green"),
  c("Tan", "brown"),
  c("Cream", "white"),
  c("Blush", "pink"),
  c("Taupe", "beige"),
  c("Denim", "blue"),
  c("Floral", "miscellaneous"),
  c("Stripe", "miscellaneous"),
  c("Sage", "green"),
  c("Chocolate", "brown"),
  c("Rust", "orange"),
  c("Mustard", "yellow"),
  c("Purple", "purple"),
  c("Coral", "orange"),
  c("Plum", "purple"),
  c("Leopard", "miscellaneous"),
  c("Oatmeal", "beige"),
  c("Wine", "red"),
  c("Teal", "blue"),
  c("Lavender", "purple"),
  c("Emerald", "green"),
  c("Sand", "beige"),
  c("Cobalt", "blue"),
  c("Slate", "grey"),
  c("Stone", "beige"),
  c("Yellow", "yellow"),
  c("Orange", "orange"),
  c("Fuchsia", "pink"),
  c("Hunter Green", "green"),
  c("Indigo", "blue"),
  c("Plaid", "miscellaneous"),
  c("Café", "brown"),
  c("Dusty Rose", "pink"),
  c("Terracotta", "orange"),
  c("Chambray", "blue"),
  c("Espresso", "brown"),
  c("Natural", "beige"),
  c("Mint", "green"),
  c("Lilac", "purple"),
  c("Off White", "white"),
  c("Crimson", "red"),
  c("Tangerine", "orange"),
  c("Lemon", "yellow"),
  c("Eggplant", "purple"),
  c("Pewter", "grey"),
  c("Sky Blue", "blue"),
  c("Onyx", "black"),
  c("Jet Black", "black"),
  c("Crème", "white"),
];

/** Jewellery, watches and hardware. */
const METAL_COLORS: readonly SampleColor[] = [
  c("Gold", "yellow"),
  c("Silver", "grey"),
  c("Rose Gold", "pink"),
  c("Black", "black"),
  c("Gunmetal", "grey"),
  c("Two-Tone", "miscellaneous"),
  c("Brass", "yellow"),
];

/** Kitchen, tableware and decor. */
const HOME_COLORS: readonly SampleColor[] = [
  c("White", "white"),
  c("Black", "black"),
  c("Grey", "grey"),
  c("Natural", "beige"),
  c("Navy", "blue"),
  c("Ivory", "white"),
  c("Stainless", "grey"),
  c("Blue", "blue"),
  c("Sage", "green"),
  c("Red", "red"),
  c("Multi", "miscellaneous"),
  c("Gold", "yellow"),
  c("Clear", "white"),
  c("Teal", "blue"),
  c("Charcoal", "grey"),
  c("Cherry", "red"),
  c("Marseille Blue", "blue"),
  c("Flame Orange", "orange"),
  c("Walnut", "brown"),
  c("Blush", "pink"),
  c("Mustard", "yellow"),
  c("Lavender", "purple"),
  c("Oyster", "beige"),
  c("Café", "brown"),
];

/** Which palette a product type draws its colours from. */
export type PaletteName = "fashion" | "metal" | "home";

export const PALETTES: Readonly<Record<PaletteName, readonly SampleColor[]>> = {
  fashion: COLORS,
  metal: METAL_COLORS,
  home: HOME_COLORS,
};
