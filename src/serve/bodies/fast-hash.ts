// Small non-cryptographic hashes for ETags made per request (search pages, affid/JSONP variants), where a sha256
// would cost more than the rest of the tag's work: they only have to tell apart the versions of one URL's body.

/** FNV-1a over UTF-16 code units, from `seed` (default FNV's offset basis). */
export function fnv1a(s: string, seed = 0x811c9dc5): number {
  let h = seed;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h | 0;
}

export const rotl = (x: number, r: number) => (x << r) | (x >>> (32 - r));

/** murmur3's finalizer: every input bit reaches every output bit. */
export function fmix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Eight hex digits. */
export const hex8 = (n: number) => n.toString(16).padStart(8, "0");

/**
 * A bounded memory of keys asked for once, for caches that keep only what is asked for again: `seenBefore(key)` says
 * whether `key` was asked for since its slot last changed hands, and forgets it when it was (the caller keeps it from
 * then on). A key's slot (of `slots`, a power of two) holds a fingerprint of it; a later key in the same slot takes it
 * over, so the table forgets old keys as new ones arrive, in 4 bytes a slot, with no string kept per request.
 */
export function createSeenOnce(slots: number): (key: string) => boolean {
  if (!Number.isInteger(Math.log2(slots))) throw new Error(`slots must be a power of two: ${slots}`);
  const seen = new Int32Array(slots);
  return (key) => {
    const h = fnv1a(key);
    const slot = h & (slots - 1);
    const fingerprint = fmix(h) | 1; // never 0, an empty slot
    const before = seen[slot] === fingerprint;
    seen[slot] = before ? 0 : fingerprint;
    return before;
  };
}
