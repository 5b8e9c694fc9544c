// The engine against a brute-force scan of the same docs, on random corpora small enough to scan: the suite, run by
// reference.test.ts and reference-large.test.ts (two files, so that the unit tests' two workers share its time).
import { describe, expect, it } from "vitest";
import { misspell } from "../../bench/search/misspell.ts";
import { comparePage, createReference } from "../../bench/search/reference.ts";
import { createRandom } from "../../src/catalog/sample/random.ts";
import { COLOR_GROUPS, GENDERS, STORES } from "../../src/catalog/schema.ts";
import { FACET_NAMES, SORT_ORDERS } from "../../src/search/types.ts";
import { buildSearchIndex } from "../../src/search/index-builder.ts";
import { loadSearchIndex } from "../../src/search/index-format.ts";
import type { SearchDoc, SearchQuery } from "../../src/search/types.ts";

/** A seeded PRNG (the sample catalog's mulberry32), so that a failure can be replayed. */
const random = (seed: number): (() => number) => createRandom(seed).next;

// A small, skewed vocabulary: many docs share words, so ties and long posting lists both occur.
const WORDS = [
  "dress",
  "dresses",
  "black",
  "red",
  "boots",
  "leather",
  "cotton",
  "midi",
  "wrap",
  "silk",
  "shirt",
  "t-shirt",
  "running",
  "café",
  "501",
  "wool",
  "jacket",
  "soft",
  "the",
  "and",
];
const BRANDS = ["Calvin Klein", "Calvin Klein Jeans", "Levi's", "Nike", "Diane von Furstenberg", "Hunter"];
const SIZES = ["WoAp:S", "WoAp:M", "WoSh:8", "WoSh:8.5", "MeAp:L", "KiAp:6"];
const CATEGORIES = ["Dresses", "Boots", "Tops", "Home"];

// Words most docs do not have, added for some corpora: queries led by a narrow term (no bitset of the matches made).
export const RARE_WORDS = Array.from(
  { length: 40 },
  (_, i) => `rare${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`,
);

/** Docs of random words (skewed towards the first); with `rare` words, a third of the docs have one of them too. */
function corpus(seed: number, n: number, rare: readonly string[] = []): { docs: SearchDoc[]; rnd: () => number } {
  const rnd = random(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.pow(rnd(), 2) * xs.length)]!;
  const words = (k: number) =>
    [
      ...Array.from({ length: k }, () => pick(WORDS)),
      ...(rare.length > 0 && rnd() < 0.3 ? [rare[Math.floor(rnd() * rare.length)]!] : []),
    ].join(" ");
  const some = <T>(xs: readonly T[]): T[] => xs.filter(() => rnd() < 0.3);
  const docs: SearchDoc[] = [];
  for (let i = 0; i < n; i++) {
    const windows = Array.from({ length: Math.floor(rnd() * 3) }, () => {
      const from = 1000 + Math.floor(rnd() * 10) * 100;
      return { from, to: rnd() < 0.3 ? null : from + 100 * (1 + Math.floor(rnd() * 5)), store: pick(STORES) };
    });
    const gender = rnd() < 0.5 ? pick(GENDERS) : undefined;
    docs.push({
      id: 1 + i * 7 + Math.floor(rnd() * 7),
      name: words(1 + Math.floor(rnd() * 4)),
      description: words(Math.floor(rnd() * 30)),
      brand: pick(BRANDS),
      colorGroups: some(COLOR_GROUPS),
      sizeKeys: some(SIZES),
      ...(gender ? { gender } : {}),
      windows,
      categories: some(CATEGORIES),
      ...(rnd() < 0.95 ? { price: 100 * Math.floor(rnd() * 50) + (rnd() < 0.5 ? 99 : 0) } : {}),
      discount: Math.floor(rnd() * 8) * 1000,
    });
  }
  return { docs, rnd };
}

/** A corpus per case (seed, docs, rare words), and the engine checked against the reference on 400 queries of it. */
export function describeReference(cases: readonly (readonly [number, number, readonly string[]])[]): void {
  describe.each(cases)("random corpus, seed %i, %i docs", (seed, n, rare) => {
    const { docs, rnd } = corpus(seed, n, rare);
    const vocabulary = [...WORDS, ...rare];
    const index = loadSearchIndex(buildSearchIndex(docs));
    const reference = createReference(docs);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const some = <T>(xs: readonly T[], p: number): T[] => (rnd() < p ? xs.filter(() => rnd() < 0.3) : []);

    it("agrees with the brute-force reference on 400 queries (typos, prefixes, sorts, price ranges, facets)", () => {
      let nonEmpty = 0;
      let forgiven = 0;
      for (let i = 0; i < 400; i++) {
        const words = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => pick([...vocabulary, "xyzzy"]));
        if (rnd() < 0.4) words[0] = misspell(words[0]!, rnd);
        if (rnd() < 0.3) words[words.length - 1] = words[words.length - 1]!.slice(0, 3 + Math.floor(rnd() * 3));
        const low = Math.floor(rnd() * 3000);
        const query: SearchQuery = {
          q: words.join(" "),
          brands: rnd() < 0.2 ? [pick(["calvin", "klein jeans", "levis", "nike", "gucci"])] : [],
          stores: some(STORES, 0.3),
          colors: some(COLOR_GROUPS, 0.3),
          genders: some(GENDERS, 0.2),
          sizes: some(SIZES, 0.2),
          start: rnd() < 0.3 ? Math.floor(rnd() * 30) : 0,
          rows: 1 + Math.floor(rnd() * 40),
          now: 900 + Math.floor(rnd() * 1700),
          ...(rnd() < 0.2 ? { typos: false } : {}),
          ...(rnd() < 0.3 ? { prefix: true } : {}),
          ...(rnd() < 0.4 ? { sort: pick(SORT_ORDERS) } : {}),
          ...(rnd() < 0.15 ? { minPrice: low } : {}),
          ...(rnd() < 0.15 ? { maxPrice: low + Math.floor(rnd() * 3000) } : {}),
          ...(rnd() < 0.3 ? { facets: FACET_NAMES.filter(() => rnd() < 0.5) } : {}),
        };
        const got = index.search(query);
        const want = reference.search(query);
        if (got.total > 0) nonEmpty++;
        if (want.ranked.some((r) => r.penalty > 0)) forgiven++;
        const problem = comparePage(got.ids, got.total, want, query.start, query.rows, got.facets);
        expect(problem, JSON.stringify(query)).toBeNull();
      }
      expect(nonEmpty).toBeGreaterThan(100);
      expect(forgiven, "queries with typo or prefix matches").toBeGreaterThan(50);
    });
  });
}
