// Word lists for product copy, most common first: pickers skew towards the head, so broad words are everywhere.
import type { Store } from "../schema.ts";

/** General descriptive adjectives. */
export const ADJECTIVES = [
  "classic", "soft", "versatile", "timeless", "easy", "polished", "relaxed", "modern", "lightweight", "cozy",
  "elegant", "effortless", "sleek", "chic", "refined", "luxurious", "tailored", "structured", "feminine", "understated",
  "breezy", "sophisticated", "minimalist", "vintage-inspired", "playful", "sporty", "rugged", "bold", "delicate",
  "romantic", "retro", "bohemian", "utilitarian", "sumptuous", "architectural", "whimsical", "artisanal", "jaunty",
  "Parisian-inspired", "insouciant",
] as const;

export const HOME_ADJECTIVES = [
  "classic", "soft", "timeless", "modern", "versatile", "elegant", "cozy", "durable", "handcrafted", "luxurious",
  "minimalist", "rustic", "refined", "sculptural", "heirloom-quality", "coastal", "farmhouse-inspired", "serene",
  "mid-century", "Scandinavian-inspired",
] as const;

/** What a piece is for, per store. */
export const OCCASIONS: Readonly<Record<Store, readonly string[]>> = {
  women: [
    "everyday wear", "the office", "the weekend", "date night", "travel", "evening events", "brunch with friends",
    "weddings", "cocktail parties", "vacation", "dinner out", "the holidays", "running errands", "work and beyond",
    "garden parties", "gallery openings", "long weekends away", "black-tie affairs", "festival season",
  ],
  men: [
    "everyday wear", "the office", "the weekend", "travel", "date night", "business meetings", "weddings",
    "dinner out", "the holidays", "casual Fridays", "the golf course", "weekend getaways", "cold-weather commutes",
    "black-tie affairs", "tailgating",
  ],
  kids: [
    "everyday play", "school days", "the playground", "weekend adventures", "family photos", "birthday parties",
    "the holidays", "naptime", "sleepovers", "beach days", "rainy days", "snow days", "first days of school",
  ],
  home: [
    "everyday use", "entertaining", "holiday hosting", "housewarming gifts", "wedding registries", "gift-giving",
    "refreshing a room", "weekend guests",
  ],
};

/** Home occasions that only make sense in one room. */
export const ROOM_OCCASIONS: Readonly<Record<string, readonly string[]>> = {
  bedroom: ["a restful night's sleep", "lazy Sundays", "guest rooms", "cool summer nights"],
  bathroom: ["spa days at home", "guest baths", "everyday luxury"],
  "living room": ["cozy nights in", "lazy Sundays", "movie nights"],
  kitchen: ["weeknight dinners", "dinner parties", "holiday baking", "Sunday suppers"],
  "dining room": ["dinner parties", "al fresco dining", "holiday tables", "Sunday suppers"],
  entryway: ["making an entrance", "small spaces"],
};

/** Clothes to wear a piece with, per fashion store: suits shoes, bags and jewellery as well as clothes. */
export const CLOTHES_PAIRINGS: Readonly<Record<Exclude<Store, "home">, readonly string[]>> = {
  women: [
    "your favorite jeans", "a tailored blazer", "a little black dress", "a silk camisole", "cropped trousers",
    "a midi skirt", "a cashmere sweater", "a trench coat", "a denim jacket", "a slip dress", "wide-leg pants",
    "a crisp white shirt", "a wrap dress", "a leather moto jacket",
  ],
  men: [
    "dark denim", "a crisp oxford shirt", "a navy blazer", "a wool overcoat", "a merino sweater", "tailored trousers",
    "a chambray shirt", "a field jacket", "a dress shirt", "slim chinos", "a quarter-zip",
  ],
  kids: ["leggings", "jeans", "a cozy hoodie", "a puffer jacket", "a graphic tee", "a party dress", "joggers", "a denim jacket"],
};

/** Shoes and accessories to finish an outfit, per fashion store: for clothes only. */
export const FINISHING_PAIRINGS: Readonly<Record<Exclude<Store, "home">, readonly string[]>> = {
  women: ["ankle boots", "strappy sandals", "white sneakers", "ballet flats", "statement earrings", "a leather tote", "knee-high boots", "a crossbody bag", "pointed-toe pumps", "gold hoops"],
  men: ["loafers", "leather sneakers", "dress shoes", "suede chukkas", "a leather belt", "a knit tie", "boat shoes", "white sneakers"],
  kids: ["their favorite sneakers", "a matching hat", "rain boots", "sandals"],
};

