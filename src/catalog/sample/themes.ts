// Sale themes per store: what a sale is called, its one-line pitch, and which products it holds.
import type { Store } from "../schema.ts";
import type { ProductConstraints } from "./products.ts";

export interface SaleTheme extends ProductConstraints {
  name: string;
  /** First sentence of the sale description. */
  blurb: string;
}

const t = (name: string, blurb: string, constraints: ProductConstraints = {}): SaleTheme => ({
  name,
  blurb,
  ...constraints,
});

const W_SHOES = ["w-ankle-boot", "w-tall-boot", "w-pump", "w-sandal", "w-flat", "w-loafer", "w-sneaker"];
const W_BAGS = ["w-tote", "w-crossbody", "w-shoulder-bag", "w-clutch"];
const M_SHOES = ["m-oxford", "m-loafer", "m-boot", "m-sneaker"];
const K_SHOES = ["k-sneaker", "k-sandal", "k-boot"];

/** Themes built around a kind of product, a material or a mood, per store. */
export const THEMES: Readonly<Record<Store, readonly SaleTheme[]>> = {
  women: [
    t("The Dress Shop", "Wrap, midi and maxi dresses for every day on your calendar.", { types: ["w-dress"] }),
    t("Cashmere Sweaters for Her", "Featherlight knits in the softest cashmere.", {
      types: ["w-sweater", "w-cardigan"],
      material: "Cashmere",
    }),
    t("Ankle Boots & Booties", "Chelsea boots, block heels and lug soles to take you through the season.", {
      types: ["w-ankle-boot"],
    }),
    t("Designer Handbags", "Totes, crossbodies and shoulder bags from the labels you love.", { types: W_BAGS }),
    t("Little Black Dresses", "The one dress every closet needs, in every silhouette.", {
      types: ["w-dress"],
      color: "Black",
    }),
    t("Coats & Jackets", "Wool coats, trenches and moto jackets for cooler days.", {
      types: ["w-coat", "w-jacket", "w-blazer"],
    }),
    t("Workwear Edit", "Polished blazers, trousers and blouses for the office.", {
      types: ["w-blazer", "w-pant", "w-blouse", "w-dress", "w-pump"],
    }),
    t("Denim Shop", "Skinny, straight and wide-leg jeans in every wash.", { types: ["w-jean"] }),
    t("Heels & Sandals", "Pumps, slingbacks and strappy sandals to finish the look.", {
      types: ["w-pump", "w-sandal"],
    }),
    t("Tees & Tops", "Easy tees and blouses to wear with everything.", { types: ["w-tee", "w-blouse"] }),
    t("Jewelry Box", "Hoops, pendants and cuffs to layer and stack.", {
      types: ["w-earrings", "w-necklace", "w-bracelet"],
    }),
    t("Silk Blouses & Dresses", "Fluid silk pieces that go from desk to dinner.", {
      types: ["w-blouse", "w-dress"],
      material: "Silk",
    }),
    t("Wedding Guest Dresses", "Dresses, clutches and heels for every invitation.", {
      types: ["w-dress", "w-clutch", "w-pump", "w-jumpsuit"],
    }),
    t("Active & Lounge", "Leggings, sports layers and pajamas for off-duty days.", {
      types: ["w-legging", "w-pajama", "w-sneaker"],
    }),
    t("Swim & Vacation Shop", "Swimsuits, sandals and sundresses for your next getaway.", {
      types: ["w-swimsuit", "w-sandal", "w-dress"],
    }),
    t("Linen for Summer", "Breezy linen dresses, pants and blouses.", {
      types: ["w-dress", "w-pant", "w-blouse"],
      material: "Linen",
    }),
    t("Leather Totes", "Roomy leather totes for work and weekend.", { types: ["w-tote"], material: "Leather" }),
    t("Boot Shop", "Knee-high, riding and ankle boots.", { types: ["w-ankle-boot", "w-tall-boot"] }),
    t("Sneakers & Flats", "Comfortable flats, loafers and sneakers.", { types: ["w-flat", "w-loafer", "w-sneaker"] }),
    t("Café Society: Parisian Style", "Breton stripes, trench coats and ballet flats with a French accent.", {
      types: ["w-tee", "w-coat", "w-flat", "w-scarf", "w-skirt"],
    }),
    t("Skirts & Pants", "Midi skirts, wide-leg pants and everything in between.", {
      types: ["w-skirt", "w-pant", "w-jumpsuit"],
    }),
    t("Weekend Getaway", "Everything you need for a long weekend away."),
    t("New Arrivals for Her", "Just-landed styles from our favorite labels."),
    t("Holiday Party Shop", "Sequins, velvet and statement heels for the party season."),
  ],
  men: [
    t("Cashmere Sweaters for Him", "Crew necks, V-necks and quarter-zips in pure cashmere.", {
      types: ["m-sweater"],
      material: "Cashmere",
    }),
    t("Dress Shirts & Ties", "Crisp dress shirts and silk ties for the workweek.", {
      types: ["m-dress-shirt", "m-tie"],
    }),
    t("The Suit Shop", "Suits, sport coats and trousers, tailored to perfection.", {
      types: ["m-suit", "m-sport-coat", "m-trouser"],
    }),
    t("Dress Shoes", "Oxfords, loafers and brogues built to last.", { types: ["m-oxford", "m-loafer"] }),
    t("Boots for Him", "Chelsea, chukka and work boots.", { types: ["m-boot"] }),
    t("Sneaker Shop", "Court, runner and leather sneakers.", { types: ["m-sneaker"] }),
    t("Outerwear for Him", "Parkas, peacoats and field jackets.", { types: ["m-jacket", "m-coat"] }),
    t("Denim & Chinos", "Jeans and chinos in every fit.", { types: ["m-jean", "m-chino"] }),
    t("Polos & Tees", "Warm-weather staples in soft cotton.", { types: ["m-polo", "m-tee"] }),
    t("Watches", "Chronographs, divers and dress watches.", { types: ["m-watch"] }),
    t("Leather Accessories", "Belts, wallets and bags in fine leather.", {
      types: ["m-belt", "m-wallet", "m-bag"],
      material: "Leather",
    }),
    t("Swim & Shorts", "Swim trunks and shorts for the season.", { types: ["m-swim", "m-short"] }),
    t("Activewear for Him", "Hoodies, joggers and sneakers for training days.", {
      types: ["m-hoodie", "m-jogger", "m-sneaker"],
    }),
    t("Linen Shirts", "Breathable linen for hot days.", { types: ["m-shirt"], material: "Linen" }),
    t("Casual Shirts", "Oxfords, flannels and camp-collar shirts.", { types: ["m-shirt"] }),
    t("Men's Shoe Shop", "Dress shoes, boots and sneakers.", { types: M_SHOES }),
    t("The Weekend Uniform", "Easy pieces for off-duty days."),
    t("Men's Wardrobe Essentials", "The building blocks of a great wardrobe."),
    t("Gifts for Him", "Thoughtful finds for every man on your list."),
  ],
  kids: [
    t("Girls' Dresses", "Twirly, smocked and party dresses.", { types: ["k-dress"] }),
    t("Baby Shop", "Rompers and bodysuits in the softest cotton.", { types: ["k-romper", "k-bodysuit"] }),
    t("Pajama Party", "Cozy pajama sets for the whole crew.", { types: ["k-pajama"] }),
    t("Kids' Shoes", "Sneakers, sandals and boots for growing feet.", { types: K_SHOES }),
    t("Back to School", "Tees, jeans, hoodies and backpacks for the new school year.", {
      types: ["k-tee", "k-jean", "k-jogger", "k-hoodie", "k-backpack", "k-sneaker"],
    }),
    t("Outerwear for Kids", "Puffers, raincoats and boots for every forecast.", {
      types: ["k-jacket", "k-boot", "k-hat"],
    }),
    t("Kids' Swim Shop", "Swimsuits, trunks and water sandals.", { types: ["k-swimsuit", "k-swim-trunk", "k-sandal"] }),
    t("Play Clothes", "Tees, joggers and leggings made for running around.", {
      types: ["k-tee", "k-jogger", "k-hoodie", "k-legging"],
    }),
    t("Kids' Closet Essentials", "Everyday basics for little ones."),
    t("Holiday Dress-Up", "Party dresses and festive pajamas.", { types: ["k-dress", "k-pajama"] }),
  ],
  home: [
    t("Luxury Bedding", "Sheets, duvets and quilts for a better night's sleep.", {
      types: ["h-sheet-set", "h-duvet", "h-quilt", "h-comforter"],
    }),
    t("Linen Bedding", "Relaxed, breathable linen sheets and duvet covers.", {
      types: ["h-sheet-set", "h-duvet"],
      material: "Linen",
    }),
    t("The Bath Shop", "Plush towels, bath mats and robes.", { types: ["h-towels", "h-bath-rug", "h-robe"] }),
    t("Area Rugs", "Wool, jute and flatweave rugs in every size.", { types: ["h-rug"] }),
    t("Cookware Essentials", "Pots, pans and knives for the serious home cook.", {
      types: ["h-cookware", "h-dutch-oven", "h-skillet", "h-knives"],
    }),
    t("Tabletop", "Dinnerware, glassware and serveware.", { types: ["h-dinnerware", "h-glassware", "h-serveware"] }),
    t("Entertaining at Home", "Everything for your next dinner party.", {
      types: ["h-glassware", "h-serveware", "h-dinnerware", "h-candle"],
    }),
    t("Decor Refresh", "Pillows, throws, vases and mirrors.", {
      types: ["h-pillow", "h-throw", "h-vase", "h-candle", "h-mirror", "h-basket", "h-lamp"],
    }),
    t("Furniture Finds", "Accent chairs, side tables and lighting.", {
      types: ["h-chair", "h-side-table", "h-lamp", "h-mirror"],
    }),
    t("Candles & Home Fragrance", "Hand-poured candles in signature scents.", { types: ["h-candle"] }),
    t("Cozy Throws & Pillows", "Soft layers for the sofa.", { types: ["h-pillow", "h-throw"] }),
    t("Matelassé & Quilted Bedding", "Textured coverlets and quilts.", {
      types: ["h-quilt", "h-duvet"],
      material: "Matelassé",
    }),
    t("Home Refresh", "New pieces for every room."),
  ],
};

