// A brute-force reference for the search engine: scans every doc with plain maps, no index, no bitsets.
// Used by the benchmark (does every query agree?) and by the engine's tests (random corpora).
import { BM25 } from "../../src/search/constants.ts";
import { tokenize, tokenizeQuery } from "../../src/search/tokenize.ts";
import type { SearchDoc, SearchQuery } from "../../src/search/types.ts";

interface DocStats {
  doc: SearchDoc;
  name: Map<string, number>;
  description: Map<string, number>;
  nameLength: number;
  descriptionLength: number;
  brand: Set<string>;
}

export interface ReferenceResult {
  /** Every match, best first, ties by ID ascending. */
  ranked: { id: number; score: number }[];
  total: number;
}

function counts(text: string): [Map<string, number>, number] {
  const m = new Map<string, number>();
  const terms = tokenize(text);
  for (const t of terms) m.set(t, (m.get(t) ?? 0) + 1);
  return [m, terms.length];
}

/** Precomputes term counts per doc and document frequencies; `search` then scans every doc. */
export function createReference(docs: readonly SearchDoc[]) {
  const stats: DocStats[] = docs.map((doc) => {
    const [name, nameLength] = counts(doc.name);
    const [description, descriptionLength] = counts(doc.description);
    return { doc, name, description, nameLength, descriptionLength, brand: new Set(tokenize(doc.brand)) };
  });
  const df = new Map<string, number>();
  for (const s of stats)
    for (const t of new Set([...s.name.keys(), ...s.description.keys()])) df.set(t, (df.get(t) ?? 0) + 1);
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

  function matches(s: DocStats, q: SearchQuery, terms: string[], brands: string[][]): boolean {
    if (!terms.every((t) => s.name.has(t) || s.description.has(t))) return false;
    const d = s.doc;
    const onSale = d.windows.some(
      (w) =>
        w.from <= q.now && (w.to === null || q.now < w.to) && (q.stores.length === 0 || q.stores.includes(w.store)),
    );
    if (!onSale) return false;
    if (q.colors.length > 0 && !q.colors.some((c) => d.colorGroups.includes(c))) return false;
    if (q.genders.length > 0 && !(d.gender !== undefined && q.genders.includes(d.gender))) return false;
    if (q.sizes.length > 0 && !q.sizes.some((z) => d.sizeKeys.includes(z))) return false;
    return brands.length === 0 || brands.some((b) => b.length > 0 && b.every((t) => s.brand.has(t)));
  }

  return {
    search(q: SearchQuery): ReferenceResult {
      const terms = [...new Set(tokenizeQuery(q.q))];
      if (terms.length === 0) return { ranked: [], total: 0 };
      const brands = q.brands.map((b) => [...new Set(tokenizeQuery(b))]);
      const ranked: { id: number; score: number }[] = [];
      for (const s of stats) {
        if (!matches(s, q, terms, brands)) continue;
        ranked.push({ id: s.doc.id, score: terms.reduce((a, t) => a + termScore(s, t), 0) });
      }
      ranked.sort((a, b) => b.score - a.score || a.id - b.id);
      return { ranked, total: ranked.length };
    },
  };
}

/**
 * Checks a page of engine results against the reference: same total, and at every position a doc that
 * matches with the reference's score for that rank (to 1e-6 relative: the engine keeps per-term scores as
 * float32, so docs whose scores differ by less may swap), and docs with equal scores in ID order. Returns null
 * if they agree, else what differs.
 */
export function comparePage(
  ids: readonly number[],
  total: number,
  ref: ReferenceResult,
  start: number,
  rows: number,
): string | null {
  if (total !== ref.total) return `total ${total}, reference ${ref.total}`;
  const want = ref.ranked.slice(start, start + rows);
  if (ids.length !== want.length) return `${ids.length} ids, reference ${want.length}`;
  const scoreOf = new Map(ref.ranked.map((r) => [r.id, r.score]));
  if (new Set(ids).size !== ids.length) return "duplicate ids";
  for (let i = 0; i < ids.length; i++) {
    const got = scoreOf.get(ids[i]!);
    const expected = want[i]!.score;
    if (got === undefined) return `rank ${start + i}: id ${ids[i]} is not a match`;
    if (Math.abs(got - expected) > 1e-6 * Math.max(1, Math.abs(expected))) {
      return `rank ${start + i}: id ${ids[i]} (score ${got}), reference id ${want[i]!.id} (score ${expected})`;
    }
    if (i > 0 && got === scoreOf.get(ids[i - 1]!) && ids[i]! < ids[i - 1]!)
      return `rank ${start + i}: a tie not in ID order`;
  }
  return null;
}
