// A least-recently-used map bounded by the bytes its values hold: the variant cache and the gzip templates.
/** A least-recently-used cache bounded by the bytes its values hold (as they report them). */
export class ByteLru<V> {
  private readonly map = new Map<string, { value: V; size: number }>();
  private total = 0;
  /** The entry last set or moved to the end of `map` (the most recent), if it is still there. */
  private newest: { value: V; size: number } | null = null;
  private readonly maxBytes: number;
  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.total;
  }

  get size(): number {
    return this.map.size;
  }

  get(key: string): V | undefined {
    const entry = this.map.get(key);
    if (!entry) return undefined;
    // Already the most recent (a run of asks for one entry, as for a list's template): nothing to move.
    if (entry !== this.newest) {
      this.map.delete(key);
      this.map.set(key, entry);
      this.newest = entry;
    }
    return entry.value;
  }

  set(key: string, value: V, size: number): void {
    const old = this.map.get(key);
    if (old) {
      this.total -= old.size;
      this.map.delete(key);
    }
    const entry = { value, size };
    this.map.set(key, entry);
    this.newest = entry;
    this.total += size;
    this.evict();
  }

  /** `key`'s value (if it is still `value`) holds `bytes` more. */
  grow(key: string, value: V, bytes: number): void {
    const entry = this.map.get(key);
    if (entry?.value !== value) return;
    entry.size += bytes;
    this.total += bytes;
    this.evict();
  }

  private evict(): void {
    for (const [key, entry] of this.map) {
      if (this.total <= this.maxBytes) break;
      this.map.delete(key);
      this.total -= entry.size;
      if (entry === this.newest) this.newest = null;
    }
  }
}