/** Open-ended sales, one per store: there is always something on. */
export const EVERGREEN_THEMES: Readonly<Record<Store, SaleTheme>> = {
  women: t("Everyday Essentials for Her", "Wardrobe staples at everyday low prices, with new styles added weekly."),
  men: t("The Men's Basics Shop", "Shirts, tees and chinos at always-on prices, restocked weekly."),
  kids: t("Kids' Basics Shop", "Everyday kids' clothes and shoes, restocked weekly."),
  home: t("Home Essentials", "Sheets, towels and kitchen staples at always-on prices."),
};

/** Brand-sale name patterns per store, with the products they hold. `{brand}` is replaced. */
export const BRAND_THEMES: Readonly<Record<Store, readonly { name: string; types?: readonly string[] }[]>> = {
  women: [
    { name: "{brand}" },
    { name: "{brand} Shoes", types: W_SHOES },
    { name: "{brand} Handbags", types: W_BAGS },
    { name: "{brand} Dresses", types: ["w-dress"] },
  ],
  men: [{ name: "{brand}" }, { name: "{brand} Men's Shoes", types: M_SHOES }, { name: "{brand} for Him" }],
  kids: [{ name: "{brand}" }, { name: "{brand} Shoes", types: K_SHOES }],
  home: [{ name: "{brand}" }],
};
