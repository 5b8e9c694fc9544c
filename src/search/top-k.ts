// A bounded min-heap keeping the best k (score, doc) pairs: higher score first, then lower doc number.

/** What the top-k heaps share (TopK, and SortedTopK in sorted-top-k.ts): how many entries they keep and hold. */
export class Bounded {
  /** How many entries are kept at most (the k of top-k). */
  protected limit = 0;
  size = 0;

  /** Empties the heap and sets how many entries it keeps. Storage grows only as entries arrive. */
  reset(k: number): void {
    this.limit = k;
    this.size = 0;
  }
}

export class TopK extends Bounded {
  #scores = new Float64Array(256);
  #docs = new Int32Array(256);

  #grow(): void {
    const scores = new Float64Array(this.#scores.length * 2);
    const docs = new Int32Array(this.#docs.length * 2);
    scores.set(this.#scores);
    docs.set(this.#docs);
    this.#scores = scores;
    this.#docs = docs;
  }

  /** Offers one entry; docs must come in ascending doc order (so that an equal score never displaces). */
  offer(score: number, doc: number): void {
    if (this.size < this.limit) {
      if (this.size === this.#scores.length) this.#grow();
      const scores = this.#scores;
      const docs = this.#docs;
      // Sift up: the root is the worst entry (lowest score, then highest doc).
      let i = this.size++;
      while (i > 0) {
        const parent = (i - 1) >>> 1;
        const ps = scores[parent]!;
        if (ps < score || (ps === score && docs[parent]! > doc)) break;
        scores[i] = ps;
        docs[i] = docs[parent]!;
        i = parent;
      }
      scores[i] = score;
      docs[i] = doc;
      return;
    }
    if (this.limit === 0 || score <= this.#scores[0]!) return;
    this.#siftDown(score, doc, this.size);
  }

  /**
   * Offers (scores[i], docs[i]) for i in [0, count), docs ascending: as many {@link offer} calls, with the entries
   * that cannot get in (not above the worst kept once k are kept: most of them) turned away in this loop.
   */
  offerAll(scores: Float64Array, docs: Uint32Array, count: number): void {
    const k = this.limit;
    if (k === 0) return;
    let i = 0;
    for (; i < count && this.size < k; i++) this.offer(scores[i]!, docs[i]!);
    let worst = this.#scores[0]!;
    for (; i < count; i++) {
      const score = scores[i]!;
      if (score <= worst) continue;
      this.#siftDown(score, docs[i]!, this.size);
      worst = this.#scores[0]!;
    }
  }

  /** Puts (score, doc) at the root and sifts it down within the first n entries. */
  #siftDown(score: number, doc: number, n: number): void {
    const scores = this.#scores;
    const docs = this.#docs;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      const right = child + 1;
      if (
        right < n &&
        (scores[right]! < scores[child]! || (scores[right] === scores[child] && docs[right]! > docs[child]!))
      ) {
        child = right;
      }
      const cs = scores[child]!;
      if (cs < score || (cs === score && docs[child]! > doc)) {
        scores[i] = cs;
        docs[i] = docs[child]!;
        i = child;
      } else break;
    }
    scores[i] = score;
    docs[i] = doc;
  }

  /** Removes and returns the worst entry's doc (call only while size > 0). */
  popWorst(): number {
    const worst = this.#docs[0]!;
    const last = --this.size;
    if (last > 0) this.#siftDown(this.#scores[last]!, this.#docs[last]!, last);
    return worst;
  }

  /**
   * Ranks [start, size) of the kept entries, best first, by popping the worst ones: only the page is
   * ordered, so a deep page costs no more than its length times log k.
   */
  page(start: number): number[] {
    const out: number[] = [];
    while (this.size > start) out.push(this.popWorst());
    return out.reverse();
  }
}
