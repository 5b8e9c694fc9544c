// Product descriptions: a few sentences of retail copy assembled from skewed word lists.
import type { Store } from "../schema.ts";
import type { SampleMaterial } from "./materials.ts";
import { materialText } from "./materials.ts";
import type { ProductType } from "./product-types.ts";
import type { Random } from "./random.ts";
import { zipfOf, zipfPick, zipfPickDistinct } from "./random.ts";
import { article, capitalize, listJoin, lowerPhrase } from "./text.ts";
import {
  ADJECTIVES,
  CLOTHES_PAIRINGS,
  FINISHING_PAIRINGS,
  HOME_ADJECTIVES,
  HOME_LINES,
  HOME_PAIRINGS,
  KIDS_LINES,
  OCCASIONS,
  ROOM_OCCASIONS,
  STYLING_LINES,
} from "./vocabulary.ts";

/** What the copy is about. */
export interface CopySubject {
  store: Store;
  type: ProductType;
  /** The style modifier in the name, if any ("Chelsea"). */
  style: string | undefined;
  material: SampleMaterial;
  brand: string;
  /** Retailer colour names of the SKUs, most prominent first. */
  colors: readonly string[];
  /** Size labels of the SKUs, smallest first; empty for one-size goods. */
  sizes: readonly string[];
}

/** How the material verb reads for a material kind. */
const MADE: Partial<Record<ProductType["material"], string>> = {
  knit: "knit from",
  jersey: "cut from",
  woven: "cut from",
  denim: "cut from",
  suiting: "tailored from",
  outer: "crafted from",
  active: "made from",
  shoe: "crafted in",
  bag: "crafted in",
  metal: "made of",
};

/** Writes a description of 2-6 sentences. */
export function renderDescription(rng: Random, s: CopySubject): string {
  const home = s.store === "home";
  // Drop a style that repeats the material ("ceramic table lamp ... made of ceramic").
  const materialWords = s.material.name.toLowerCase().split(/[\s-]+/);
  const style =
    s.style &&
    !s.style
      .toLowerCase()
      .split(/[\s-]+/)
      .some((w) => materialWords.includes(w))
      ? s.style
      : undefined;
  const phrase = lowerPhrase(style ? `${style} ${s.type.noun}` : s.type.noun);
  const plural = s.type.plural === true;
  const one = plural ? "a pair of" : article(phrase);
  const these = plural ? "these" : "this";
  const is = plural ? "are" : "is";
  const adjectives = home ? HOME_ADJECTIVES : ADJECTIVES;
  const adj = zipfPick(rng, adjectives, 0.9);
  const feel = zipfPick(rng, s.material.feel);
  const second = zipfPick(rng, adjectives, 0.9);
  const adj2 = second === adj || second === feel ? "easy" : second;
  const mat = materialText(s.material);
  const made = MADE[s.type.material] ?? "made of";
  const roomOccasions = home ? ROOM_OCCASIONS[s.type.room ?? ""] : undefined;
  const pickOccasion = (): string =>
    roomOccasions && rng.chance(0.5) ? zipfPick(rng, roomOccasions) : zipfPick(rng, OCCASIONS[s.store]);
  const occasion = pickOccasion();

  const openers: (() => string)[] = [
    () => `${capitalize(plural ? one : article(adj))} ${adj} ${phrase} ${made} ${feel} ${mat}.`,
    () => `${capitalize(these)} ${adj} ${phrase} ${is} ${made} ${mat} for ${occasion}.`,
    () => `Designed for ${occasion}, ${these} ${phrase} ${plural ? "come" : "comes"} in ${feel} ${mat}.`,
    () => `${s.brand} brings ${adj} style to ${one} ${phrase} in ${mat}.`,
    () => `Meet your new favorite ${phrase}: ${adj2}, ${feel} and made to last.`,
  ];
  if (home && s.type.room)
    openers.splice(1, 0, () => `Bring ${adj} style to your ${s.type.room} with ${these} ${feel} ${phrase}.`);
  const sentences = [zipfOf(rng, openers)()];

  if (rng.chance(0.9) && s.type.features.length > 0) {
    const features = listJoin(zipfPickDistinct(rng, s.type.features, rng.int(1, 3), 0.8));
    sentences.push(
      zipfOf(rng, [`Features ${features}.`, `Details include ${features}.`, `Finished with ${features}.`]),
    );
  }
  if (rng.chance(0.55))
    sentences.push(zipfPick(rng, home ? HOME_LINES : s.store === "kids" ? KIDS_LINES : STYLING_LINES));
  if (rng.chance(0.45)) {
    const other = pickOccasion();
    const both = other === occasion ? occasion : `${occasion} and ${other}`;
    sentences.push(
      zipfOf(
        rng,
        home || plural
          ? [`Perfect for ${both}.`, `Ideal for ${both}.`]
          : [`Perfect for ${both}.`, `Made for ${occasion}.`, `A go-to for ${both}.`],
      ),
    );
  }
  const pairing = pickPairing(rng, s);
  if (rng.chance(0.45) && pairing !== undefined) {
    sentences.push(
      zipfOf(rng, [
        `Pair with ${pairing}.`,
        `Style ${plural ? "them" : "it"} with ${pairing}.`,
        `Looks great with ${pairing}.`,
      ]),
    );
  }
  if (s.sizes.length > 1 && s.store === "home")
    sentences.push(`Comes in ${s.sizes[0] ?? ""} through ${s.sizes[s.sizes.length - 1] ?? ""} sizes.`);
  if (s.colors.length > 0 && rng.chance(0.7)) {
    const colors = s.colors.map(lowerPhrase);
    sentences.push(colors.length === 1 ? `Shown in ${colors[0] ?? ""}.` : `Available in ${listJoin(colors)}.`);
  }
  if (rng.chance(0.12)) sentences.push(`${capitalize(article(s.brand))} ${s.brand} signature.`);
  return sentences.join(" ");
}

/** Something to wear or use it with: clothes with anything, shoes and bags with clothes, home by room. */
function pickPairing(rng: Random, s: CopySubject): string | undefined {
  if (s.store === "home") {
    const room = HOME_PAIRINGS[s.type.room ?? "living room"];
    return room ? zipfPick(rng, room) : undefined;
  }
  // Dresses and jumpsuits go with shoes and bags; other clothes with either; shoes, bags and jewellery with clothes.
  const clothes = s.type.categories[0] === "Clothing";
  const list =
    clothes && (s.type.fit === "dress" || rng.chance(0.5)) ? FINISHING_PAIRINGS[s.store] : CLOTHES_PAIRINGS[s.store];
  const pairing = zipfPick(rng, list);
  // Not "pair with white sneakers" on a sneaker.
  const noun = (s.type.noun.split(" ").pop() ?? "").toLowerCase().replace(/s$/, "");
  return pairing.includes(noun) ? undefined : pairing;
}
