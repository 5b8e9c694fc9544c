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
