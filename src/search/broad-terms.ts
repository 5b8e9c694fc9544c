// Broad terms ("dress", "black"): postings pre-sorted best first and a bitset, so a one-word query that matches
// tens of thousands of products reads only its page and counts its total with a bitset intersection.
import { countAnd, rankDirectory, setDocs } from "./bitset.ts";

const DIGIT_BITS = 11;
const DIGIT_MASK = (1 << DIGIT_BITS) - 1;

/**
 * Positions 0..df-1 of a posting list ordered by descending score, ties by ascending position: a stable LSD
 * radix sort on the complemented float32 bit patterns (positive floats order like their bits).
 */
function bestFirst(scoreBits: Uint32Array, from: number, df: number, count: Uint32Array): Uint32Array {
  let src = new Uint32Array(df);
  let dst = new Uint32Array(df);
  for (let i = 0; i < df; i++) src[i] = i;
  for (let shift = 0; shift < 32; shift += DIGIT_BITS) {
    count.fill(0);
    for (let i = 0; i < df; i++) count[(((~scoreBits[from + src[i]!]! >>> 0) >>> shift) & DIGIT_MASK) + 1]!++;
    for (let b = 1; b < count.length; b++) count[b]! += count[b - 1]!;
    for (let i = 0; i < df; i++) {
      const p = src[i]!;
      dst[count[((~scoreBits[from + p]! >>> 0) >>> shift) & DIGIT_MASK]!++] = p;
    }
    [src, dst] = [dst, src];
  }
  return src;
}

/**
 * For every term with at least `minDf` docs: the term's postings by descending score, ties by ascending doc
 * (as positions within its posting list), the set of its docs, and that set's rank directory. Built once at load.
 */
export class BroadTerms {
  readonly #order: (Uint32Array | null)[];
  readonly #bits: (Uint32Array | null)[];
  readonly #ranks: (Uint32Array | null)[];

  constructor(offsets: Uint32Array, docs: Uint32Array, scores: Float32Array, words: number, minDf: number) {
    const terms = offsets.length - 1;
    this.#order = new Array<Uint32Array | null>(terms).fill(null);
    this.#bits = new Array<Uint32Array | null>(terms).fill(null);
    this.#ranks = new Array<Uint32Array | null>(terms).fill(null);
    const scoreBits = new Uint32Array(scores.buffer, scores.byteOffset, scores.length);
    const count = new Uint32Array(DIGIT_MASK + 2);
    for (let t = 0; t < terms; t++) {
      const from = offsets[t]!;
      const df = offsets[t + 1]! - from;
      if (df < minDf) continue;
      this.#order[t] = bestFirst(scoreBits, from, df, count);
      const bits = new Uint32Array(words);
      setDocs(bits, docs, from, from + df);
      this.#bits[t] = bits;
      this.#ranks[t] = rankDirectory(bits);
    }
  }

  /** Is term t broad (answerable by {@link page})? */
  has(t: number): boolean {
    return this.#order[t] !== null;
  }

  /** The set of term t's docs (only for a broad term; read-only). */
  bits(t: number): Uint32Array {
    return this.#bits[t]!;
  }

  /**
   * Rank directory of a broad term's doc set: the posting of doc d (which must have the term) is at
   * offsets[t] + ranks[d >>> 5] + popcount(bits[d >>> 5] & ((1 << (d & 31)) - 1)).
   */
  ranks(t: number): Uint32Array {
    return this.#ranks[t]!;
  }

  /** How many of term t's docs are in `filter`. */
  total(t: number, filter: Uint32Array): number {
    return countAnd(this.#bits[t]!, filter);
  }

  /** Doc numbers at ranks [start, start + rows) among term t's docs that are in `filter`, best first. */
  page(t: number, offsets: Uint32Array, docs: Uint32Array, filter: Uint32Array, start: number, rows: number): number[] {
    const order = this.#order[t]!;
    const from = offsets[t]!;
    const out: number[] = [];
    const end = start + rows;
    let rank = 0;
    for (let i = 0; i < order.length && rank < end; i++) {
      const d = docs[from + order[i]!]!;
      if ((filter[d >>> 5]! & (1 << (d & 31))) === 0) continue;
      if (rank >= start) out.push(d);
      rank++;
    }
    return out;
  }
}
