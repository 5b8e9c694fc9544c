// The order shoppers expect size labels in: XS before S before M, 8 before 8.5 before 10, 2T before 3T.

const LETTER_SIZES = ["XXXXS", "XXXS", "XXS", "XS", "S", "M", "L", "XL", "XXL", "XXXL", "XXXXL", "XXXXXL", "XXXXXXL"];
const NUMERIC = /^(\d+(?:\.\d+)?)(.*)$/;
/** A count of X's written as a number: 2XL is XXL, 3XS is XXXS, and plus sizes 1X, 2X, 3X are XL, XXL, XXXL. */
const COUNTED_X = /^([1-6])X([SL]?)$/i;

function rank(label: string): [number, number, string] {
  const counted = COUNTED_X.exec(label);
  const letter = LETTER_SIZES.indexOf(
    counted ? "X".repeat(Number(counted[1])) + (counted[2]?.toUpperCase() || "L") : label.toUpperCase(),
  );
  // 2XL next to XXL, just after it (the written form breaks the tie, so the order stays total).
  if (letter >= 0) return [0, letter, counted ? label.toUpperCase() : ""];
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
