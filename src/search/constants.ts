// The relevance formula's parameters (the limits on a search are in limits.ts).

/**
 * BM25F (Robertson and Zaragoza 2009): per-field term frequencies, length-normalised and weighted, are summed
 * into one pseudo-frequency that saturates once: score(t, d) = idf(t) * tf * (K1 + 1) / (K1 + tf), with
 * tf = sum over fields f of W_f * tf_f / (1 - B_f + B_f * len_f / avglen_f), and
 * idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)) (Lucene's, never negative).
 */
export const BM25 = {
  k1: 1.2,
  nameWeight: 3,
  nameB: 0.75,
  descriptionWeight: 1,
  descriptionB: 0.75,
} as const;