/** What goes with a home piece, per room. */
export const HOME_PAIRINGS: Readonly<Record<string, readonly string[]>> = {
  bedroom: ["crisp white linens", "matching pillowcases", "our coordinating shams", "a cozy throw", "a down comforter"],
  bathroom: ["matching hand towels", "a plush bath mat", "a waffle robe", "a woven hamper"],
  "living room": ["a cozy throw", "natural wood accents", "brass hardware", "neutral decor", "a jute rug", "woven baskets", "fresh flowers"],
  kitchen: ["copper cookware", "a wooden cutting board", "stoneware mugs", "a linen apron", "everyday dinnerware"],
  "dining room": ["a linen tablecloth", "everyday dinnerware", "fresh flowers", "taper candles", "crystal stemware"],
  entryway: ["a console table", "brass hardware", "woven baskets", "a runner rug"],
};

/** Second sentences that say how to wear it; the first few mention "dress" on purpose, as real copy does. */
export const STYLING_LINES = [
  "Easy to dress up or down.",
  "Dress it up with heels or down with sneakers.",
  "A wardrobe essential you'll reach for again and again.",
  "Dress it up for evening or keep it casual by day.",
  "An easy piece to build an outfit around.",
  "Layer it now and wear it on its own when the weather warms up.",
  "Goes from desk to dinner without missing a beat.",
  "A modern take on a classic silhouette.",
  "Made to be worn season after season.",
  "A capsule-wardrobe staple.",
  "Effortless polish with no fuss.",
  "Finished with the attention to detail you'd expect from a much pricier piece.",
] as const;

export const HOME_LINES = [
  "Built to last and made for everyday use.",
  "A thoughtful gift for any home.",
  "Designed to mix and match with pieces you already own.",
  "Complements any décor, from modern to traditional.",
  "Looks beautiful on display and works hard in use.",
  "An heirloom in the making.",
  "Adds warmth and texture to any space.",
  "Makes a welcome housewarming or wedding gift.",
] as const;

export const KIDS_LINES = [
  "Made to keep up with busy kids.",
  "Soft enough for all-day comfort.",
  "Easy on, easy off.",
  "Washes well and holds up to hand-me-downs.",
  "Ready for playdates, parties and everything in between.",
  "A family favorite.",
] as const;

export const ORIGINS = [
  "Imported", "Made in China", "Made in Italy", "Made in India", "Made in Portugal", "Made in the USA",
  "Made in Vietnam", "Made in Turkey", "Made in Spain", "Made in Peru", "Made in Bangladesh", "Made in Mexico",
  "Made in France", "Made in Japan", "Made in Indonesia", "Made in Morocco", "Made in Scotland",
] as const;

/** Sizing advice, most common first. */
export const APPAREL_FIT = [
  "Fits true to size.", "True to size.", "Relaxed fit.", "Slim fit.", "Runs small; consider sizing up.",
  "Oversized fit; size down for a closer fit.", "Runs large; consider sizing down.", "Semi-fitted silhouette.",
] as const;

export const SHOE_FIT = [
  "Fits true to size.", "Runs half a size small; we recommend sizing up.", "Runs large; consider sizing down half a size.",
  "True to size; medium width.", "Available in medium width only.",
] as const;

export const MODEL_HEIGHTS = [`5'10"`, `5'9"`, `5'11"`, `6'1"`, `6'0"`, `6'2"`] as const;

/** Words that stay capitalised inside a sentence. */
export const PROPER_WORDS = new Set([
  "Chelsea", "Oxford", "Mary", "Jane", "Henley", "Breton", "Fair", "Isle", "Western", "Egyptian", "Turkish", "Pima",
  "Tencel", "Moroccan", "Persian-Style", "Johnny", "Harrington", "GMT", "Venetian", "Kantha", "Italian", "French",
  "UPF", "RFID", "Parisian-inspired", "Scandinavian-inspired", "Grade-A", "Super",
  "Sundays", "Fridays", "D-ring", "d'Orsay", "Dutch",
]);
