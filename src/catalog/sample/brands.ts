// Brands per store, most popular first (picked with a Zipf skew): well-known labels mixed with invented ones.
import type { Store } from "../schema.ts";

const WOMEN = [
  "Calvin Klein", "Michael Kors", "Kate Spade New York", "Vince Camuto", "Steve Madden", "Sam Edelman", "DKNY",
  "Tory Burch", "Lauren Ralph Lauren", "Marc Jacobs", "Diane von Furstenberg", "Theory", "Vince", "Rebecca Minkoff",
  "Stuart Weitzman", "Eileen Fisher", "Free People", "Splendid", "Joie", "Equipment", "Halston", "Tahari",
  "Badgley Mischka", "Adrianna Papell", "Eliza J", "Karen Kane", "Max Studio", "Lucky Brand", "Levi's", "Hudson",
  "AG Jeans", "Paige", "J Brand", "Frye", "UGG", "Hunter", "Chloé", "Furla", "Longchamp", "Coach", "Fossil",
  "Swarovski", "Nine West", "Anne Klein", "Cole Haan", "Clarks", "Naturalizer", "Ted Baker", "Reiss", "Hobbs",
  "Harlow & Finch", "Marlowe Street", "Atelier Ronde", "Juniper Hale", "Wren & Willow", "Odessa Rae", "Saint Marlow",
  "Laurel Canyon", "Sable & Stone", "Maison Lumière", "Belle Époque", "Ashby & Vale", "Thistle Grove", "Rowan Mercer",
  "Vellum", "Celeste Noor", "Isla Bonita", "Margaux Léger", "Fenwick Row", "Cleo Vance", "Palomino", "Silk & Sage",
  "Ivy Park Lane", "Amara Jules", "Delphine", "Nova Reyes", "Colette Marie", "Bellwether", "Sienna Moss",
  "Gold Coast Jewelry", "Petal & Pin", "Lark Avenue", "Tessa Blue", "Corsica", "Hazel Rowe", "Mila Fontaine",
];

const MEN = [
  "Calvin Klein", "Hugo Boss", "Ralph Lauren", "Tommy Hilfiger", "Ben Sherman", "Original Penguin", "Perry Ellis",
  "Brooks Brothers", "Cole Haan", "Johnston & Murphy", "Bruno Magli", "Allen Edmonds", "To Boot New York",
  "Timberland", "Barbour", "Lacoste", "Robert Graham", "Vineyard Vines", "Bonobos", "Peter Millar", "John Varvatos",
  "Psycho Bunny", "Tommy Bahama", "Ted Baker", "Levi's", "Lucky Brand", "Michael Kors", "Kenneth Cole", "Fossil",
  "Frye", "Clarks", "Nautica", "Theory", "Vince", "Hudson", "AG Jeans", "Dockers",
  "Northbound Supply Co.", "Field & Forge", "Ironwood Supply", "Crosby & Pine", "Halcyon Knits", "Rowan Mercer",
  "Kestrel", "Abbot & Hale", "Grayson Lowe", "Harbor & Birch", "Wexford", "Mercer & Main", "Sterling Row",
  "Bridger", "Cobalt Coast", "Dalton & Fisk", "Thornbury", "Alder Creek", "Moreau Paris", "Westbrook Tailors",
  "Huxley & Co.", "Pacific Standard", "Ashford", "Redwood Outfitters", "Ledger Watch Co.", "Cass & Fenwick",
];

const KIDS = [
  "Carter's", "Janie and Jack", "Splendid Littles", "Petit Bateau", "Stride Rite", "Hatley", "Mini Boden",
  "Little Me", "Kissy Kissy", "Burt's Bees Baby", "Appaman", "Andy & Evan", "See Kai Run", "Pediped", "Western Chief",
  "Tommy Hilfiger Kids", "Calvin Klein Kids", "Ralph Lauren Childrenswear", "Levi's Kids", "Lucky Brand Kids",
  "Linden Lane Kids", "Little Wren", "Bramble & Bean", "Tiny Harbor", "Puddle Jumpers", "Sprout & Sparrow",
  "Marigold Kids", "Honeybee Lane", "Kite & Kin", "Pip & Posy", "Rocket Pop", "Little Lumière", "Oak & Acorn",
  "Sunny Cove", "Bumble Bay", "Moss & Moon", "Teddy & Tilly", "Cricket Hollow", "Button Nose", "Wildflower Kids",
];

