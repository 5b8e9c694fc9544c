// The index's word dictionary for typo and prefix matching: the documents' words sorted (prefixes are a range)
// and a deletion dictionary (SymSpell): every word under each way of deleting up to two of its letters, hashed.
import { MAX_PREFIX_SCAN, MAX_TYPO_CANDIDATES } from "./limits.ts";
import type { QueryWord } from "./words.ts";
import { fuzzable, matchCost, TWO_TYPOS_FROM } from "./words.ts";

/** The dictionary as the file holds it. */
export interface DictionaryData {
  /** The documents' {@link fuzzable} words, sorted (UTF-16 order). */
  words: string[];
  /** The text term each word becomes (an index into the text table's keys). */
  terms: Uint32Array;
  /** Hashes of every deletion variant of every word, ascending, with the word each came from. */
  hashes: Uint32Array;
  wordIds: Uint32Array;
}

/** FNV-1a over UTF-16 code units. Collisions only cost a distance check. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The word and every string made by deleting up to `k` of its code units. */
function deletions(word: string, k: number, out = new Set<string>()): Set<string> {
  out.add(word);
  if (k > 0 && word.length > 1) {
    for (let i = 0; i < word.length; i++) deletions(word.slice(0, i) + word.slice(i + 1), k - 1, out);
  }
  return out;
}

/**
 * Deletions a document word needs: a query word within two edits has 8 letters or more (so the document word
 * has 6 or more); any other is within one edit at most.
 */
const deletionDepth = (word: string): number => (word.length >= TWO_TYPOS_FROM - 2 ? 2 : 1);

/** Builds the dictionary from the documents' words (surface -> term index); words that are not fuzzable are left out. */
export function buildDictionary(surfaces: Map<string, number>): DictionaryData {
  const words = [...surfaces.keys()].filter(fuzzable).sort();
  const terms = Uint32Array.from(words, (w) => surfaces.get(w)!);
  const pairs: number[] = [];
  words.forEach((w, i) => {
    for (const d of deletions(w, deletionDepth(w))) pairs.push(hash(d), i);
  });
  const order = Array.from({ length: pairs.length / 2 }, (_, i) => i).sort(
    (a, b) => pairs[2 * a]! - pairs[2 * b]! || pairs[2 * a + 1]! - pairs[2 * b + 1]!,
  );
  const hashes = new Uint32Array(order.length);
  const wordIds = new Uint32Array(order.length);
  order.forEach((p, i) => {
    hashes[i] = pairs[2 * p]!;
    wordIds[i] = pairs[2 * p + 1]!;
  });
  return { words, terms, hashes, wordIds };
}

/** First index in a sorted array whose value is >= target. */
function lowerBound<T>(xs: ArrayLike<T>, target: T): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (xs[mid]! < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Finds the dictionary words a query word matches approximately. */
export class Dictionary {
  readonly #d: DictionaryData;

  constructor(data: DictionaryData) {
    this.#d = data;
  }

  /**
   * Calls `found(term, cost)` for each dictionary word that matches `word` as a prefix completion or a typo
   * (by {@link matchCost}; exact matches are the caller's), possibly several times for one term. Bounded: at most
   * {@link MAX_PREFIX_SCAN} words for the prefix and {@link MAX_TYPO_CANDIDATES} distance checks for the typos.
   */
  variants(word: QueryWord, found: (term: number, cost: number) => void): void {
    const { words, terms, hashes, wordIds } = this.#d;
    if (word.prefix) {
      const from = lowerBound(words, word.surface);
      const to = Math.min(words.length, from + MAX_PREFIX_SCAN);
      for (let i = from; i < to && words[i]!.startsWith(word.surface); i++) {
        const cost = matchCost(word, words[i]!, "");
        if (cost > 0) found(terms[i]!, cost);
      }
    }
    if (word.typos === 0) return;
    const seen = new Set<number>();
    for (const d of deletions(word.surface, word.typos)) {
      const h = hash(d);
      for (let p = lowerBound(hashes, h); p < hashes.length && hashes[p] === h; p++) {
        const w = wordIds[p]!;
        if (seen.has(w)) continue;
        if (seen.size === MAX_TYPO_CANDIDATES) return;
        seen.add(w);
        const cost = matchCost(word, words[w]!, "");
        if (cost > 0) found(terms[w]!, cost);
      }
    }
  }
}
