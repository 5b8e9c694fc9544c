// Retail prices in cents: MSRPs that end the way shop prices do, and flash-sale markdowns of 30-80%.
import type { Random } from "./random.ts";
import { createWeighted } from "./random.ts";

/** How deep a sale's markdowns go at most, in percent off MSRP: "up to 60% off". */
const SALE_DEPTHS = createWeighted([
  [40, 1],
  [50, 2],
  [60, 3],
  [65, 2],
  [70, 3],
  [75, 2],
  [80, 2],
]);

const MSRP_ENDINGS = createWeighted([
  [0, 60],
  [95, 22],
  [50, 10],
  [99, 8],
]);
const SALE_ENDINGS = createWeighted([
  [99, 40],
  [0, 40],
  [95, 15],
  [50, 5],
]);

/** The deepest markdown a sale allows, in whole percent. */
export function pickSaleDepth(rng: Random): number {
  return SALE_DEPTHS(rng);
}

/** A product's markdown within its sale's depth: at least 30% off, most often near the top of the range. */
export function pickDiscount(rng: Random, depth: number): number {
  const lo = Math.min(MIN_PERCENT_OFF, depth);
  return Math.round(lo + (depth - lo) * Math.sqrt(rng.next()));
}

/** An MSRP in a dollar range, log-uniform, rounded the way retailers round: 24.95, 89.00, 128.00, 598.00. */
export function pickMsrp(rng: Random, [min, max]: readonly [number, number]): number {
  return roundMsrp(rng, Math.exp(rng.float(Math.log(min), Math.log(max))));
}

/** Rounds a dollar amount to a plausible shelf price, in cents. */
export function roundMsrp(rng: Random, dollars: number): number {
  if (dollars < 100) {
    const ending = MSRP_ENDINGS(rng);
    const whole = Math.max(1, Math.round(dollars) - (ending >= 95 ? 1 : 0));
    return whole * 100 + ending;
  }
  // Designer pricing: 128, 148, 198 or round tens and fives.
  const whole = rng.chance(0.45) ? Math.round(dollars / 10) * 10 - 2 : Math.round(dollars / 5) * 5;
  return whole * 100 - (dollars < 500 && rng.chance(0.15) ? 5 : 0);
}

/** Shallowest and deepest markdowns a sample price shows. */
export const MIN_PERCENT_OFF = 30;
export const MAX_PERCENT_OFF = 80;

/**
 * The sale price for an MSRP at about `off` percent off: the nearest shop-looking price at or below the exact
 * figure, or just above it when rounding down would pass `cap` percent. Never above the MSRP, never below a dollar.
 */
export function salePrice(rng: Random, msrpCents: number, off: number, cap = MAX_PERCENT_OFF): number {
  const target = (msrpCents * (100 - off)) / 100;
  const ending = SALE_ENDINGS(rng);
  let whole = Math.floor(target / 100);
  if (whole * 100 + ending > target) whole -= 1;
  if (percentOff(msrpCents, whole * 100 + ending) > cap) whole += 1;
  return Math.min(msrpCents, Math.max(100, whole * 100 + ending));
}

/** A shipping surcharge in a dollar range: whole dollars or .95. */
export function pickSurcharge(rng: Random, [min, max]: readonly [number, number]): number {
  const whole = rng.int(Math.floor(min), Math.floor(max));
  return whole * 100 + (min % 1 !== 0 ? 95 : 0);
}

/** Cents as the contract's money string: 12995 -> "129.95". */
export function formatPrice(cents: number): string {
  const whole = Math.floor(cents / 100);
  const rest = cents % 100;
  return `${whole}.${rest < 10 ? "0" : ""}${rest}`;
}

/** Whole percent off: how the sale's "up to X% off" is worked out. */
export function percentOff(msrpCents: number, saleCents: number): number {
  return Math.floor(((msrpCents - saleCents) * 100) / msrpCents);
}