const HOME = [
  "Le Creuset", "Cuisinart", "KitchenAid", "Calphalon", "All-Clad", "Staub", "Mikasa", "Lenox", "Waterford",
  "Villeroy & Boch", "Frette", "Matouk", "Sferra", "Pine Cone Hill", "Safavieh", "Loloi", "Nourison", "Surya",
  "Jonathan Adler", "Kate Spade New York", "Ralph Lauren Home", "Calvin Klein Home", "Tommy Bahama Home",
  "Vera Wang", "Zwilling", "Wüsthof", "OXO", "Nambé", "Riedel", "Schott Zwiesel", "Nate Berkus", "Barbara Barry",
  "Oakhurst Home", "Blue Heron Home", "Casa Verano", "Portofino Linen Co.", "Hearth & Loom", "Stillwater Ceramics",
  "Amber & Oak", "Juniper Home", "Maison Lumière", "Brooklane", "Copper Kettle", "Salt & Stone", "Linden Mills",
  "Arbor Table", "Coastal Thread", "Nestwell", "Olive & Ash", "Atelier Maison", "Harborview Bath",
  "Meadowlark Home", "Terra Verde", "Foxglove Lane", "Solenne", "Willow & Wax", "The Linen House",
];

/**
 * Specialists: brands that sell only some departments (a product type's first category). Brands not listed sell
 * anything in their store. Keeps Le Creuset out of bedding and Stride Rite out of dresses.
 */
const SPECIALISTS: Readonly<Record<string, readonly string[]>> = {
  "Steve Madden": ["Shoes", "Handbags"], "Sam Edelman": ["Shoes", "Handbags"], "Stuart Weitzman": ["Shoes"],
  "Vince Camuto": ["Shoes", "Handbags", "Clothing"], "Frye": ["Shoes", "Handbags"], UGG: ["Shoes"], Hunter: ["Shoes"],
  "Nine West": ["Shoes", "Handbags"], Clarks: ["Shoes"], Naturalizer: ["Shoes"], "Cole Haan": ["Shoes", "Handbags", "Accessories"],
  Furla: ["Handbags"], Longchamp: ["Handbags"], Coach: ["Handbags", "Shoes", "Accessories"], "Rebecca Minkoff": ["Handbags", "Jewelry", "Clothing"],
  Swarovski: ["Jewelry"], "Gold Coast Jewelry": ["Jewelry"], Fossil: ["Jewelry", "Handbags", "Accessories"],
  "Levi's": ["Clothing"], Hudson: ["Clothing"], "AG Jeans": ["Clothing"], Paige: ["Clothing"], "J Brand": ["Clothing"],
  "Johnston & Murphy": ["Shoes", "Accessories"], "Bruno Magli": ["Shoes", "Accessories"], "Allen Edmonds": ["Shoes", "Accessories"],
  "To Boot New York": ["Shoes"], Timberland: ["Shoes", "Clothing"], "Ledger Watch Co.": ["Accessories"], Dockers: ["Clothing"],
  "Stride Rite": ["Shoes"], "See Kai Run": ["Shoes"], Pediped: ["Shoes"], "Western Chief": ["Shoes", "Accessories"],
  "Le Creuset": ["Kitchen", "Dining"], Cuisinart: ["Kitchen"], KitchenAid: ["Kitchen"], Calphalon: ["Kitchen"],
  "All-Clad": ["Kitchen"], Staub: ["Kitchen", "Dining"], Zwilling: ["Kitchen"], "Wüsthof": ["Kitchen"], OXO: ["Kitchen", "Storage & Organization"],
  "Copper Kettle": ["Kitchen"], Mikasa: ["Dining"], Lenox: ["Dining", "Home Decor"], Waterford: ["Dining", "Home Decor", "Lighting"],
  "Villeroy & Boch": ["Dining"], "Nambé": ["Dining", "Home Decor"], Riedel: ["Dining"], "Schott Zwiesel": ["Dining"],
  "Stillwater Ceramics": ["Dining", "Home Decor"], "Arbor Table": ["Dining", "Kitchen"],
  Frette: ["Bedding", "Bath"], Matouk: ["Bedding", "Bath"], Sferra: ["Bedding", "Bath"], "Pine Cone Hill": ["Bedding", "Bath", "Rugs"],
  "Portofino Linen Co.": ["Bedding", "Bath", "Dining"], "The Linen House": ["Bedding", "Bath"], "Harborview Bath": ["Bath"],
  Safavieh: ["Rugs", "Furniture", "Lighting", "Home Decor"], Loloi: ["Rugs", "Home Decor"], Nourison: ["Rugs"], Surya: ["Rugs", "Home Decor", "Lighting"],
  "Willow & Wax": ["Home Decor"], "Hearth & Loom": ["Rugs", "Home Decor", "Bedding"],
};

/** Whether a brand sells products of a department (a type's first category). */
export function brandSells(brand: string, department: string): boolean {
  const departments = SPECIALISTS[brand];
  return departments === undefined || departments.includes(department);
}

/** Brands per store, most popular first. */
export const BRANDS: Readonly<Record<Store, readonly string[]>> = { women: WOMEN, men: MEN, kids: KIDS, home: HOME };

