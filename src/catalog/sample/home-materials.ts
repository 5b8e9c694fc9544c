// Home-goods materials by kind, most common first (see materials.ts for the fashion ones).
// Imports only the type from materials.ts, which imports this module: no cycle at run time.
import type { SampleMaterial } from "./materials.ts";

const WASH = [
  "Machine wash cold, tumble dry low.",
  "Machine wash warm, tumble dry low.",
  "Machine wash cold, line dry.",
];
const HAND = ["Hand wash cold, lay flat to dry.", "Dry clean or hand wash cold."];
const DRY = ["Dry clean only.", "Professional dry clean only."];
const DISH = ["Dishwasher safe.", "Hand wash recommended.", "Dishwasher and microwave safe."];
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

export const HOME_MATERIALS = {
  bedding: [
    m("Cotton Percale", ["100% cotton percale, 300 thread count", "100% long-staple cotton percale"], WASH, [
      "crisp",
      "cool",
    ]),
    m("Cotton Sateen", ["100% cotton sateen, 400 thread count", "100% cotton sateen, 600 thread count"], WASH, [
      "silky",
      "smooth",
    ]),
    m("Linen", ["100% French flax linen", "100% linen"], WASH, ["breathable", "relaxed"]),
    m("Egyptian Cotton", ["100% Egyptian cotton, 800 thread count"], WASH, ["luxurious", "smooth"], "Egyptian cotton"),
    m("Flannel", ["100% cotton flannel"], WASH, ["cozy", "brushed"]),
    m("Matelassé", ["100% cotton matelassé"], WASH, ["textured", "quilted"], "cotton matelassé"),
    m("Microfiber", ["100% polyester microfiber"], WASH, ["wrinkle-resistant", "soft"]),
    m("Silk", ["100% mulberry silk, 22 momme"], HAND, ["lustrous", "temperature-regulating"], "mulberry silk"),
  ],
  towel: [
    m("Turkish Cotton", ["100% Turkish cotton, 600 GSM"], WASH, ["plush", "absorbent"], "Turkish cotton"),
    m("Egyptian Cotton", ["100% Egyptian cotton, 700 GSM"], WASH, ["thick", "absorbent"], "Egyptian cotton"),
    m("Organic Cotton", ["100% organic cotton"], WASH, ["soft", "absorbent"]),
    m("Waffle Cotton", ["100% cotton waffle weave"], WASH, ["lightweight", "quick-drying"], "waffle-weave cotton"),
  ],
  rug: [
    m("Wool", ["100% wool pile, cotton backing", "100% hand-tufted wool"], SPOT, ["plush", "durable"]),
    m("Jute", ["100% jute", "80% jute, 20% cotton"], SPOT, ["natural", "textured"]),
    m("Polypropylene", ["100% polypropylene"], SPOT, ["stain-resistant", "durable"]),
    m("Cotton", ["100% cotton, flatweave"], SPOT, ["reversible", "lightweight"]),
    m("Viscose", ["100% viscose pile"], SPOT, ["silky", "lustrous"]),
  ],
  kitchen: [
    m("Stainless Steel", ["18/10 stainless steel, tri-ply", "Stainless steel with aluminum core"], DISH, [
      "durable",
      "professional-grade",
    ]),
    m("Enameled Cast Iron", ["Enameled cast iron"], ["Hand wash recommended."], ["heavy-duty", "heat-retaining"]),
    m(
      "Nonstick Aluminum",
      ["Hard-anodized aluminum, PFOA-free nonstick"],
      ["Hand wash recommended."],
      ["lightweight", "easy-release"],
      "nonstick aluminum",
    ),
    m(
      "Copper",
      ["Copper exterior, stainless steel interior"],
      ["Hand wash; polish as needed."],
      ["responsive", "gleaming"],
    ),
    m("Carbon Steel", ["Carbon steel"], ["Hand wash; dry and oil after use."], ["lightweight", "durable"]),
    m("Silicone", ["Food-grade silicone"], DISH, ["heat-resistant", "flexible"]),
  ],
  tableware: [
    m("Porcelain", ["Porcelain"], DISH, ["bright white", "chip-resistant"]),
    m("Stoneware", ["Stoneware with reactive glaze"], DISH, ["artisanal", "sturdy"]),
    m("Glass", ["Lead-free glass"], DISH, ["clear", "lightweight"]),
    m("Bone China", ["Fine bone china"], ["Dishwasher safe; not for microwave use."], ["translucent", "elegant"]),
    m("Crystal", ["Lead-free crystal"], ["Hand wash recommended."], ["brilliant", "clear"]),
    m("Earthenware", ["Earthenware"], ["Hand wash recommended."], ["rustic", "handmade"]),
  ],
  decor: [
    m("Ceramic", ["Ceramic"], ["Wipe clean with a soft cloth."], ["glazed", "handcrafted"]),
    m("Glass", ["Glass"], ["Wipe clean with a soft cloth."], ["clear", "handblown"]),
    m("Brass", ["Brass"], ["Wipe clean with a dry cloth."], ["warm", "polished"]),
    m("Wood", ["Mango wood", "Acacia wood"], ["Wipe clean with a dry cloth."], ["natural", "warm"]),
    m("Marble", ["Natural marble"], ["Wipe clean; avoid acidic cleaners."], ["veined", "cool"]),
    m("Rattan", ["Natural rattan"], ["Dust regularly."], ["woven", "natural"]),
  ],
  textile: [
    m("Cotton", ["100% cotton", "100% cotton slub"], WASH, ["soft", "washable"]),
    m("Linen", ["100% linen", "Linen-cotton blend"], WASH, ["relaxed", "breathable"]),
    m("Velvet", ["100% cotton velvet", "100% polyester velvet"], SPOT, ["plush", "rich"]),
    m("Wool", ["100% wool", "80% wool, 20% nylon"], DRY, ["warm", "textured"]),
    m("Bouclé", ["100% polyester bouclé"], SPOT, ["nubby", "textured"], "bouclé"),
    m("Faux Fur", ["100% acrylic faux fur"], SPOT, ["plush", "cozy"]),
    m("Cashmere", ["100% cashmere"], DRY, ["luxuriously soft", "lightweight"]),
  ],
  candle: [
    m(
      "Soy Wax",
      ["Soy wax blend, cotton wick"],
      ["Trim wick to 1/4 inch before each burn."],
      ["clean-burning", "fragrant"],
    ),
    m(
      "Coconut Wax",
      ["Coconut-soy wax blend, cotton wick"],
      ["Trim wick to 1/4 inch before each burn."],
      ["clean-burning", "long-lasting"],
    ),
    m(
      "Beeswax",
      ["100% beeswax, cotton wick"],
      ["Trim wick to 1/4 inch before each burn."],
      ["honey-scented", "slow-burning"],
    ),
  ],
  furniture: [
    m(
      "Solid Wood",
      ["Solid acacia wood", "Kiln-dried solid oak"],
      ["Wipe clean with a dry cloth."],
      ["sturdy", "warm"],
    ),
    m("Velvet", ["Velvet upholstery over solid wood frame"], SPOT, ["plush", "rich"]),
    m(
      "Linen Upholstery",
      ["Linen-blend upholstery, solid wood legs"],
      SPOT,
      ["relaxed", "textured"],
      "linen-blend upholstery",
    ),
    m("Rattan", ["Natural rattan over iron frame"], ["Dust regularly."], ["airy", "natural"]),
    m(
      "Metal",
      ["Powder-coated steel", "Iron with brass finish"],
      ["Wipe clean with a damp cloth."],
      ["sleek", "sturdy"],
    ),
    m("Leather", ["Top-grain leather over hardwood frame"], ["Condition leather twice a year."], ["supple", "rich"]),
  ],
} as const satisfies Record<string, readonly SampleMaterial[]>;
