// The kids' store: baby, girls' and boys' clothing, shoes and gear.
import type { ProductType } from "./product-types.ts";

const ALL = ["girl", "boy", "unisex"] as const;
const SHOE = ["a hook-and-loop strap", "a cushioned insole", "a non-slip rubber sole", "a padded collar", "an easy-on pull tab"];

export const KIDS_TYPES: readonly ProductType[] = [
  {
    id: "k-dress", noun: "Dress", weight: 8, categories: ["Clothing", "Dresses"], genders: ["girl"], extraCategories: ["Occasion Wear"],
    styles: ["Smocked", "Floral Print", "Party", "Tiered", "Sweater", "Tulle", "Twirl", "Ruffled"],
    material: "woven", sizes: "KiAp", sizeSpan: [4, 16], sizeCount: [3, 5], price: [34, 128], fit: "dress",
    features: ["a twirly skirt", "a sash bow", "flutter sleeves", "a tulle underlayer", "a back button closure", "puff sleeves"],
  },
  {
    id: "k-tee", noun: "Tee", weight: 9, categories: ["Clothing", "Tops & Tees"], genders: ALL,
    styles: ["Graphic", "Striped", "Pocket", "Long Sleeve", "Glitter", "Dinosaur", "Rainbow", "Ringer"],
    material: "jersey", sizes: "KiAp", sizeSpan: [4, 16], sizeCount: [3, 6], price: [14, 42], fit: "top",
    features: ["a screen-printed graphic", "a tagless neck", "a relaxed fit", "reinforced seams"],
  },
  {
    id: "k-romper", noun: "Romper", weight: 4, categories: ["Clothing", "Baby"], genders: ALL, baby: true,
    styles: ["Ruffled", "Short Sleeve", "Knit", "Printed", "Footed", "Overall"],
    material: "jersey", sizes: "KiAp", sizeSpan: [0, 6], sizeCount: [3, 5], price: [22, 68], fit: "top",
    features: ["snaps at the inseam for easy changes", "fold-over mitten cuffs", "a lap shoulder neckline", "ruffle trim"],
  },
  {
    id: "k-bodysuit", noun: "Bodysuit Set", weight: 3, categories: ["Clothing", "Baby"], genders: ALL, baby: true,
    styles: ["3-Pack", "5-Pack", "Printed", "Ribbed", "Long Sleeve"],
    material: "jersey", sizes: "KiAp", sizeSpan: [0, 3], sizeCount: [3, 4], price: [24, 58], fit: "top",
    features: ["nickel-free snaps", "an envelope neckline", "soft flatlock seams"],
  },
  {
    id: "k-pajama", noun: "Pajama Set", weight: 5, categories: ["Clothing", "Sleepwear"], genders: ALL,
    styles: ["Two-Piece", "Snug Fit", "Printed", "Flannel", "Holiday", "Glow-in-the-Dark"],
    material: "jersey", sizes: "KiAp", sizeSpan: [2, 16], sizeCount: [3, 6], price: [24, 68], fit: "top",
    features: ["a snug fit for safety", "an elastic waist", "ribbed cuffs", "a matching top and bottom"],
  },
  {
    id: "k-jean", noun: "Jean", weight: 4, categories: ["Clothing", "Jeans & Pants"], genders: ALL,
    styles: ["Skinny", "Straight Leg", "Pull-On", "Relaxed", "Wide Leg", "Flare"],
    material: "denim", sizes: "KiAp", sizeSpan: [4, 16], sizeCount: [3, 6], price: [28, 78], fit: "bottom",
    features: ["an adjustable waistband", "reinforced knees", "a five-pocket design", "an elastic back waist"],
  },
  {
    id: "k-jogger", noun: "Jogger", weight: 4, categories: ["Clothing", "Jeans & Pants"], genders: ALL,
    styles: ["Fleece", "Cargo", "Pull-On", "Knit", "Tech"],
    material: "active", sizes: "KiAp", sizeSpan: [4, 16], sizeCount: [3, 6], price: [22, 58], fit: "bottom",
    features: ["an elastic drawstring waist", "ribbed cuffs", "side pockets", "reinforced knees"],
  },
  {
    id: "k-hoodie", noun: "Hoodie", weight: 4, categories: ["Clothing", "Sweatshirts & Hoodies"], genders: ALL,
    styles: ["Zip-Up", "Pullover", "Graphic", "Sherpa-Lined", "Tie-Dye"],
    material: "active", sizes: "KiAp", sizeSpan: [4, 16], sizeCount: [3, 6], price: [26, 68], fit: "top",
    features: ["a kangaroo pocket", "a lined hood", "ribbed cuffs and hem", "a full-length zip"],
  },
  {
    id: "k-jacket", noun: "Jacket", weight: 4, categories: ["Clothing", "Outerwear"], genders: ALL,
    styles: ["Puffer", "Rain", "Denim", "Fleece", "Quilted", "Windbreaker"],
    material: "outer", sizes: "KiAp", sizeSpan: [4, 16], sizeCount: [3, 6], price: [38, 168], fit: "top",
    features: ["a detachable hood", "reflective trim", "a chin guard on the zip", "zip pockets", "a water-resistant shell"],
  },
  {
    id: "k-legging", noun: "Leggings", plural: true, weight: 3, categories: ["Clothing", "Jeans & Pants"], genders: ["girl"],
    styles: ["Printed", "Ribbed", "Glitter", "Ruffle-Hem", "Footless"],
    material: "jersey", sizes: "KiAp", sizeSpan: [4, 16], sizeCount: [3, 6], price: [16, 38], fit: "bottom",
    features: ["an elastic waistband", "four-way stretch", "a tagless waist"],
  },
  {
    id: "k-swimsuit", noun: "Swimsuit", weight: 3, categories: ["Clothing", "Swimwear"], genders: ["girl"],
    styles: ["One-Piece", "Ruffled", "Rash Guard", "Two-Piece", "Printed"],
    material: "active", sizes: "KiAp", sizeSpan: [4, 16], sizeCount: [3, 6], price: [24, 68], fit: "top",
    features: ["UPF 50+ sun protection", "a chlorine-resistant fabric", "a full lining", "ruffle shoulders"],
  },
  {
    id: "k-swim-trunk", noun: "Swim Trunk", weight: 2, categories: ["Clothing", "Swimwear"], genders: ["boy"],
    styles: ["Printed", "Board", "Shark", "Striped", "Volley"],
    material: "active", sizes: "KiAp", sizeSpan: [4, 16], sizeCount: [3, 6], price: [22, 58], fit: "bottom",
    features: ["a mesh lining", "an elastic drawstring waist", "a quick-dry finish", "UPF 50+ sun protection"],
  },
  {
    id: "k-sneaker", noun: "Sneaker", weight: 5, categories: ["Shoes", "Sneakers"], genders: ALL,
    styles: ["Light-Up", "Hook-and-Loop", "Slip-On", "High-Top", "Running", "Canvas"],
    material: "shoe", sizes: "KiSh", sizeCount: [4, 7], price: [38, 98], fit: "shoe",
    features: ["light-up soles", "bungee laces", ...SHOE],
  },
  {
    id: "k-sandal", noun: "Sandal", weight: 3, categories: ["Shoes", "Sandals"], genders: ALL,
    styles: ["Fisherman", "Water", "Sport", "Jelly", "Closed-Toe"],
    material: "shoe", sizes: "KiSh", sizeCount: [4, 7], price: [28, 78], fit: "shoe",
    features: ["a closed toe bumper", "a quick-dry lining", ...SHOE],
  },
  {
    id: "k-boot", noun: "Boot", weight: 3, categories: ["Shoes", "Boots"], genders: ALL,
    styles: ["Rain", "Snow", "Chelsea", "Hiking", "Faux Fur-Lined", "Combat"],
    material: "shoe", sizes: "KiSh", sizeCount: [4, 7], price: [38, 128], fit: "boot",
    features: ["a waterproof shell", "a cozy faux-fur lining", "easy-on handles", ...SHOE],
  },
  {
    id: "k-backpack", noun: "Backpack", weight: 2, categories: ["Accessories", "Backpacks"], genders: ALL,
    styles: ["Printed", "Mini", "Insulated", "Critter", "Rolling"],
    material: "bag", price: [24, 78], fit: "bag",
    dims: ['Measures 10" W x 13" H x 5" D.', 'Measures 12" W x 16" H x 6" D.'],
    features: ["a name tag", "a padded back", "a water bottle pocket", "a chest strap", "reflective trim"],
  },
  {
    id: "k-hat", noun: "Hat", weight: 2, categories: ["Accessories", "Hats & Mittens"], genders: ALL,
    styles: ["Pom-Pom Beanie", "Sun", "Bucket", "Trapper", "Baseball"],
    material: "knit", price: [14, 42], fit: "none",
    features: ["a faux-fur pom-pom", "a chin strap", "a fleece lining", "UPF 50+ sun protection"],
  },
];
