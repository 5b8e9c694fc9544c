// The benchmark's query mix, drawn from the corpus itself: broad single words, 1-3 word queries, filters, paging.
import { createRandom } from "../../src/catalog/sample/random.ts";
import { COLOR_GROUPS, GENDERS, STORES } from "../../src/catalog/schema.ts";
import { fold, STOP_WORDS } from "../../src/search/tokenize.ts";
import type { SearchDoc, SearchQuery } from "../../src/search/types.ts";
import { FACET_NAMES, searchQuery } from "../../src/search/types.ts";
import { misspell } from "./misspell.ts";

/** A seeded PRNG (the sample catalog's mulberry32), so that every run asks the same queries. */
function random(seed: number): () => number {
  return createRandom(seed).next;
}

/** The words a shopper would type: folded, split on anything but a-z0-9, no stop words, 3+ characters. */
export function surfaceWords(text: string): string[] {
  return fold(text)
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 3 && !STOP_WORDS.has(w));
}

export interface QueryMix {
  queries: SearchQuery[];
  broad: string[];
  counts: {
    broad: number;
    filtered: number;
    multiWord: number;
    typo: number;
    prefix: number;
    facets: number;
    priceSort: number;
    priceRange: number;
  };
}

/**
 * `count` queries: a fifth are one broad word (the most common words of product names: "dress", "black"),
 * the rest 1-3 words taken from a random product's name and description (some misspelt, some mixed from
 * two products); half carry 1-3 filters; rows 10..100; a quarter ask for a later page. A third have one word
 * misspelt (one random edit of a word of 4+ letters), a fifth use `prefix` with their last word cut to 3+
 * letters, a quarter ask for 1-6 facets, a quarter sort by price (up or down), a tenth have a price range. All
 * at `now` or within the hour after it.
 */
export function makeQueries(docs: readonly SearchDoc[], count: number, seed: number, now: number): QueryMix {
  const rnd = random(seed);
  const int = (n: number) => Math.floor(rnd() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const pickSome = <T>(xs: readonly T[], max: number): T[] => {
    const out = new Set<T>();
    const k = 1 + int(max);
    while (out.size < Math.min(k, xs.length)) out.add(pick(xs));
    return [...out];
  };

  const nameDf = new Map<string, number>();
  for (const d of docs) for (const w of new Set(surfaceWords(d.name))) nameDf.set(w, (nameDf.get(w) ?? 0) + 1);
  const broad = [...nameDf]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 25)
    .map(([w]) => w);

  // Queries come from products on sale at `now`, as a shopper's would (from what they can see).
  const live = docs.filter((d) => d.windows.some((w) => w.from <= now && (w.to === null || now < w.to)));
  const source = live.length > 0 ? live : docs;
  const queries: SearchQuery[] = [];
  const counts = { broad: 0, filtered: 0, multiWord: 0, typo: 0, prefix: 0, facets: 0, priceSort: 0, priceRange: 0 };
  for (let i = 0; i < count; i++) {
    let q: string;
    let wordsDoc: SearchDoc | undefined;
    if (i % 5 === 0) {
      q = pick(broad);
      counts.broad++;
    } else {
      const doc = (wordsDoc = pick(source));
      const name = surfaceWords(doc.name);
      const words = [...name, ...name, ...surfaceWords(doc.description)];
      const k = 1 + int(3);
      const chosen = new Set<string>();
      while (chosen.size < Math.min(k, new Set(words).size)) chosen.add(pick(words));
      const list = [...chosen];
      if (rnd() < 0.08) list.push(pick(surfaceWords(pick(docs).name))); // words of two different products
      q = list.join(" ");
      if (list.length > 1) counts.multiWord++;
    }

    // A third misspelt, a fifth typed as a prefix (the last word cut), as a shopper types them.
    const extra: Partial<SearchQuery> = {};
    const qWords = q.split(" ");
    if (i % 3 === 0) {
      const long = qWords.map((w, j) => [w, j] as const).filter(([w]) => w.length >= 4 && /^[a-z]+$/.test(w));
      if (long.length > 0) {
        const [w, j] = pick(long);
        qWords[j] = misspell(w, rnd);
        counts.typo++;
      }
    }
    if (i % 5 === 2) {
      const last = qWords[qWords.length - 1]!;
      if (last.length > 3) qWords[qWords.length - 1] = last.slice(0, 3 + int(last.length - 3));
      extra.prefix = true;
      counts.prefix++;
    }
    q = qWords.join(" ");
    if (i % 4 === 1) {
      extra.facets = pickSome(FACET_NAMES, FACET_NAMES.length);
      counts.facets++;
    }
    if (i % 4 === 3) {
      extra.sort = rnd() < 0.5 ? "price_asc" : "price_desc";
      counts.priceSort++;
    }
    if (rnd() < 0.1) {
      const low = 1000 * int(10);
      if (rnd() < 0.7) extra.minPrice = low;
      extra.maxPrice = low + 1000 * (1 + int(20));
      counts.priceRange++;
    }

    const filters: Partial<SearchQuery> = {};
    if (i % 2 === 1) {
      counts.filtered++;
      // Mostly values a product on sale has (the one the words came from, for most), sometimes one more.
      const doc = wordsDoc !== undefined && rnd() < 0.8 ? wordsDoc : pick(source);
      const withOther = <T>(own: readonly T[], all: readonly T[]): T[] => [
        ...new Set([...(own.length > 0 ? [pick(own)] : []), ...(own.length === 0 || rnd() < 0.3 ? [pick(all)] : [])]),
      ];
      const kinds = pickSome(
        (["store", "color", "gender", "size", "brand"] as const).filter(
          (k) =>
            (k !== "color" || doc.colorGroups.length > 0) &&
            (k !== "gender" || doc.gender) &&
            (k !== "size" || doc.sizeKeys.length > 0),
        ),
        3,
      );
      for (const kind of kinds) {
        if (kind === "store")
          filters.stores = withOther(
            doc.windows.map((w) => w.store),
            STORES,
          );
        else if (kind === "color") filters.colors = withOther(doc.colorGroups, COLOR_GROUPS);
        else if (kind === "gender") filters.genders = withOther(doc.gender ? [doc.gender] : [], GENDERS);
        else if (kind === "size") filters.sizes = withOther(doc.sizeKeys, doc.sizeKeys);
        else filters.brands = [rnd() < 0.5 ? doc.brand : (surfaceWords(doc.brand)[0] ?? doc.brand)];
      }
    }
    const rows = 10 + int(91);
    const start = rnd() < 0.25 ? rows * (1 + int(3)) : 0;
    queries.push(searchQuery(q, now + int(3600), { start, rows, ...filters, ...extra }));
  }
  return { queries, broad, counts };
}
