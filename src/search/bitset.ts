// Fixed-size bitsets over doc numbers, as Uint32Array words, for filters.

/** 32-bit words needed for n docs. */
export const wordsFor = (n: number): number => (n + 31) >>> 5;

/** Sets the bits of docs[from, to). */
export function setDocs(bits: Uint32Array, docs: Uint32Array, from: number, to: number): void {
  for (let p = from; p < to; p++) {
    const d = docs[p]!;
    bits[d >>> 5]! |= 1 << (d & 31);
  }
}

/** target &= other, word by word (same length). */
export function andInto(target: Uint32Array, other: Uint32Array): void {
  for (let i = 0; i < target.length; i++) target[i]! &= other[i]!;
}

/** target = a & b, word by word (same length; target may be either). */
export function andOf(target: Uint32Array, a: Uint32Array, b: Uint32Array): void {
  for (let i = 0; i < target.length; i++) target[i] = a[i]! & b[i]!;
}

/** target |= other, word by word (same length). */
export function orInto(target: Uint32Array, other: Uint32Array): void {
  for (let i = 0; i < target.length; i++) target[i]! |= other[i]!;
}

/** First index in docs[lo, hi) whose value is >= target (hi if none): galloping, then binary search. */
export function seek(docs: Uint32Array, lo: number, hi: number, target: number): number {
  if (lo >= hi || docs[lo]! >= target) return lo;
  let step = 1;
  let prev = lo;
  let probe = lo + 1;
  while (probe < hi && docs[probe]! < target) {
    prev = probe;
    step <<= 1;
    probe = lo + step;
  }
  let left = prev + 1;
  let right = probe < hi ? probe : hi;
  while (left < right) {
    const mid = (left + right) >>> 1;
    if (docs[mid]! < target) left = mid + 1;
    else right = mid;
  }
  return left;
}

/** Number of set bits in a 32-bit word. */
export function popcount(word: number): number {
  let x = word - ((word >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

/** |a AND b|: the number of docs in both sets (same length). */
export function countAnd(a: Uint32Array, b: Uint32Array): number {
  let count = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]! & b[i]!;
    if (x !== 0) count += popcount(x);
  }
  return count;
}

/** prefix[w] = how many bits are set in words 0..w-1: with it, a doc's rank in the set is O(1). */
export function rankDirectory(bits: Uint32Array): Uint32Array {
  const prefix = new Uint32Array(bits.length);
  let count = 0;
  for (let w = 0; w < bits.length; w++) {
    prefix[w] = count;
    count += popcount(bits[w]!);
  }
  return prefix;
}

/** The docs of a set, ascending, into `out`; returns how many. */
export function listDocs(set: Uint32Array, out: Uint32Array): number {
  let count = 0;
  for (let w = 0; w < set.length; w++) {
    let x = set[w]!;
    while (x !== 0) {
      const low = x & -x;
      x ^= low;
      out[count++] = (w << 5) | (31 - Math.clz32(low));
    }
  }
  return count;
}
