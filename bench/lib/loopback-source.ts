// The loopback address a benchmark's event-stream client connects from, one per key: all of 127.0.0.0/8 is loopback
// (on Linux, with no setup), so the streams of a benchmark's hundreds of keys come from as many addresses, as a
// server's real clients would, and each address stays under the server's cap of streams per client address
// (src/serve/events/caps.ts) as each key stays under its cap per key.

/** An address of 127.0.0.0/8 for `key` (FNV-1a of it): the same every time, and unlikely to be another key's. */
export function loopbackSource(key: string): string {
  let h = 2166136261;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619) >>> 0;
  return `127.${1 + (h % 254)}.${1 + ((h >>> 8) % 254)}.${1 + ((h >>> 16) % 254)}`;
}
