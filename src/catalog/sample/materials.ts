// Materials by kind, most common first: name for titles, fibre content, care, and words that describe them.
import { HOME_MATERIALS } from "./home-materials.ts";

export interface SampleMaterial {
  /** As it appears in a product name: "Merino Wool". */
  name: string;
  /** As it reads inside a sentence; default: the name in lower case. */
  text?: string;
  /** Contents for the `material` field, one picked per product. */
  contents: readonly string[];
  care: readonly string[];
  /** Adjectives that suit it ("soft", "breathable"). */
  feel: readonly string[];
}

const WASH = [
  "Machine wash cold, tumble dry low.",
  "Machine wash cold with like colors; tumble dry low.",
  "Machine wash cold, lay flat to dry.",
];
const HAND = ["Hand wash cold, lay flat to dry.", "Dry clean or hand wash cold."];
const DRY = ["Dry clean only.", "Professional dry clean only."];
const WIPE = ["Wipe clean with a soft, damp cloth.", "Spot clean with a damp cloth; use a leather conditioner."];
const SPOT = [
  "Spot clean only.",
  "Vacuum regularly; spot clean with mild detergent.",
  "Professional cleaning recommended.",
];

const m = (
  name: string,
  contents: readonly string[],
  care: readonly string[],
  feel: readonly string[],
  text?: string,
): SampleMaterial => (text === undefined ? { name, contents, care, feel } : { name, text, contents, care, feel });

