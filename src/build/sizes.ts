// The order shoppers expect size labels in: XS before S before M, 8 before 8.5 before 10, 2T before 3T.

const LETTER_SIZES = ["XXS", "XS", "S", "M", "L", "XL", "XXL", "XXXL"];
const NUMERIC = /^(\d+(?:\.\d+)?)(.*)$/;

function rank(label: string): [number, number, string] {
  const letter = LETTER_SIZES.indexOf(label.toUpperCase());
  if (letter >= 0) return [0, letter, ""];
  const m = NUMERIC.exec(label);
  if (m) return [1, Number(m[1]), m[2] ?? ""];
  return [2, 0, label];
}

/** Compares two size labels: letter sizes in their order, then numbers ascending (suffix as tie-break), then the rest. */
export function compareSizeLabels(a: string, b: string): number {
  const [ka, na, sa] = rank(a);
  const [kb, nb, sb] = rank(b);
  if (ka !== kb) return ka - kb;
  if (na !== nb) return na - nb;
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}
