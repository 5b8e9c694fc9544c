// A bounded min-heap of the best k (primary, key, doc) triples: higher primary first, then higher key (relevance),
// then lower doc number. For the sorted orders (price, discount, newest), whose ties fall back to relevance.
import { Bounded } from "./top-k.ts";

export class SortedTopK extends Bounded {
  #primary = new Float64Array(256);
  #key = new Float64Array(256);
  #docs = new Int32Array(256);

  /** Is entry i worse than (p, s, d)? */
  #worse(i: number, p: number, s: number, d: number): boolean {
    const pi = this.#primary[i]!;
    if (pi !== p) return pi < p;
    const si = this.#key[i]!;
    if (si !== s) return si < s;
    return this.#docs[i]! > d;
  }

  #set(i: number, p: number, s: number, d: number): void {
    this.#primary[i] = p;
    this.#key[i] = s;
    this.#docs[i] = d;
  }

  #move(to: number, from: number): void {
    this.#set(to, this.#primary[from]!, this.#key[from]!, this.#docs[from]!);
  }

  #grow(): void {
    const grow = <T extends Float64Array | Int32Array>(a: T, make: (n: number) => T): T => {
      const b = make(a.length * 2);
      b.set(a);
      return b;
    };
    this.#primary = grow(this.#primary, (n) => new Float64Array(n));
    this.#key = grow(this.#key, (n) => new Float64Array(n));
    this.#docs = grow(this.#docs, (n) => new Int32Array(n));
  }

  /** Offers one entry (any order of docs). */
  offer(primary: number, key: number, doc: number): void {
    if (this.size < this.limit) {
      if (this.size === this.#docs.length) this.#grow();
      let i = this.size++;
      while (i > 0) {
        const parent = (i - 1) >>> 1;
        // The root is the worst: stop once the parent is worse than the new entry.
        if (this.#worse(parent, primary, key, doc)) break;
        this.#move(i, parent);
        i = parent;
      }
      this.#set(i, primary, key, doc);
      return;
    }
    if (this.limit === 0 || !this.#worse(0, primary, key, doc)) return;
    this.#siftDown(primary, key, doc, this.size);
  }

  #siftDown(p: number, s: number, d: number, n: number): void {
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      const right = child + 1;
      if (right < n && this.#worse(right, this.#primary[child]!, this.#key[child]!, this.#docs[child]!)) child = right;
      if (!this.#worse(child, p, s, d)) break;
      this.#move(i, child);
      i = child;
    }
    this.#set(i, p, s, d);
  }

  /** Ranks [start, size) of the kept entries, best first (pops the worst ones). */
  page(start: number): number[] {
    const out: number[] = [];
    while (this.size > start) {
      out.push(this.#docs[0]!);
      const last = --this.size;
      if (last > 0) this.#siftDown(this.#primary[last]!, this.#key[last]!, this.#docs[last]!, last);
    }
    return out.reverse();
  }
}
