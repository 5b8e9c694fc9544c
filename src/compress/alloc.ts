// Where a body's bytes are made: memory of its own for a body that is kept, or a buffer lent for one response (the
// server's scratch buffers, src/serve/bodies/scratch.ts). Every function here that makes bytes takes an Alloc.

/** Makes a buffer of `size` bytes, contents undefined. */
export type Alloc = (size: number) => Buffer;

/** A buffer for a body that is kept (Buffer.allocUnsafe): the default wherever an Alloc is taken. */
export const allocKept: Alloc = (size) => Buffer.allocUnsafe(size);

/**
 * `bytes` in memory shared with nothing else, exactly its size (a copy unless it already is). zlib's output is a
 * slice of a larger chunk, and a Buffer under 4 KB is a slice of a shared 8 KB pool slab: a cache holding the slice
 * keeps the whole chunk alive while counting only the slice, so a "64 MB" cache of small variants held over 600 MB.
 */
export function unshared(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length) return bytes;
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(copy);
  return copy;
}