const MATERIALS = {
  knit: [
    m("Cotton", ["100% cotton", "98% cotton, 2% elastane"], WASH, ["soft", "breathable"]),
    m("Merino Wool", ["100% merino wool", "100% extra-fine merino wool"], HAND, ["fine-gauge", "warm"]),
    m("Cashmere", ["100% cashmere", "100% Grade-A cashmere"], HAND, ["luxuriously soft", "featherlight"]),
    m("Wool Blend", ["70% wool, 30% nylon", "50% wool, 50% acrylic"], HAND, ["cozy", "warm"]),
    m("Cotton Blend", ["60% cotton, 40% polyester", "55% cotton, 45% acrylic"], WASH, ["soft", "easy-care"]),
    m("Ribbed Knit", ["95% viscose, 5% elastane", "80% viscose, 20% nylon"], HAND, ["stretchy", "figure-skimming"]),
    m("Alpaca Blend", ["45% alpaca, 35% nylon, 20% wool"], HAND, ["airy", "lofty"]),
    m(
      "Bouclé",
      ["60% cotton, 40% nylon", "52% acrylic, 30% wool, 18% nylon"],
      DRY,
      ["textured", "nubby"],
      "bouclé knit",
    ),
    m("Mohair Blend", ["40% mohair, 40% acrylic, 20% nylon"], HAND, ["fuzzy", "lofty"]),
    m("Silk Cashmere", ["70% silk, 30% cashmere"], HAND, ["lustrous", "lightweight"], "silk-cashmere"),
  ],
  jersey: [
    m("Cotton", ["100% cotton", "100% combed cotton"], WASH, ["soft", "breathable"]),
    m("Pima Cotton", ["100% Pima cotton"], WASH, ["silky", "soft"], "Pima cotton"),
    m("Modal", ["95% modal, 5% spandex", "50% modal, 50% cotton"], WASH, ["drapey", "silky"]),
    m("Slub Cotton", ["100% slub cotton"], WASH, ["lived-in", "textured"]),
    m("Organic Cotton", ["100% organic cotton"], WASH, ["soft", "breathable"]),
    m("Linen Jersey", ["100% linen"], WASH, ["airy", "breezy"], "linen jersey"),
    m("Tencel", ["100% Tencel lyocell"], WASH, ["fluid", "cool-to-the-touch"], "Tencel lyocell"),
    m("Piqué", ["100% cotton piqué"], WASH, ["textured", "breathable"], "cotton piqué"),
  ],
  woven: [
    m("Cotton", ["100% cotton", "97% cotton, 3% spandex"], WASH, ["crisp", "breathable"]),
    m("Silk", ["100% silk", "100% silk charmeuse"], DRY, ["lustrous", "fluid"]),
    m("Linen", ["100% linen", "55% linen, 45% cotton"], WASH, ["breezy", "relaxed"]),
    m("Crêpe", ["100% polyester crêpe", "95% polyester, 5% spandex"], DRY, ["drapey", "polished"], "crêpe"),
    m("Poplin", ["100% cotton poplin"], WASH, ["crisp", "lightweight"]),
    m("Viscose", ["100% viscose", "100% rayon"], HAND, ["fluid", "lightweight"]),
    m("Chiffon", ["100% polyester chiffon"], HAND, ["sheer", "floaty"]),
    m("Satin", ["100% polyester satin", "97% polyester, 3% spandex"], DRY, ["glossy", "fluid"]),
    m("Velvet", ["82% polyester, 18% spandex", "80% rayon, 20% silk"], DRY, ["plush", "rich"]),
    m("Lace", ["100% nylon lace", "65% cotton, 35% nylon"], HAND, ["delicate", "romantic"]),
    m("Tweed", ["60% wool, 25% polyester, 15% nylon"], DRY, ["textured", "structured"]),
    m("Eyelet", ["100% cotton eyelet"], WASH, ["breezy", "feminine"]),
    m("Georgette", ["100% silk georgette"], DRY, ["sheer", "airy"]),
    m("Lamé", ["70% polyester, 30% metallic"], DRY, ["shimmering", "metallic"], "lamé"),
    m("Piqué", ["100% cotton piqué"], WASH, ["textured", "breathable"], "piqué"),
  ],
  denim: [
    m("Stretch Denim", ["92% cotton, 6% polyester, 2% elastane", "98% cotton, 2% elastane"], WASH, [
      "stretchy",
      "comfortable",
    ]),
    m("Denim", ["100% cotton denim"], WASH, ["rigid", "authentic"]),
    m("Organic Cotton Denim", ["99% organic cotton, 1% elastane"], WASH, ["soft", "sustainable"]),
    m("Selvedge Denim", ["100% cotton selvedge denim"], WASH, ["heavyweight", "authentic"]),
  ],
  outer: [
    m("Wool Blend", ["70% wool, 30% polyamide", "80% wool, 20% nylon"], DRY, ["warm", "structured"]),
    m(
      "Down",
      ["Shell: 100% nylon; fill: 90% down, 10% feathers"],
      ["Machine wash cold, tumble dry low with dryer balls."],
      ["warm", "packable"],
      "down-filled nylon",
    ),
    m(
      "Leather",
      ["100% lambskin leather", "Genuine leather; lining: 100% polyester"],
      ["Professional leather clean only."],
      ["buttery", "supple"],
    ),
    m("Cotton Twill", ["100% cotton twill"], WASH, ["durable", "lightweight"]),
    m("Suede", ["100% goat suede", "Genuine suede"], ["Professional leather clean only."], ["velvety", "supple"]),
    m("Quilted Nylon", ["100% nylon; fill: 100% polyester"], WASH, ["lightweight", "warm"]),
    m("Faux Fur", ["100% polyester faux fur"], SPOT, ["plush", "cozy"]),
    m("Waxed Cotton", ["100% waxed cotton"], ["Wipe clean; re-wax as needed."], ["weather-resistant", "rugged"]),
    m("Shearling", ["100% lamb shearling"], ["Professional leather clean only."], ["plush", "warm"]),
    m("Cashmere Blend", ["90% wool, 10% cashmere"], DRY, ["luxurious", "warm"]),
    m("Denim", ["100% cotton denim", "99% cotton, 1% elastane"], WASH, ["rugged", "broken-in"]),
  ],
  shirting: [
    m("Cotton", ["100% cotton", "98% cotton, 2% elastane"], WASH, ["crisp", "breathable"]),
    m("Oxford Cloth", ["100% cotton oxford"], WASH, ["durable", "softened"], "oxford cloth"),
    m("Linen", ["100% linen", "55% linen, 45% cotton"], WASH, ["breezy", "relaxed"]),
    m("Poplin", ["100% cotton poplin"], WASH, ["crisp", "smooth"]),
    m("Twill", ["100% cotton twill", "98% cotton, 2% spandex twill"], WASH, ["soft", "sturdy"]),
    m("Chambray", ["100% cotton chambray"], WASH, ["lightweight", "faded"]),
    m("Flannel", ["100% brushed cotton flannel"], WASH, ["brushed", "cozy"]),
    m("Stretch Cotton", ["97% cotton, 3% elastane"], WASH, ["comfortable", "crisp"]),
    m("Seersucker", ["100% cotton seersucker"], WASH, ["puckered", "cool"]),
  ],
  suiting: [
    m("Wool", ["100% wool", "100% Super 110s wool"], DRY, ["fine", "breathable"]),
    m("Wool Blend", ["65% wool, 35% polyester"], DRY, ["wrinkle-resistant", "sharp"]),
    m("Linen", ["100% linen"], DRY, ["breezy", "relaxed"]),
    m("Stretch Cotton", ["97% cotton, 3% elastane"], DRY, ["comfortable", "crisp"]),
    m("Italian Wool", ["100% Italian wool"], DRY, ["fine", "lightweight"], "Italian wool"),
    m("Seersucker", ["100% cotton seersucker"], WASH, ["puckered", "cool"]),
  ],
  active: [
    m("Performance Jersey", ["88% polyester, 12% spandex"], WASH, ["moisture-wicking", "quick-drying"]),
    m("Nylon Spandex", ["78% nylon, 22% spandex"], WASH, ["compressive", "sculpting"], "nylon-spandex"),
    m("Recycled Polyester", ["100% recycled polyester"], WASH, ["lightweight", "quick-drying"]),
    m("Fleece", ["100% polyester fleece", "80% cotton, 20% polyester fleece"], WASH, ["cozy", "brushed"]),
  ],
  shoe: [
    m("Leather", ["Leather upper, synthetic sole", "Leather upper and lining, rubber sole"], WIPE, [
      "supple",
      "polished",
    ]),
    m(
      "Suede",
      ["Suede upper, rubber sole", "Kid suede upper, leather sole"],
      ["Brush with a suede brush; use a protective spray."],
      ["soft", "velvety"],
    ),
    m("Patent Leather", ["Patent leather upper, leather sole"], WIPE, ["glossy", "high-shine"]),
    m("Canvas", ["Canvas upper, rubber sole"], ["Spot clean with mild soap and water."], ["durable", "casual"]),
    m("Nubuck", ["Nubuck upper, rubber sole"], ["Brush clean; use a protective spray."], ["soft", "matte"]),
    m(
      "Knit",
      ["Knit textile upper, rubber sole"],
      ["Spot clean; air dry."],
      ["flexible", "breathable"],
      "stretch knit",
    ),
    m("Satin", ["Satin upper, leather sole"], ["Spot clean only."], ["luxe", "lustrous"]),
    m("Rubber", ["100% natural rubber"], ["Wipe clean with a damp cloth."], ["waterproof", "durable"]),
    m("Calf Hair", ["Calf hair upper, leather sole"], ["Spot clean only."], ["textured", "bold"]),
  ],
  bag: [
    m("Leather", ["Genuine leather; cotton lining", "Leather with polyester lining"], WIPE, ["supple", "structured"]),
    m("Pebbled Leather", ["Pebbled cowhide leather; fabric lining"], WIPE, ["durable", "textured"]),
    m("Saffiano Leather", ["Saffiano leather; polyester lining"], WIPE, ["scratch-resistant", "structured"]),
    m("Nylon", ["100% nylon; polyester lining"], ["Spot clean with mild soap."], ["lightweight", "water-resistant"]),
    m("Suede", ["Genuine suede; cotton lining"], ["Brush clean; avoid water."], ["soft", "slouchy"]),
    m("Faux Leather", ["Polyurethane; polyester lining"], WIPE, ["vegan", "structured"], "vegan leather"),
    m("Canvas", ["100% cotton canvas with leather trim"], ["Spot clean only."], ["sturdy", "casual"]),
    m("Straw", ["100% paper straw", "Raffia with leather trim"], ["Spot clean only."], ["woven", "summery"]),
  ],
  metal: [
    m(
      "Sterling Silver",
      ["Sterling silver", "Sterling silver with cubic zirconia"],
      ["Polish with a soft cloth; store in a pouch."],
      ["polished", "gleaming"],
    ),
    m(
      "Gold Plated",
      ["14K gold-plated brass", "18K gold plate over brass"],
      ["Avoid water and perfume; polish with a soft cloth."],
      ["gleaming", "warm-toned"],
      "gold-plated brass",
    ),
    m("Stainless Steel", ["Stainless steel"], ["Wipe clean with a soft cloth."], ["tarnish-resistant", "sleek"]),
    m(
      "Freshwater Pearl",
      ["Freshwater cultured pearls, sterling silver"],
      ["Wipe with a soft, dry cloth."],
      ["lustrous", "classic"],
      "freshwater pearl",
    ),
    m(
      "Gold Vermeil",
      ["18K gold vermeil over sterling silver"],
      ["Polish with a soft cloth."],
      ["luxe", "warm-toned"],
      "gold vermeil",
    ),
    m("Crystal", ["Crystal, rhodium-plated brass"], ["Wipe with a soft, dry cloth."], ["sparkling", "glamorous"]),
  ],
} as const satisfies Record<string, readonly SampleMaterial[]>;

export type MaterialKind = keyof typeof MATERIALS | keyof typeof HOME_MATERIALS;

export const ALL_MATERIALS: Readonly<Record<MaterialKind, readonly SampleMaterial[]>> = {
  ...MATERIALS,
  ...HOME_MATERIALS,
};

/** The material as it reads inside a sentence. */
export function materialText(material: SampleMaterial): string {
  return material.text ?? material.name.toLowerCase();
}
