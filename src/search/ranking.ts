// Query words to the index's terms (exact, prefix completions, typos), their doc sets, and each match's rank key:
// the sum over the query's words of the best (BM25F - PENALTY_WEIGHT * penalty) among the word's terms the doc has.
import { popcount, seek, setDocs, orInto } from "./bitset.ts";
import type { BroadTerms } from "./broad-terms.ts";
import type { Dictionary } from "./dictionary.ts";
import { MAX_EXPANSIONS } from "./limits.ts";
import type { QueryWord } from "./words.ts";
import { PENALTY_WEIGHT } from "./words.ts";

/** A query word's terms with their penalties: cheapest first (the exact term, if the index has it, is first). */
export interface WordTerms {
  terms: Uint32Array;
  costs: Uint8Array;
}

/** Above this many terms a word is ranked term by term (scattered into a per-doc array) rather than doc by doc. */
const SCATTER_FROM = 12;
/**
 * A word's single term leads {@link Ranker.rankNarrow} when it has at most this many docs per 32-bit word of a
 * bitset: reading its postings then costs about what the bitset passes it replaces would.
 */
const NARROW_PER_WORD = 4;
/** How many query words keep their expansion; the index never changes, so they stay right. */
const EXPANSION_CACHE_SIZE = 20_000;

/** Expands query words against the text terms and the dictionary; remembers recent expansions. */
export class Expander {
  readonly #terms: Map<string, number>;
  readonly #dictionary: Dictionary;
  readonly #offsets: Uint32Array;
  readonly #cache = new Map<string, WordTerms | null>();

  /** `offsets` are the text postings' (a term's document frequency is the length of its list). */
  constructor(terms: Map<string, number>, dictionary: Dictionary, offsets: Uint32Array) {
    this.#terms = terms;
    this.#dictionary = dictionary;
    this.#offsets = offsets;
  }

  /**
   * The word's terms, or null when it matches nothing in the index: at most {@link MAX_EXPANSIONS}, cheapest first,
   * then those in the most docs, then by term.
   */
  expand(word: QueryWord): WordTerms | null {
    const exact = this.#terms.get(word.term);
    // A word matched only exactly is one lookup: not worth a place in the cache (nor its long surface's memory).
    if (word.typos === 0 && !word.prefix) return exact === undefined ? null : this.#single(exact);
    const key = `${word.typos}${word.prefix ? "p" : "w"}${word.surface}`;
    let found = this.#cache.get(key);
    if (found !== undefined) return found;
    const best = new Map<number, number>();
    if (exact !== undefined) best.set(exact, 0);
    this.#dictionary.variants(word, (t, cost) => {
      const was = best.get(t);
      if (was === undefined || cost < was) best.set(t, cost);
    });
    const offsets = this.#offsets;
    const df = (t: number) => offsets[t + 1]! - offsets[t]!;
    const order = [...best].sort((a, b) => a[1] - b[1] || df(b[0]) - df(a[0]) || a[0] - b[0]).slice(0, MAX_EXPANSIONS);
    found =
      order.length === 0
        ? null
        : { terms: Uint32Array.from(order, (e) => e[0]), costs: Uint8Array.from(order, (e) => e[1]) };
    if (this.#cache.size >= EXPANSION_CACHE_SIZE) this.#cache.clear();
    this.#cache.set(key, found);
    return found;
  }

  /** A word's one exact term, as the engine takes it. */
  #single(term: number): WordTerms {
    return { terms: Uint32Array.of(term), costs: Uint8Array.of(0) };
  }
}

/** Ranks the docs of a match set; holds per-doc scratch arrays sized to the index. */
export class Ranker {
  readonly #offsets: Uint32Array;
  readonly #docs: Uint32Array;
  readonly #scores: Float32Array;
  readonly #broad: BroadTerms;
  readonly #stamp: Uint32Array;
  readonly #best: Float64Array;
  #epoch = 0;
  /** The last {@link rank}'s docs (ascending) and their keys, in [0, count). */
  readonly matches: Uint32Array;
  readonly keys: Float64Array;

