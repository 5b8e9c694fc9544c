// A brute-force reference for the search engine: scans every doc (and, for typos and prefixes, every word of the
// corpus) with plain maps, no index, no bitsets, no deletion dictionary. Used by the benchmark (does every query
// agree?) and by the engine's tests (random corpora): same rules, written the obvious way.
import { BM25 } from "../../src/search/constants.ts";
import { FACET_VALUES_LIMIT } from "../../src/search/facets.ts";
import { surfaceWords, tokenize, tokenizeQuery } from "../../src/search/tokenize.ts";
import type { FacetName, FacetValues, SearchDoc, SearchQuery } from "../../src/search/types.ts";
import { FACET_NAMES } from "../../src/search/types.ts";
import { MAX_EXPANSIONS } from "../../src/search/limits.ts";
import { matchCost, queryWords } from "../../src/search/words.ts";

interface DocStats {
  doc: SearchDoc;
  name: Map<string, number>;
  description: Map<string, number>;
  nameLength: number;
  descriptionLength: number;
  brand: Set<string>;
}

/** One match: its sort value (higher first; 0 for relevance), its total penalty (lower first) and its BM25F score. */
interface RankedMatch {
  id: number;
  primary: number;
  penalty: number;
  score: number;
}

export interface ReferenceResult {
  /** Every match, in the query's order: primary desc, penalty asc, score desc, ID asc. */
  ranked: RankedMatch[];
  total: number;
  facets?: Partial<Record<FacetName, FacetValues>>;
}

function counts(text: string): [Map<string, number>, number] {
  const m = new Map<string, number>();
  const terms = tokenize(text);
  for (const t of terms) m.set(t, (m.get(t) ?? 0) + 1);
  return [m, terms.length];
}

const oneLine = (s: string) => s.replace(/\n/g, " ");

