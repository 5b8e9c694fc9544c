// Size groups of the sample catalog: code, display name and labels in order, smallest first.

export interface SizeGroup {
  /** The part of the size key before the colon: `WoSh`. */
  code: string;
  /** Display name, one per code: "Women's Shoes". */
  name: string;
  labels: readonly string[];
  /** MSRP multiplier per label (bedding and rugs cost more in bigger sizes); absent means one price. */
  priceFactors?: readonly number[];
}

const range = (from: number, to: number, step: number): string[] => {
  const out: string[] = [];
  for (let v = from; v <= to + 1e-9; v += step) out.push(String(Math.round(v * 10) / 10));
  return out;
};

export const SIZE_GROUPS = {
  WoSh: { code: "WoSh", name: "Women's Shoes", labels: range(5, 11, 0.5) },
  WoAp: { code: "WoAp", name: "Women's Apparel", labels: ["XXS", "XS", "S", "M", "L", "XL"] },
  WoDn: { code: "WoDn", name: "Women's Denim", labels: range(24, 32, 1) },
  MeSh: { code: "MeSh", name: "Men's Shoes", labels: [...range(7, 12, 0.5), "13", "14"] },
  MeAp: { code: "MeAp", name: "Men's Apparel", labels: ["S", "M", "L", "XL", "XXL"] },
  MePa: { code: "MePa", name: "Men's Pants", labels: range(28, 40, 2) },
  KiSh: {
    code: "KiSh",
    name: "Kids' Shoes",
    labels: [...range(4, 13, 1), "1Y", "2Y", "3Y", "4Y", "5Y", "6Y", "7Y"],
  },
  KiAp: {
    code: "KiAp",
    name: "Kids' Apparel",
    labels: ["6M", "12M", "18M", "24M", "2T", "3T", "4T", "4", "5", "6", "6X", "7", "8", "10", "12", "14", "16"],
  },
  HoBd: {
    code: "HoBd",
    name: "Bedding",
    labels: ["Twin", "Full", "Queen", "King", "California King"],
    priceFactors: [0.8, 0.9, 1, 1.15, 1.15],
  },
  HoRg: {
    code: "HoRg",
    name: "Rugs",
    labels: ["2' x 3'", "4' x 6'", "5' x 8'", "8' x 10'", "9' x 12'"],
    priceFactors: [0.2, 0.55, 1, 1.7, 2.3],
  },
} as const satisfies Record<string, SizeGroup>;

export type SizeCode = keyof typeof SIZE_GROUPS;