  constructor(offsets: Uint32Array, docs: Uint32Array, scores: Float32Array, broad: BroadTerms, n: number) {
    this.#offsets = offsets;
    this.#docs = docs;
    this.#scores = scores;
    this.#broad = broad;
    this.#stamp = new Uint32Array(n);
    this.#best = new Float64Array(n);
    this.matches = new Uint32Array(n);
    this.keys = new Float64Array(n);
  }

  /** The docs having any of a word's terms, into `out` (or a broad term's own set, read-only). */
  wordSet(w: WordTerms, out: Uint32Array): Uint32Array {
    if (w.terms.length === 1 && this.#broad.has(w.terms[0]!)) return this.#broad.bits(w.terms[0]!);
    out.fill(0);
    for (const t of w.terms) {
      if (this.#broad.has(t)) orInto(out, this.#broad.bits(t));
      else setDocs(out, this.#docs, this.#offsets[t]!, this.#offsets[t + 1]!);
    }
    return out;
  }

  /**
   * Lists the docs of `m` (each must have a term of every word) in {@link matches} with their rank keys in
   * {@link keys}; returns how many there are.
   */
  rank(words: readonly WordTerms[], m: Uint32Array): number {
    const matches = this.matches;
    const keys = this.keys;
    let count = 0;
    for (let w = 0; w < m.length; w++) {
      let x = m[w]!;
      while (x !== 0) {
        const low = x & -x;
        x ^= low;
        matches[count] = (w << 5) | (31 - Math.clz32(low));
        keys[count++] = 0;
      }
    }
    for (const word of words) {
      if (word.terms.length >= SCATTER_FROM) this.#scatter(word, m, count);
      else this.#gather(word, count);
    }
    return count;
  }

  /**
   * Like {@link rank} over `filter` ANDed with every word's docs, when a word has a single term that is not broad and
   * has at most {@link NARROW_PER_WORD} docs per bitset word: its postings in `filter` are the candidates, each
   * other word keeps those that have one of its terms (fewest docs first), and the survivors are ranked as
   * {@link rank} ranks them (the same keys, summed in the same word order). Returns -1 (nothing done) otherwise.
   */
  rankNarrow(words: readonly WordTerms[], filter: Uint32Array): number {
    const offsets = this.#offsets;
    const docs = this.#docs;
    let driver = -1;
    let best = NARROW_PER_WORD * filter.length + 1;
    for (let w = 0; w < words.length; w++) {
      const { terms } = words[w]!;
      if (terms.length >= SCATTER_FROM) return -1;
      const t = terms[0]!;
      const df = offsets[t + 1]! - offsets[t]!;
      if (terms.length === 1 && !this.#broad.has(t) && df < best) {
        driver = w;
        best = df;
      }
    }
    if (driver < 0) return -1;
    const matches = this.matches;
    let count = 0;
    const t = words[driver]!.terms[0]!;
    for (let p = offsets[t]!, end = offsets[t + 1]!; p < end; p++) {
      const d = docs[p]!;
      if ((filter[d >>> 5]! & (1 << (d & 31))) !== 0) matches[count++] = d;
    }
    const others = words.filter((_, w) => w !== driver).sort((a, b) => this.#size(a) - this.#size(b));
    for (const word of others) {
      if (count === 0) break;
      count = this.#keep(word, count);
    }
    this.keys.fill(0, 0, count);
    if (count > 0) for (const word of words) this.#gather(word, count);
    return count;
  }

  /** Postings of a word's terms, in all. */
  #size(word: WordTerms): number {
    let size = 0;
    for (const t of word.terms) size += this.#offsets[t + 1]! - this.#offsets[t]!;
    return size;
  }

  /** Keeps those of matches[0, count) that have one of the word's terms, in order; returns how many. */
  #keep(word: WordTerms, count: number): number {
    const { terms } = word;
    const offsets = this.#offsets;
    const docs = this.#docs;
    const v = terms.length;
    const cursor = new Uint32Array(v);
    const ends = new Uint32Array(v);
    const bits: (Uint32Array | null)[] = [];
    for (let j = 0; j < v; j++) {
      const t = terms[j]!;
      cursor[j] = offsets[t]!;
      ends[j] = offsets[t + 1]!;
      bits.push(this.#broad.has(t) ? this.#broad.bits(t) : null);
    }
    const matches = this.matches;
    let kept = 0;
    for (let i = 0; i < count; i++) {
      const d = matches[i]!;
      for (let j = 0; j < v; j++) {
        const set = bits[j];
        let has: boolean;
        if (set) has = (set[d >>> 5]! & (1 << (d & 31))) !== 0;
        else {
          const at = (cursor[j] = seek(docs, cursor[j]!, ends[j]!, d));
          has = at < ends[j]! && docs[at] === d;
        }
        if (has) {
          matches[kept++] = d;
          break;
        }
      }
    }
    return kept;
  }

  /** Doc by doc: each term's posting found by rank (broad terms) or by a forward cursor. */
  #gather(word: WordTerms, count: number): void {
    const { terms, costs } = word;
    const offsets = this.#offsets;
    const docs = this.#docs;
    const scores = this.#scores;
    const broad = this.#broad;
    const v = terms.length;
    const cursor = new Uint32Array(v);
    const ends = new Uint32Array(v);
    const bits: (Uint32Array | null)[] = [];
    const ranks: (Uint32Array | null)[] = [];
    for (let j = 0; j < v; j++) {
      const t = terms[j]!;
      cursor[j] = offsets[t]!;
      ends[j] = offsets[t + 1]!;
      bits.push(broad.has(t) ? broad.bits(t) : null);
      ranks.push(broad.has(t) ? broad.ranks(t) : null);
    }
    const matches = this.matches;
    const keys = this.keys;
    for (let i = 0; i < count; i++) {
      const d = matches[i]!;
      let best = -Infinity;
      let cost = 256;
      for (let j = 0; j < v; j++) {
        const c = costs[j]!;
        if (c > cost) break;
        let p = -1;
        const set = bits[j];
        if (set) {
          const w = d >>> 5;
          const bit = 1 << (d & 31);
          if ((set[w]! & bit) !== 0) p = offsets[terms[j]!]! + ranks[j]![w]! + popcount(set[w]! & (bit - 1));
        } else {
          let at = cursor[j]!;
          const end = ends[j]!;
          if (at < end && docs[at]! < d) {
            // Gallop forward: postings are ascending, and so are the docs asked for.
            let step = 1;
            let hi = at + 1;
            while (hi < end && docs[hi]! < d) {
              at = hi;
              step <<= 1;
              hi = at + step;
            }
            if (hi > end) hi = end;
            while (at < hi) {
              const mid = (at + hi) >>> 1;
              if (docs[mid]! < d) at = mid + 1;
              else hi = mid;
            }
            cursor[j] = at;
          }
          if (at < end && docs[at] === d) p = at;
        }
        if (p >= 0) {
          cost = c;
          const k = scores[p]! - PENALTY_WEIGHT * c;
          if (k > best) best = k;
        }
      }
      keys[i]! += best;
    }
  }

  /** Term by term, for words with many terms (prefixes): each posting in `m` updates its doc's best. */
  #scatter(word: WordTerms, m: Uint32Array, count: number): void {
    if (this.#epoch === 0xffffffff) {
      this.#stamp.fill(0);
      this.#epoch = 0;
    }
    const epoch = ++this.#epoch;
    const stamp = this.#stamp;
    const best = this.#best;
    const offsets = this.#offsets;
    const docs = this.#docs;
    const scores = this.#scores;
    for (let j = 0; j < word.terms.length; j++) {
      const t = word.terms[j]!;
      const penalty = PENALTY_WEIGHT * word.costs[j]!;
      for (let p = offsets[t]!; p < offsets[t + 1]!; p++) {
        const d = docs[p]!;
        if ((m[d >>> 5]! & (1 << (d & 31))) === 0) continue;
        const k = scores[p]! - penalty;
        if (stamp[d] !== epoch) {
          stamp[d] = epoch;
          best[d] = k;
        } else if (k > best[d]!) best[d] = k;
      }
    }
    const matches = this.matches;
    const keys = this.keys;
    for (let i = 0; i < count; i++) keys[i]! += best[matches[i]!]!;
  }
}
