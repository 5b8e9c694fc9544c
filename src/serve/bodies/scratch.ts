// Buffers for bodies made for one response (a new affid's gzip, a search page), used again once the response is
// written. A fresh 40 KB buffer per response cost more than everything else the response did: node:http sending
// 40 KB took 61-67 us a request from a new buffer each time against 27-28 us from a reused one (measured here; the
// difference is page faults and the collections that external memory brings on).
const MIN_SIZE = 4 * 1024; // below this node's own pool already reuses memory
const MAX_SIZE = 4 * 1024 * 1024; // above this a buffer is not kept
/** Bytes of free buffers kept at most: what was not reused by then is left to the collector. */
export const SCRATCH_MAX_BYTES = 16 * 1024 * 1024;

const free = new Map<number, ArrayBufferLike[]>();
const made = new WeakSet<ArrayBufferLike>();
const isFree = new WeakSet<ArrayBufferLike>();
let held = 0;

/**
 * A buffer of `size` bytes (contents undefined) for a body that is sent once and then given back with `release`: an
 * Alloc (src/compress/alloc.ts) for bodies made for one response.
 */
export function allocScratch(size: number): Buffer {
  if (size < MIN_SIZE || size > MAX_SIZE) return Buffer.allocUnsafe(size);
  const capacity = 2 ** Math.ceil(Math.log2(size));
  const reused = free.get(capacity)?.pop();
  if (reused) {
    held -= capacity;
    isFree.delete(reused);
    return Buffer.from(reused, 0, size);
  }
  const memory = Buffer.allocUnsafeSlow(capacity);
  made.add(memory.buffer);
  return memory.subarray(0, size);
}

/** Whether `buf` came from `allocScratch` (and so must be given back only once nothing reads it any more). */
export function isScratch(buf: Buffer): boolean {
  return made.has(buf.buffer);
}

/** Gives back a buffer from `allocScratch` whose bytes nothing will read again (its response has been written). */
export function release(buf: Buffer): void {
  const memory = buf.buffer;
  if (!made.has(memory) || isFree.has(memory) || held + memory.byteLength > SCRATCH_MAX_BYTES) return;
  let list = free.get(memory.byteLength);
  if (!list) free.set(memory.byteLength, (list = []));
  list.push(memory);
  isFree.add(memory);
  held += memory.byteLength;
}

/** Bytes of free buffers held (at most SCRATCH_MAX_BYTES). */
export function scratchBytes(): number {
  return held;
}
