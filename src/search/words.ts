// The forgiving-search rules, shared by the engine and the brute-force reference: which query words may match
// approximately, how far, and what each kind of match costs in the ranking.
import { MAX_FUZZY_WORD_LENGTH, MAX_QUERY_WORDS } from "./limits.ts";
import { surfaceWords } from "./tokenize.ts";

/** A query word of this many letters or more may match a word one edit away. */
export const ONE_TYPO_FROM = 4;
/** A query word of this many letters or more may match a word two edits away. */
export const TWO_TYPOS_FROM = 8;
/** With `prefix`, the last query word matches the words it begins once it has this many letters. */
const MIN_PREFIX_LENGTH = 3;
/** Words shorter than this (in documents and queries) are only ever matched exactly. */
const MIN_FUZZY_LENGTH = 3;

/**
 * Penalties, summed over the query's words: a product's rank is decided by its total penalty first (lowest
 * first), then by BM25F, then by product ID. An exact match (same term after stemming) costs nothing, a prefix
 * completion 1, and each edit of a typo match 2 (Damerau: a transposition is one edit).
 */
const PREFIX_PENALTY = 1;
const EDIT_PENALTY = 2;
/**
 * The engine ranks by one number, BM25F - PENALTY_WEIGHT * penalty: a BM25F sum never reaches this weight
 * (each term adds at most idf * (k1 + 1), about 30 at a million products), so penalties decide first.
 */
export const PENALTY_WEIGHT = 10_000;

/** A query word: its term (exact match), what was typed, its typo budget and whether it is a prefix. */
export interface QueryWord {
  term: string;
  surface: string;
  /** Edits allowed: 0, 1 or 2. */
  typos: number;
  prefix: boolean;
}

const DIGIT_RE = /\p{N}/u;

/** Can this word (as typed, or as a document has it) take part in typo and prefix matching? No digits. */
export const fuzzable = (word: string): boolean => word.length >= MIN_FUZZY_LENGTH && !DIGIT_RE.test(word);

/** May this query word (folded) match with typos or as a prefix? Fuzzable, and at most {@link MAX_FUZZY_WORD_LENGTH}. */
const fuzzyQueryWord = (word: string): boolean => word.length <= MAX_FUZZY_WORD_LENGTH && fuzzable(word);

/** Edits allowed for a typed word of this length, when typos are on. */
const typoBudget = (length: number): number => (length >= TWO_TYPOS_FROM ? 2 : length >= ONE_TYPO_FROM ? 1 : 0);

/**
 * The distinct words of a query (a term typed twice counts once, at its last place), each with its budget:
 * `typos` gives words of 4-7 letters one edit and 8 or more two; `prefix` makes the query's last word (after
 * stop words are dropped) a prefix, from 3 letters on. Words with digits, and words longer than
 * {@link MAX_FUZZY_WORD_LENGTH}, are matched exactly, always. At most {@link MAX_QUERY_WORDS} words are kept (the
 * API refuses a longer query; the cap holds the engine's work whoever calls it).
 */
export function queryWords(q: string, typos: boolean, prefix: boolean): QueryWord[] {
  const words = surfaceWords(q, true);
  const last = new Map<string, number>();
  words.forEach((w, i) => last.set(w.term, i));
  const out: QueryWord[] = [];
  words.forEach((w, i) => {
    if (last.get(w.term) !== i || out.length === MAX_QUERY_WORDS) return;
    const ok = fuzzyQueryWord(w.surface);
    out.push({
      term: w.term,
      surface: w.surface,
      typos: typos && ok ? typoBudget(w.surface.length) : 0,
      prefix: prefix && ok && i === words.length - 1 && w.surface.length >= MIN_PREFIX_LENGTH,
    });
  });
  return out;
}

/**
 * Optimal string alignment distance (Damerau-Levenshtein where a transposition of neighbours is one edit, as
 * Typesense and Meilisearch count typos), in UTF-16 code units; anything above `max` is reported as max + 1.
 */
function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const m = b.length;
  let twoBack = new Array<number>(m + 1).fill(0);
  let prev = Array.from({ length: m + 1 }, (_, j) => j);
  let row = new Array<number>(m + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    row[0] = i;
    let best = i;
    for (let j = 1; j <= m; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let v = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, twoBack[j - 2]! + 1);
      row[j] = v;
      if (v < best) best = v;
    }
    if (best > max) return max + 1;
    [twoBack, prev, row] = [prev, row, twoBack];
  }
  return Math.min(prev[m]!, max + 1);
}

/**
 * What matching a document word (its surface, and the term it becomes) costs a query word: 0 for the same
 * term, PREFIX_PENALTY for a word the query word begins (prefix words only), EDIT_PENALTY per edit within the
 * word's budget; -1 if it does not match. Document words that are not {@link fuzzable} match only exactly.
 */
export function matchCost(word: QueryWord, surface: string, term: string): number {
  if (term === word.term) return 0;
  if (!fuzzable(surface)) return -1;
  if (word.prefix && surface.startsWith(word.surface)) return PREFIX_PENALTY;
  if (word.typos === 0) return -1;
  const d = editDistance(word.surface, surface, word.typos);
  return d <= word.typos ? EDIT_PENALTY * d : -1;
}