/** Precomputes term counts per doc, document frequencies and the corpus's words; `search` then scans every doc. */
export function createReference(docs: readonly SearchDoc[]) {
  const stats: DocStats[] = docs.map((doc) => {
    const [name, nameLength] = counts(doc.name);
    const [description, descriptionLength] = counts(doc.description);
    return { doc, name, description, nameLength, descriptionLength, brand: new Set(tokenize(doc.brand)) };
  });
  const df = new Map<string, number>();
  for (const s of stats)
    for (const t of new Set([...s.name.keys(), ...s.description.keys()])) df.set(t, (df.get(t) ?? 0) + 1);
  const vocabulary = new Map<string, string>();
  for (const d of docs)
    for (const w of [...surfaceWords(d.name, false), ...surfaceWords(d.description, false)])
      vocabulary.set(w.surface, w.term);
  const n = stats.length;
  const avgName = stats.reduce((a, s) => a + s.nameLength, 0) / n || 1;
  const avgDescription = stats.reduce((a, s) => a + s.descriptionLength, 0) / n || 1;
  const p = BM25;

  function termScore(s: DocStats, term: string): number {
    const dfT = df.get(term)!;
    const idf = Math.log(1 + (n - dfT + 0.5) / (dfT + 0.5));
    const tf =
      ((s.name.get(term) ?? 0) * p.nameWeight) / (1 - p.nameB + (p.nameB * s.nameLength) / avgName) +
      ((s.description.get(term) ?? 0) * p.descriptionWeight) /
        (1 - p.descriptionB + (p.descriptionB * s.descriptionLength) / avgDescription);
    return (idf * tf * (p.k1 + 1)) / (p.k1 + tf);
  }

  const onSaleIn = (d: SearchDoc, now: number, store: string | null) =>
    d.windows.some((w) => w.from <= now && (w.to === null || now < w.to) && (store === null || w.store === store));

  /** Which of the query's filters a doc passes, by facet name (plus `text`, `price` and `onSale`). */
  function passes(s: DocStats, q: SearchQuery, brands: string[][]) {
    const d = s.doc;
    const price = d.price ?? -1;
    return {
      onSale: onSaleIn(d, q.now, null),
      store: q.stores.length === 0 || q.stores.some((st) => onSaleIn(d, q.now, st)),
      color: q.colors.length === 0 || q.colors.some((c) => d.colorGroups.includes(c)),
      gender: q.genders.length === 0 || (d.gender !== undefined && q.genders.includes(d.gender)),
      size: q.sizes.length === 0 || q.sizes.some((z) => d.sizeKeys.includes(z)),
      brand: brands.length === 0 || brands.some((b) => b.length > 0 && b.every((t) => s.brand.has(t))),
      price:
        (q.minPrice === undefined && q.maxPrice === undefined) ||
        (price >= 0 && price >= (q.minPrice ?? 0) && price <= (q.maxPrice ?? Infinity)),
    };
  }

  /** A facet's values for a doc at `now`. */
  function values(d: SearchDoc, facet: FacetName, now: number): string[] {
    switch (facet) {
      case "brand":
        return [oneLine(d.brand)];
      case "color":
        return [...new Set(d.colorGroups)];
      case "size":
        return [...new Set(d.sizeKeys)];
      case "store":
        return [...new Set(d.windows.map((w) => w.store))].filter((st) => onSaleIn(d, now, st));
      case "gender":
        return d.gender ? [d.gender] : [];
      case "category":
        return [...new Set((d.categories ?? []).map(oneLine))];
    }
  }

  function primaryOf(d: SearchDoc, q: SearchQuery): number {
    const price = d.price ?? -1;
    switch (q.sort ?? "relevance") {
      case "price_asc":
        return price >= 0 ? -price : -Infinity;
      case "price_desc":
        return price >= 0 ? price : -Infinity;
      case "discount":
        return d.discount ?? 0;
      case "newest":
        return Math.max(
          -Infinity,
          ...d.windows.filter((w) => w.from <= q.now && (w.to === null || q.now < w.to)).map((w) => w.from),
        );
      default:
        return 0;
    }
  }

  return {
    search(q: SearchQuery): ReferenceResult {
      const facetNames = q.facets ?? [];
      const words = queryWords(q.q, q.typos ?? true, q.prefix ?? false);
      // Each word's terms with their penalties, by scanning every word of the corpus.
      const wordTerms = words.map((w) => {
        const costs = new Map<string, number>();
        if (df.has(w.term)) costs.set(w.term, 0);
        for (const [surface, term] of vocabulary) {
          const c = matchCost(w, surface, term);
          if (c >= 0 && df.has(term) && !(costs.get(term)! <= c)) costs.set(term, c);
        }
        // The engine's cap: the cheapest terms, then those in the most docs, then by term (UTF-16 order).
        const kept = [...costs]
          .sort((a, b) => a[1] - b[1] || df.get(b[0])! - df.get(a[0])! || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
          .slice(0, MAX_EXPANSIONS);
        return new Map(kept);
      });
      const brands = q.brands.map((b) => [...new Set(tokenizeQuery(b))]);
      const ranked: RankedMatch[] = [];
      const facetCounts = new Map<FacetName, Map<string, number>>(FACET_NAMES.map((f) => [f, new Map()]));
      for (const s of words.length === 0 ? [] : stats) {
        let penalty = 0;
        let score = 0;
        let text = true;
        for (const costs of wordTerms) {
          let bestCost = Infinity;
          let bestScore = -Infinity;
          for (const term of new Set([...s.name.keys(), ...s.description.keys()])) {
            const c = costs.get(term);
            if (c === undefined || c > bestCost) continue;
            const sc = termScore(s, term);
            if (c < bestCost || sc > bestScore) [bestCost, bestScore] = [c, sc];
          }
          if (bestCost === Infinity) {
            text = false;
            break;
          }
          penalty += bestCost;
          score += bestScore;
        }
        if (!text) continue;
        const ok = passes(s, q, brands);
        if (!ok.price) continue;
        const filterNames = ["store", "color", "gender", "size", "brand"] as const;
        if (ok.onSale && filterNames.every((f) => ok[f])) {
          ranked.push({ id: s.doc.id, primary: primaryOf(s.doc, q), penalty, score });
        }
        for (const facet of facetNames) {
          // Every filter but the facet's own; the store facet counts within every store's on-sale products.
          if (!(facet === "store" ? ok.onSale : ok.store && ok.onSale)) continue;
          if (!filterNames.every((f) => f === facet || f === "store" || ok[f])) continue;
          const m = facetCounts.get(facet)!;
          for (const v of values(s.doc, facet, q.now)) m.set(v, (m.get(v) ?? 0) + 1);
        }
      }
      ranked.sort((a, b) => b.primary - a.primary || a.penalty - b.penalty || b.score - a.score || a.id - b.id);
      const result: ReferenceResult = { ranked, total: ranked.length };
      if (facetNames.length > 0) {
        result.facets = {};
        for (const facet of FACET_NAMES) {
          if (!facetNames.includes(facet)) continue;
          result.facets[facet] = [...facetCounts.get(facet)!]
            .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
            .slice(0, FACET_VALUES_LIMIT)
            .map(([value, count]) => ({ value, count }));
        }
      }
      return result;
    },
  };
}

/**
 * Checks a page of engine results against the reference: same total, and at every position a doc that matches
 * with the reference's sort value and penalty for that rank and its score (to 1e-6 relative: the engine keeps
 * per-term scores as float32, so docs whose scores differ by less may swap), docs tied on all three in ID
 * order, and the same facets. Returns null if they agree, else what differs.
 */
export function comparePage(
  ids: readonly number[],
  total: number,
  ref: ReferenceResult,
  start: number,
  rows: number,
  facets?: Partial<Record<FacetName, FacetValues>>,
): string | null {
  if (total !== ref.total) return `total ${total}, reference ${ref.total}`;
  const want = ref.ranked.slice(start, start + rows);
  if (ids.length !== want.length) return `${ids.length} ids, reference ${want.length}`;
  const byId = new Map(ref.ranked.map((r) => [r.id, r]));
  if (new Set(ids).size !== ids.length) return "duplicate ids";
  for (let i = 0; i < ids.length; i++) {
    const got = byId.get(ids[i]!);
    const expected = want[i]!;
    if (got === undefined) return `rank ${start + i}: id ${ids[i]} is not a match`;
    if (
      got.primary !== expected.primary ||
      got.penalty !== expected.penalty ||
      Math.abs(got.score - expected.score) > 1e-6 * Math.max(1, Math.abs(expected.score))
    ) {
      return `rank ${start + i}: id ${ids[i]} (${got.primary}/${got.penalty}/${got.score}), reference id ${expected.id} (${expected.primary}/${expected.penalty}/${expected.score})`;
    }
    const prev = i > 0 ? byId.get(ids[i - 1]!)! : null;
    if (
      prev &&
      got.primary === prev.primary &&
      got.penalty === prev.penalty &&
      got.score === prev.score &&
      ids[i]! < ids[i - 1]!
    )
      return `rank ${start + i}: a tie not in ID order`;
  }
  if (JSON.stringify(facets) !== JSON.stringify(ref.facets))
    return `facets ${JSON.stringify(facets)?.slice(0, 300)}, reference ${JSON.stringify(ref.facets)?.slice(0, 300)}`;
  return null;
}
