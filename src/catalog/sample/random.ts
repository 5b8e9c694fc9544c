// Seeded pseudo-random numbers for the sample catalog (mulberry32): one seed, one catalog, byte for byte.

/** A deterministic source of random choices. Never backed by Math.random. */
export interface Random {
  /** A float in [0, 1); a function property, so that it can be passed on alone (`createRandom(seed).next`). */
  next: () => number;
  /** An integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  /** A float in [min, max). */
  float(min: number, max: number): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  /** One element, uniformly; throws on an empty list. */
  pick<T>(items: readonly T[]): T;
}

/** A function that picks one item of a fixed list with fixed weights. */
export type Picker<T> = (rng: Random) => T;

/** mulberry32: 32 bits of state, fast, good enough for sample data (not for anything secret). */
export function createRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    float: (min, max) => min + next() * (max - min),
    chance: (p) => next() < p,
    pick: (items) => itemAt(items, Math.floor(next() * items.length)),
  };
}

/** Mixes a seed with further numbers (a product ID, a stream label) into a new 32-bit seed. */
export function deriveSeed(seed: number, ...parts: number[]): number {
  let h = (seed ^ 0x9e3779b9) >>> 0;
  for (const part of parts) {
    h = Math.imul(h ^ (part >>> 0), 0x85ebca6b) >>> 0;
    h = (h ^ (h >>> 13)) >>> 0;
    h = Math.imul(h, 0xc2b2ae35) >>> 0;
    h = (h ^ (h >>> 16)) >>> 0;
  }
  return h;
}

/** `items[index]`, or an error instead of undefined. */
export function itemAt<T>(items: readonly T[], index: number): T {
  if (index < 0 || index >= items.length) throw new RangeError(`index ${index} outside a list of ${items.length}`);
  return items[index] as T;
}

/** Picks by explicit weights (any non-negative numbers). */
export function createWeighted<T>(entries: readonly (readonly [T, number])[]): Picker<T> {
  return createCumulative(
    entries.map(([item]) => item),
    entries.map(([, weight]) => weight),
  );
}

/**
 * Picks with a Zipf-like skew: the item at rank r (0-based) has weight 1 / (r + 1)^exponent, so the first few
 * items of a list dominate and its tail is rare. Lists are written most common first.
 */
function createZipf<T>(items: readonly T[], exponent = 1): Picker<T> {
  return createCumulative(
    items,
    items.map((_, r) => 1 / Math.pow(r + 1, exponent)),
  );
}

function createCumulative<T>(items: readonly T[], weights: readonly number[]): Picker<T> {
  if (items.length === 0) throw new RangeError("cannot pick from an empty list");
  const cumulative = new Float64Array(items.length);
  let total = 0;
  weights.forEach((w, i) => {
    total += w;
    cumulative[i] = total;
  });
  return (rng) => {
    const target = rng.next() * total;
    let lo = 0;
    let hi = items.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((cumulative[mid] ?? 0) > target) hi = mid;
      else lo = mid + 1;
    }
    return itemAt(items, lo);
  };
}

/** Up to `count` distinct items from a picker (gives up on a value after a few repeats, so it always ends). */
function pickDistinct<T>(rng: Random, picker: Picker<T>, count: number): T[] {
  const out: T[] = [];
  for (let tries = 0; out.length < count && tries < count * 8; tries++) {
    const item = picker(rng);
    if (!out.includes(item)) out.push(item);
  }
  return out;
}

const zipfCache = new WeakMap<readonly unknown[], Map<number, Picker<unknown>>>();

/** One item of a fixed list with a Zipf skew; the picker is built on first use and kept for the list. */
export function zipfPick<T>(rng: Random, items: readonly T[], exponent = 1): T {
  let byExponent = zipfCache.get(items);
  if (!byExponent) {
    byExponent = new Map();
    zipfCache.set(items, byExponent);
  }
  let picker = byExponent.get(exponent) as Picker<T> | undefined;
  if (!picker) {
    picker = createZipf(items, exponent);
    byExponent.set(exponent, picker);
  }
  return picker(rng);
}

/** Up to `count` distinct items of a list, Zipf-skewed. */
export function zipfPickDistinct<T>(rng: Random, items: readonly T[], count: number, exponent = 1): T[] {
  return pickDistinct(rng, (r) => zipfPick(r, items, exponent), Math.min(count, items.length));
}

const indexPickers = new Map<string, Picker<number>>();

/** An index in [0, n) with a Zipf skew: for choosing among templates built on the spot. */
function zipfIndex(rng: Random, n: number, exponent = 1): number {
  const key = `${n}:${exponent}`;
  let picker = indexPickers.get(key);
  if (!picker) {
    picker = createZipf(
      Array.from({ length: n }, (_, i) => i),
      exponent,
    );
    indexPickers.set(key, picker);
  }
  return picker(rng);
}

/** One of a list built on the spot, Zipf-skewed by position. */
export function zipfOf<T>(rng: Random, items: readonly T[], exponent = 1): T {
  return itemAt(items, zipfIndex(rng, items.length, exponent));
}
