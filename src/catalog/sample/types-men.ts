// The men's store: clothing, tailoring, shoes and accessories.
import type { ProductType } from "./product-types.ts";

const SHOE = ["a cushioned footbed", "a leather lining", "a Goodyear-welted sole", "a rubber heel cap", "a padded collar", "a flexible outsole"];
const FITS = ["Slim Fit", "Classic Fit", "Tailored Fit", "Regular Fit", "Athletic Fit"];

export const MEN_TYPES: readonly ProductType[] = [
  {
    id: "m-sweater", noun: "Sweater", weight: 9, categories: ["Clothing", "Sweaters"],
    styles: ["Crew Neck", "V-Neck", "Quarter-Zip", "Shawl Collar", "Cable Knit", "Turtleneck", "Waffle Knit", "Fair Isle"],
    fits: ["Slim Fit", "Classic Fit"], material: "knit", sizes: "MeAp", sizeCount: [3, 5], price: [68, 348], fit: "top",
    features: ["ribbed cuffs and hem", "a saddle shoulder", "elbow patches", "a zip mock neck", "fully fashioned seams"],
  },
  {
    id: "m-dress-shirt", noun: "Dress Shirt", weight: 7, categories: ["Clothing", "Dress Shirts"], extraCategories: ["Workwear"],
    styles: ["Spread Collar", "Button-Down", "French Cuff", "Gingham", "Striped", "Windowpane", "Non-Iron", "Twill"],
    fits: FITS, material: "shirting", sizes: "MeAp", sizeCount: [3, 5], price: [59, 198], fit: "top",
    features: ["a spread collar", "removable collar stays", "barrel cuffs", "a back box pleat", "mother-of-pearl buttons", "a non-iron finish"],
  },
  {
    id: "m-shirt", noun: "Shirt", weight: 8, categories: ["Clothing", "Casual Shirts"],
    styles: ["Oxford", "Chambray", "Flannel", "Plaid", "Linen", "Camp Collar", "Print", "Corduroy", "Western"],
    fits: FITS, material: "shirting", sizes: "MeAp", sizeCount: [3, 5], price: [49, 178], fit: "top",
    features: ["a button-down collar", "a chest pocket", "a curved hem", "a locker loop", "pearl snaps"],
  },
  {
    id: "m-polo", noun: "Polo", weight: 6, categories: ["Clothing", "Polos"],
    styles: ["Piqué", "Jersey", "Striped", "Contrast-Tipped", "Long Sleeve", "Performance", "Johnny Collar"],
    fits: ["Slim Fit", "Classic Fit"], material: "jersey", sizes: "MeAp", sizeCount: [3, 5], price: [39, 145], fit: "top",
    features: ["a two-button placket", "ribbed collar and cuffs", "a split hem", "an embroidered logo"],
  },
  {
    id: "m-tee", noun: "Tee", weight: 7, categories: ["Clothing", "T-Shirts"],
    styles: ["Crew Neck", "V-Neck", "Pocket", "Henley", "Graphic", "Long Sleeve", "Striped", "Garment-Dyed"],
    material: "jersey", sizes: "MeAp", sizeCount: [3, 5], price: [24, 88], fit: "top",
    features: ["a ribbed crewneck", "a chest pocket", "a tagless neck", "double-needle hems"],
  },
  {
    id: "m-chino", noun: "Chino", weight: 5, categories: ["Clothing", "Pants"],
    styles: ["Stretch", "Flat Front", "Garment-Dyed", "Tapered", "Pleated"],
    fits: ["Slim Fit", "Straight Fit", "Athletic Fit", "Relaxed Fit"], material: "shirting", sizes: "MePa", sizeCount: [4, 6], price: [59, 168], fit: "bottom",
    features: ["slant front pockets", "button-through back pockets", "a zip fly", "a tapered leg"],
  },
  {
    id: "m-jean", noun: "Jean", weight: 5, categories: ["Clothing", "Jeans"],
    styles: ["Slim", "Straight", "Tapered", "Athletic", "Relaxed", "Bootcut"],
    material: "denim", sizes: "MePa", sizeCount: [4, 6], price: [79, 248], fit: "bottom",
    features: ["a five-pocket design", "a button fly", "a dark rinse", "a vintage wash", "copper rivets"],
  },
  {
    id: "m-trouser", noun: "Trouser", weight: 3, categories: ["Clothing", "Pants"], extraCategories: ["Workwear"],
    styles: ["Flat Front", "Pleated", "Wool", "Side-Tab", "Dress"],
    fits: FITS, material: "suiting", sizes: "MePa", sizeCount: [4, 6], price: [98, 298], fit: "bottom",
    features: ["an unfinished hem for tailoring", "side adjusters", "a hook-and-bar closure", "pressed creases"],
  },
  {
    id: "m-short", noun: "Short", weight: 4, categories: ["Clothing", "Shorts"], extraCategories: ["Vacation"],
    styles: ["Chino", "Cargo", "Drawstring", "Linen", "Athletic", "Pull-On"],
    material: "shirting", sizes: "MePa", sizeCount: [4, 6], price: [39, 118], fit: "bottom",
    features: ["a 7\" inseam", "a 9\" inseam", "an elastic drawstring waist", "zip back pockets"],
  },
  {
    id: "m-swim", noun: "Swim Trunk", weight: 3, categories: ["Clothing", "Swimwear"], extraCategories: ["Vacation"],
    styles: ["Printed", "Solid", "Stretch", "Volley", "Board"],
    material: "active", sizes: "MeAp", sizeCount: [3, 5], price: [45, 148], fit: "bottom",
    features: ["a mesh lining", "a quick-dry finish", "a back zip pocket", "an elastic waist"],
  },
  {
    id: "m-sport-coat", noun: "Sport Coat", weight: 3, categories: ["Clothing", "Suits & Blazers"], extraCategories: ["Workwear"],
    styles: ["Unstructured", "Two-Button", "Houndstooth", "Herringbone", "Windowpane", "Knit"],
    fits: ["Slim Fit", "Modern Fit", "Classic Fit"], material: "suiting", sizes: "MeAp", sizeCount: [3, 5], price: [198, 798], fit: "top",
    features: ["notch lapels", "a half lining", "patch pockets", "a center vent", "working buttonholes"],
  },
  {
    id: "m-suit", noun: "Suit", weight: 3, categories: ["Clothing", "Suits & Blazers"], extraCategories: ["Workwear", "Occasion Wear"],
    styles: ["Two-Piece", "Three-Piece", "Pinstripe", "Solid", "Plaid", "Tuxedo"],
    fits: ["Slim Fit", "Modern Fit", "Classic Fit"], material: "suiting", sizes: "MeAp", sizeCount: [3, 5], price: [398, 1495], fit: "top",
    features: ["notch lapels", "flat-front trousers", "a full lining", "side vents", "an unfinished hem"],
  },
  {
    id: "m-jacket", noun: "Jacket", weight: 5, categories: ["Clothing", "Coats & Jackets"],
    styles: ["Bomber", "Field", "Quilted", "Puffer", "Trucker", "Harrington", "Shirt", "Rain"],
    material: "outer", sizes: "MeAp", sizeCount: [3, 5], price: [98, 598], fit: "top",
    features: ["a two-way zip", "snap flap pockets", "a stand collar", "a packable hood", "ribbed cuffs", "an interior pocket"],
  },
  {
    id: "m-coat", noun: "Coat", weight: 3, categories: ["Clothing", "Coats & Jackets"],
    styles: ["Topcoat", "Peacoat", "Parka", "Overcoat", "Trench", "Car"],
    material: "outer", sizes: "MeAp", sizeCount: [3, 5], price: [198, 998], fit: "top",
    features: ["a notched collar", "a full lining", "welt pockets", "a storm flap", "a detachable hood"],
  },
  {
    id: "m-hoodie", noun: "Hoodie", weight: 4, categories: ["Clothing", "Sweatshirts & Hoodies"],
    styles: ["Pullover", "Zip-Up", "French Terry", "Logo", "Fleece"],
    material: "active", sizes: "MeAp", sizeCount: [3, 5], price: [48, 158], fit: "top",
    features: ["a kangaroo pocket", "a drawstring hood", "ribbed cuffs and hem", "a brushed interior"],
  },
  {
    id: "m-jogger", noun: "Jogger", weight: 3, categories: ["Clothing", "Activewear"],
    styles: ["Tech", "Fleece", "Tapered", "Cargo", "Performance"],
    material: "active", sizes: "MeAp", sizeCount: [3, 5], price: [48, 138], fit: "bottom",
    features: ["zip pockets", "an elastic drawstring waist", "ribbed ankle cuffs", "four-way stretch"],
  },
  {
    id: "m-oxford", noun: "Oxford", weight: 3, categories: ["Shoes", "Dress Shoes"], extraCategories: ["Workwear"],
    styles: ["Cap Toe", "Wingtip", "Plain Toe", "Brogue", "Whole-Cut"],
    material: "shoe", sizes: "MeSh", sizeCount: [5, 9], price: [148, 598], fit: "shoe",
    features: ["closed lacing", "brogue perforations", "a leather sole", ...SHOE],
  },
  {
    id: "m-loafer", noun: "Loafer", weight: 3, categories: ["Shoes", "Loafers & Slip-Ons"],
    styles: ["Penny", "Bit", "Tassel", "Driving", "Venetian", "Suede"],
    material: "shoe", sizes: "MeSh", sizeCount: [5, 9], price: [128, 548], fit: "shoe",
    features: ["a penny keeper", "a horsebit detail", "a rubber-nub sole", ...SHOE],
  },
  {
    id: "m-boot", noun: "Boot", weight: 4, categories: ["Shoes", "Boots"],
    styles: ["Chelsea", "Chukka", "Lace-Up", "Work", "Moc Toe", "Hiking", "Cap Toe"],
    material: "shoe", sizes: "MeSh", sizeCount: [5, 9], price: [148, 598], fit: "boot",
    features: ["a lug sole", "a waterproof membrane", "elastic side panels", "speed hooks", ...SHOE],
  },
  {
    id: "m-sneaker", noun: "Sneaker", weight: 5, categories: ["Shoes", "Sneakers"],
    styles: ["Low-Top", "Court", "Leather", "Retro Runner", "Slip-On", "High-Top", "Trainer"],
    material: "shoe", sizes: "MeSh", sizeCount: [5, 9], price: [78, 298], fit: "shoe",
    features: ["a cupsole", "a padded tongue", "perforated vamp", ...SHOE],
  },
  {
    id: "m-belt", noun: "Belt", weight: 2, categories: ["Accessories", "Belts"],
    styles: ["Leather", "Reversible", "Braided", "Dress", "Casual", "Plaque Buckle"],
    material: "bag", price: [38, 198], fit: "none",
    features: ["a brushed nickel buckle", "a reversible strap", "a feathered edge", "a 1.25\" width"],
  },
  {
    id: "m-watch", noun: "Watch", weight: 3, categories: ["Accessories", "Watches"],
    styles: ["Chronograph", "Automatic", "Dress", "Dive", "Field", "GMT", "Quartz"],
    material: "metal", palette: "metal", price: [95, 895], fit: "watch",
    dims: ["Case: 42mm; water-resistant to 100m.", "Case: 40mm; water-resistant to 50m.", "Case: 44mm; water-resistant to 200m."],
    features: ["a sapphire crystal", "a date window", "luminous hands", "a screw-down crown", "an exhibition caseback", "a leather strap"],
  },
  {
    id: "m-tie", noun: "Tie", weight: 2, categories: ["Accessories", "Ties & Pocket Squares"], extraCategories: ["Workwear"],
    styles: ["Silk", "Striped", "Paisley", "Knit", "Dot", "Solid", "Floral", "Skinny"],
    material: "woven", price: [39, 145], fit: "none",
    features: ["a 3\" width", "hand-finished edges", "a self-loop", "a jacquard weave"],
  },
  {
    id: "m-bag", noun: "Backpack", weight: 2, categories: ["Accessories", "Bags"],
    styles: ["Leather", "Nylon", "Roll-Top", "Laptop", "Commuter", "Canvas"],
    material: "bag", price: [78, 498], fit: "bag",
    dims: ['Measures 12" W x 17" H x 6" D; fits a 15" laptop.', 'Measures 11" W x 16" H x 5" D.'],
    features: ["a padded laptop sleeve", "a luggage pass-through", "water-resistant zips", "padded shoulder straps"],
  },
  {
    id: "m-wallet", noun: "Wallet", weight: 2, categories: ["Accessories", "Wallets"],
    styles: ["Bifold", "Card Case", "Zip", "Money Clip", "Slim"],
    material: "bag", price: [38, 198], fit: "none",
    features: ["six card slots", "an ID window", "RFID blocking", "a bill compartment"],
  },
];
