// Relevance: each posting's BM25F contribution, computed once when the index loads.
import type { SearchIndexData } from "./index-data.ts";

/**
 * The per-posting score: the term's BM25F contribution to that doc, computed once at load. Query terms all
 * weigh the same, so a doc's score is the sum of its postings' scores for the query's distinct terms.
 */
export function scorePostings(data: SearchIndexData): Float32Array {
  const { params: p, text } = data;
  const n = data.ids.length;
  const avg = (lengths: Uint32Array): number => {
    let sum = 0;
    for (const len of lengths) sum += len;
    return sum > 0 ? sum / n : 1;
  };
  const avgName = avg(data.nameLengths);
  const avgDescription = avg(data.descriptionLengths);
  const nameNorm = new Float64Array(n);
  const descriptionNorm = new Float64Array(n);
  for (let d = 0; d < n; d++) {
    nameNorm[d] = p.nameWeight / (1 - p.nameB + (p.nameB * data.nameLengths[d]!) / avgName);
    descriptionNorm[d] =
      p.descriptionWeight / (1 - p.descriptionB + (p.descriptionB * data.descriptionLengths[d]!) / avgDescription);
  }
  const scores = new Float32Array(text.docs.length);
  for (let t = 0; t + 1 < text.offsets.length; t++) {
    const from = text.offsets[t]!;
    const to = text.offsets[t + 1]!;
    const df = to - from;
    const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
    for (let i = from; i < to; i++) {
      const d = text.docs[i]!;
      const tf = text.nameTf[i]! * nameNorm[d]! + text.descriptionTf[i]! * descriptionNorm[d]!;
      scores[i] = (idf * tf * (p.k1 + 1)) / (p.k1 + tf);
    }
  }
  return scores;
}
